# Runs at install time (install(SCRIPT) from systemd/CMakeLists.txt, after every other install
# rule): installs the unit with the paths of this install, the sysusers file and, unless one
# exists, the config. CMAKE_INSTALL_PREFIX is the prefix in effect now; file(INSTALL) adds
# DESTDIR itself, the existence checks add it by hand.

# GNUInstallDirs' rule: the /usr prefix keeps its configuration in /etc.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(etc "/etc")
else()
  set(etc "${CMAKE_INSTALL_PREFIX}/etc")
endif()
set(NEARDUPD_EXECUTABLE "${CMAKE_INSTALL_PREFIX}/${NEARDUP_SBINDIR}/neardupd")
set(NEARDUP_CONFIG_FILE "${etc}/neardup/neardup.yaml")

# The single-process unit, and the template of the scaled-out roles (neardupd@index.service,
# neardupd@fingerprint.service) from the same file.
set(NEARDUPD_ROLE "")
set(NEARDUPD_DESCRIPTION "")
configure_file("${NEARDUP_UNIT_TEMPLATE}" "${NEARDUP_STAGING_DIR}/neardupd.service" @ONLY)
set(NEARDUPD_ROLE " --role %i")
set(NEARDUPD_DESCRIPTION " (%i role)")
configure_file("${NEARDUP_UNIT_TEMPLATE}" "${NEARDUP_STAGING_DIR}/neardupd@.service" @ONLY)
file(INSTALL "${NEARDUP_STAGING_DIR}/neardupd.service" "${NEARDUP_STAGING_DIR}/neardupd@.service"
     DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
file(INSTALL "${NEARDUP_SYSUSERS}" DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/sysusers.d")

# The config is the operator's once installed: a re-install must not overwrite their edits.
if(EXISTS "$ENV{DESTDIR}${NEARDUP_CONFIG_FILE}")
  message(STATUS "Keeping existing: $ENV{DESTDIR}${NEARDUP_CONFIG_FILE}")
else()
  file(INSTALL "${NEARDUP_EXAMPLE_CONFIG}" DESTINATION "${etc}/neardup")
endif()

if(NEARDUP_CHECK_DAEMON AND NOT EXISTS "$ENV{DESTDIR}${NEARDUPD_EXECUTABLE}")
  message(FATAL_ERROR "neardupd.service runs ${NEARDUPD_EXECUTABLE}, which was not installed")
endif()
