# The Debian package (`cpack -G DEB` in the build directory), made from the same install rules
# as `cmake --install`, with prefix /usr: /usr/bin/neardup, /usr/sbin/neardupd, the unit, the
# sysusers file, /etc/neardup/neardup.yaml (a conffile), man pages, bash completion, docs.
# Runtime dependencies come from dpkg-shlibdeps (dpkg-dev); postinst creates the neardup user.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME neardup)
set(CPACK_PACKAGE_VENDOR "neardup")
set(CPACK_PACKAGE_CONTACT "neardup maintainers <neardup@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "streaming near-duplicate web page detection (Kafka, SimHash, LMDB)")
set(CPACK_PACKAGE_DESCRIPTION
    "neardupd reads crawled pages from Kafka, extracts their main text, fingerprints it with a
64-bit SimHash and tags each page unique, duplicate (of the first page of its cluster) or
skipped, through an exact permuted-table index on LMDB. The neardup command runs the same
pipeline offline over JSON lines and piecewise from the command line.")
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
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "kcat, prometheus")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${PROJECT_SOURCE_DIR}/cmake/deb/conffiles;${PROJECT_SOURCE_DIR}/cmake/deb/postinst;${PROJECT_SOURCE_DIR}/cmake/deb/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
