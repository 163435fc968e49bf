# The Debian package (`cpack -G DEB` in the build directory), made from the same install rules
# as `cmake --install`, with prefix /usr: /usr/bin/neardup, /usr/sbin/neardupd, the unit, the
# sysusers file, /etc/neardup/neardup.yaml (a conffile), man pages, bash completion, docs.
# Runtime dependencies come from dpkg-shlibdeps (dpkg-dev); postinst creates the neardup user.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME neardup)
set(CPACK_PACKAGE_VENDOR "neardup")
# Whoever builds a package for others names themselves here (Debian policy 3.3: a name and a
# mail address that reaches them).
set(NEARDUP_MAINTAINER "neardup maintainers <neardup@example.org>" CACHE STRING
    "the Maintainer of the .deb: Name <address>")
set(CPACK_PACKAGE_CONTACT "${NEARDUP_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${NEARDUP_MAINTAINER}")
# The package's own revision of the version: a Debian revision makes it a non-native package,
# whose changelog is changelog.Debian.gz.
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(NEARDUP_DEB_VERSION "${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "streaming near-duplicate web page detection (Kafka, SimHash, MinHash, LMDB)")
set(CPACK_PACKAGE_DESCRIPTION
    "neardupd reads crawled pages from Kafka, extracts their main text and
computes two signatures: a 64-bit SimHash of the whole text and a MinHash
sketch of its word shingles, which also finds partial copies. Through an
index on LMDB (permuted SimHash tables and MinHash LSH bands) it tags each
page unique, duplicate (of the first page of its cluster, with the signature
that found it) or skipped. The neardup command runs the same pipeline offline
over JSON lines or WARC files, and piecewise from the command line.")
set(CPACK_RESOURCE_FILE_LICENSE "${PROJECT_SOURCE_DIR}/LICENSE")
# Absolute destinations (/etc) and the install-time unit generation need DESTDIR staging, in
# which CPack installs with CPACK_INSTALL_PREFIX: /usr whatever the build was configured with.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds the shared libraries the binaries link; prometheus-cpp's core library (the
# metrics, ops/) is named as well.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libprometheus-cpp-core1.0")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "kcat, prometheus")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/cmake/deb/conffiles;${PROJECT_SOURCE_DIR}/cmake/deb/postinst;${PROJECT_SOURCE_DIR}/cmake/deb/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Debian policy 10.1: binaries stripped (the symbols are in the build tree's copies).
set(CPACK_STRIP_FILES ON)

# Debian policy 12.5 and 12.7: a machine-readable copyright file and the Debian changelog,
# compressed with gzip -9n (no name or time stored, so that the bytes are reproducible; the date
# is SOURCE_DATE_EPOCH's when set).
string(TIMESTAMP NEARDUP_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${PROJECT_SOURCE_DIR}/cmake/deb/changelog.in
               ${PROJECT_BINARY_DIR}/deb/changelog.Debian @ONLY)
add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/deb/changelog.Debian.gz
                   COMMAND gzip -9nkf ${PROJECT_BINARY_DIR}/deb/changelog.Debian
                   DEPENDS ${PROJECT_BINARY_DIR}/deb/changelog.Debian)
add_custom_target(neardup_deb_changelog ALL DEPENDS ${PROJECT_BINARY_DIR}/deb/changelog.Debian.gz)
install(FILES ${PROJECT_BINARY_DIR}/deb/changelog.Debian.gz cmake/deb/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
include(CPack)
