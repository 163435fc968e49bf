// The translation unit that builds the tests' shared precompiled header (cmake/neardup.cmake,
// neardup_test_pch): no code of its own; the binary it makes runs no tests.
