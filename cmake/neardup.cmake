# How the tests are compiled. Almost half of a build's compile time went to the tests' 76
# translation units: optimizing TEST bodies at the build type's level, and parsing GoogleTest
# and the standard headers again in each. The test binaries are compiled at -O1 (the code under
# test is in the libraries, at the build type's level) and share one precompiled header of
# GoogleTest and the standard headers they use most (`neardup_test_pch`). A Release build from
# scratch on 2 cores, alternated with the build before this: 365 and 419 s against 520 and
# 465 s (680 and 781 CPU s against 981 and 875); the sanitized tree 516 and 556 s against 613.
# The unit tests run as long (69-77 s against 69 s).
if(NEARDUP_TESTS)
  set(NEARDUP_TEST_OPTIONS -O1)
  # GCC 12 at -O1 warns of out-of-bounds copies inside std::string's operator+ that cannot
  # happen (its inlined small-string branch); clang's sanitized tree keeps the check.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    list(APPEND NEARDUP_TEST_OPTIONS -Wno-array-bounds -Wno-stringop-overflow -Wno-restrict)
  endif()
  # The sanitized tree instruments everything for libFuzzer's coverage (fuzzer-no-link), which
  # the fuzz targets need in the code they reach and a test binary does not: a seventh to a
  # quarter of a test's compile time there (column_test.cc, config_test.cc).
  if(CMAKE_CXX_FLAGS MATCHES "fuzzer-no-link")
    list(APPEND NEARDUP_TEST_OPTIONS -fno-sanitize=fuzzer-no-link)
  endif()
  # An executable, so that its header is compiled as the tests are (-fPIE, not a library's -fPIC).
  add_executable(neardup_test_pch ${PROJECT_SOURCE_DIR}/cmake/test_pch.cc)
  target_link_libraries(neardup_test_pch PRIVATE GTest::gtest GTest::gtest_main)
  target_compile_definitions(neardup_test_pch PRIVATE NEARDUP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_compile_options(neardup_test_pch PRIVATE ${NEARDUP_TEST_OPTIONS})
  target_precompile_headers(neardup_test_pch PRIVATE
    <gtest/gtest.h> <algorithm> <chrono> <cstdint> <cstring> <expected> <filesystem>
    <functional> <map> <memory> <optional> <span> <string> <string_view> <thread>
    <unordered_map> <utility> <vector>)
endif()

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
  target_compile_options(${name} PRIVATE ${NEARDUP_TEST_OPTIONS})
  target_precompile_headers(${name} REUSE_FROM neardup_test_pch)
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES ENVIRONMENT "NEARDUP_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
