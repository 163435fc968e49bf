#!/usr/bin/env bash
# Builds the tree with AddressSanitizer and UndefinedBehaviorSanitizer (GCC) into
# build-sanitize/ and runs the test suite there; any sanitizer report fails the run.
#
#   scripts/sanitize.sh            # every test but the end-to-end ones
#   scripts/sanitize.sh --all      # the end-to-end tests too (a real broker per test)
set -euo pipefail
cd "$(dirname "$0")/.."
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# The sanitizers make GCC 12 warn about libstdc++ itself (maybe-uninitialized in <regex>).
flags+=" -Wno-maybe-uninitialized"
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DNEARDUP_PYTHON=OFF > build-sanitize.log
cmake --build build-sanitize
# Leaks are reported too; a report makes the process exit non-zero, which fails its test.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The install tests install the build (and a .deb of it) into the system: not a sanitized one.
select=(-E '^(install_layout|deb_package_installs_and_runs)$')
[ "${1:-}" = "--all" ] || select+=(-LE e2e)
ctest --test-dir build-sanitize --output-on-failure -j2 "${select[@]}"
