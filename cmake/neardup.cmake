# neardup_test(NAME SOURCES... LIBS...): a GoogleTest binary beside the code it tests; nothing
# when the tests are off (NEARDUP_TESTS).
function(neardup_test name)
  if(NOT NEARDUP_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "NEARDUP_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
