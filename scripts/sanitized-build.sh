#!/usr/bin/env bash
# Configures and builds the tree with clang 16, AddressSanitizer, UndefinedBehaviorSanitizer and
# libFuzzer's coverage instrumentation into DIR (default build-sanitize/). Its tests run under
# the sanitizers (scripts/sanitize.sh) and its fuzz/ holds the libFuzzer binaries
# (scripts/fuzz.sh): one tree for both.
#
#   scripts/sanitized-build.sh [DIR [TARGET...]]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-sanitize}
shift || true

for tool in clang++-16; do
  command -v "$tool" > /dev/null || {
    echo "sanitized-build.sh: $tool is missing: apt install clang-16 libclang-rt-16-dev" >&2
    exit 2
  }
done

# libstdc++ 12's <expected> needs __cpp_concepts >= 202002, which clang 16 implements but does
# not announce. -O1 -g1: quick to build, and reports still name files and lines.
flags="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined"
flags+=" -fno-omit-frame-pointer -D__cpp_concepts=202002L -Wno-macro-redefined"
# Clang also checks the locks (common/thread_annotations.h): CMakeLists.txt adds -Wthread-safety
# for clang, an error under the -Werror every build has.
echo "sanitized-build: clang++-16 -fsanitize=address,undefined -Wthread-safety -Werror into $dir"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DNEARDUP_FUZZ=ON -DNEARDUP_PYTHON=OFF -DNEARDUP_SANITIZE_TEST=OFF -DNEARDUP_BENCH=OFF \
  > "$dir.log"
if [ $# -gt 0 ]; then
  cmake --build "$dir" --target "$@"
else
  cmake --build "$dir"
fi
checked=$(grep -c -- '-Wthread-safety' "$dir/compile_commands.json" || true)
werror=$(grep -- '-Wthread-safety' "$dir/compile_commands.json" | grep -c -- '-Werror' || true)
echo "sanitized-build: $checked translation units compiled with -Wthread-safety, $werror of them with -Werror"
