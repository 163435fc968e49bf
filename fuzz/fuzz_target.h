// The entry point every fuzz target defines (libFuzzer's convention). Built two ways
// (fuzz/CMakeLists.txt): with clang and -fsanitize=fuzzer for fuzzing (scripts/fuzz.sh), and in
// the normal build with replay_main.cc, which runs the target over its committed corpus so that
// every input that once crashed keeps being tried.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
