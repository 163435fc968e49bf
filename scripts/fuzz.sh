#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/README.md) with clang 16, libFuzzer, ASan and UBSan, and runs
# each for SECONDS on a working copy of its committed corpus. Crashes, timeouts (10 s) and
# out-of-memory inputs (2 GiB) are written, minimised, to build-fuzz/artifacts/; the script
# exits 1 if there is any.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (default: 60 s, every target)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(record_fuzz page_fuzz config_fuzz warc_fuzz fingerprinted_fuzz)

for tool in clang-16 clang++-16; do
  command -v "$tool" > /dev/null || {
    echo "fuzz.sh: $tool is missing: apt install clang-16 libclang-rt-16-dev" >&2
    exit 2
  }
done

# libstdc++ 12's <expected> needs __cpp_concepts >= 202002, which clang 16 implements but does
# not announce.
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined,fuzzer-no-link"
flags+=" -fno-sanitize-recover=undefined -D__cpp_concepts=202002L -Wno-macro-redefined"
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DNEARDUP_FUZZ=ON -DNEARDUP_PYTHON=OFF > build-fuzz.log
cmake --build build-fuzz --target "${targets[@]}"

mkdir -p build-fuzz/artifacts
failed=0
for target in "${targets[@]}"; do
  name=${target%_fuzz}
  work=build-fuzz/corpus/$name
  mkdir -p "$work"
  cp -n fuzz/corpus/$name/* "$work"/ 2> /dev/null || true
  [ "$name" = page ] && cp -n samples/pages/* "$work"/
  log=build-fuzz/$target.log
  echo "fuzz.sh: $target for ${seconds}s"
  set +e
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
    build-fuzz/fuzz/$target "$work" fuzz/corpus/$name -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/artifacts/$target- > "$log" 2>&1
  status=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'exec/s: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  echo "fuzz.sh: $target exit $status, $runs runs, ${rate} exec/s, corpus $(ls "$work" | wc -l) inputs"
  if [ $status -ne 0 ]; then
    failed=1
    for artifact in build-fuzz/artifacts/$target-*; do
      [ -e "$artifact" ] || continue
      build-fuzz/fuzz/$target -minimize_crash=1 -runs=10000 "$artifact" \
        -exact_artifact_path="$artifact.min" > /dev/null 2>&1 || true
      echo "fuzz.sh: $artifact (minimised: $artifact.min)"
    done
    tail -30 "$log"
  fi
done
exit $failed
