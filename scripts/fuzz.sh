#!/usr/bin/env bash
# Builds the fuzz targets (fuzz/README.md) with clang 16, libFuzzer, ASan and UBSan
# (scripts/sanitized-build.sh) and runs each for SECONDS on a working copy of its committed
# corpus. Crashes, timeouts (10 s) and out-of-memory inputs (2 GiB) are written, minimised, to
# BUILD/artifacts/; the script exits 1 if there is any.
#
#   scripts/fuzz.sh [--build-dir DIR] [--jobs N] [SECONDS] [TARGET...]
#       DIR: the sanitized tree (default build-sanitize); N: targets run at once (default 1);
#       SECONDS: default 60; TARGET: default every target
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-sanitize
jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) dir=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) break ;;
  esac
done
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(record_fuzz page_fuzz config_fuzz warc_fuzz fingerprinted_fuzz line_reader_fuzz
                                       http_request_fuzz)

scripts/sanitized-build.sh "$dir" "${targets[@]}"
mkdir -p "$dir/artifacts"

# Runs one target; its exit status goes to $dir/<target>.status.
run() {
  local target=$1 name=${1%_fuzz}
  local work=$dir/corpus/$name log=$dir/$target.log
  mkdir -p "$work"
  cp -n fuzz/corpus/$name/* "$work"/ 2> /dev/null || true
  [ "$name" = page ] && cp -n samples/pages/* "$work"/
  echo "fuzz.sh: $target for ${seconds}s"
  local status=0
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
    "$dir/fuzz/$target" "$work" fuzz/corpus/$name -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
    -artifact_prefix="$dir/artifacts/$target-" > "$log" 2>&1 || status=$?
  local runs rate
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'exec/s: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  echo "fuzz.sh: $target exit $status, $runs runs, ${rate} exec/s, corpus $(ls "$work" | wc -l) inputs"
  if [ $status -ne 0 ]; then
    for artifact in "$dir/artifacts/$target-"*; do
      [ -e "$artifact" ] || continue
      case "$artifact" in *.min) continue ;; esac
      "$dir/fuzz/$target" -minimize_crash=1 -runs=10000 "$artifact" \
        -exact_artifact_path="$artifact.min" > /dev/null 2>&1 || true
      echo "fuzz.sh: $artifact (minimised: $artifact.min)"
    done
    tail -30 "$log"
  fi
  echo $status > "$dir/$target.status"
}

for target in "${targets[@]}"; do
  run "$target" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
done
wait
failed=0
for target in "${targets[@]}"; do
  [ "$(cat "$dir/$target.status")" = 0 ] || failed=1
done
exit $failed
