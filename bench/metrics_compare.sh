#!/usr/bin/env bash
# The metrics of this tree against those of an earlier revision, on the same benchmark
# (bench/metrics_bench.cc): the earlier revision's ops/metrics.h, ops/metrics.cc and
# ops/process_metrics.cc are compiled with this tree's bench, flags and compiler, then the two
# binaries run in turn, RUNS times each, and the medians are printed side by side.
#
#   bench/metrics_compare.sh BUILD_DIR REVISION [RUNS]
#
# e.g. bench/metrics_compare.sh build 0206ab6 5 compares with the hand-written registry that
# preceded prometheus-cpp. BUILD_DIR is a configured Release build of this tree (its
# metrics_bench is brought up to date first). Results: bench/RESULTS.md ("Metrics").
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
build=$(cd "$1" && pwd)
revision=$2
runs=${3:-5}
tree=$(cd "$(dirname "$0")/.." && pwd)

cmake --build "$build" --target metrics_bench >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ops"
for file in ops/metrics.h ops/metrics.cc ops/process_metrics.cc; do
  git -C "$tree" show "$revision:$file" >"$work/$file"
done
compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:FILEPATH=//p' "$build/CMakeCache.txt")
version=$(git -C "$tree" describe --always "$revision")
# The earlier ops/ headers first, so that #include "ops/metrics.h" finds them.
"$compiler" -std=c++23 -O3 -DNDEBUG -fno-semantic-interposition \
  -DNEARDUP_VERSION="\"$version\"" -I"$work" -I"$tree" \
  "$tree/bench/metrics_bench.cc" "$work/ops/metrics.cc" "$work/ops/process_metrics.cc" \
  -o "$work/metrics_bench_old" -lbenchmark -lpthread

for run in $(seq 1 "$runs"); do
  echo "run $run/$runs" >&2
  "$work/metrics_bench_old" --benchmark_format=json >"$work/old.$run.json" 2>/dev/null
  "$build/bench/metrics_bench" --benchmark_format=json >"$work/new.$run.json" 2>/dev/null
done

python3 - "$work" "$runs" "$revision" <<'EOF'
import json, statistics, sys

work, runs, revision = sys.argv[1], int(sys.argv[2]), sys.argv[3]
times = {}
for side in ("old", "new"):
    for run in range(1, runs + 1):
        with open(f"{work}/{side}.{run}.json") as f:
            for b in json.load(f)["benchmarks"]:
                times.setdefault(b["name"], {}).setdefault(side, []).append(b["real_time"])
print(f"ns per iteration (google benchmark's real_time): median of {runs} alternated runs "
      f"[min-max]")
print(f"{'benchmark':<32} {revision:>26} {'this tree':>26} {'ratio':>6}")
for name, sides in times.items():
    old, new = statistics.median(sides["old"]), statistics.median(sides["new"])
    cells = [f"{statistics.median(v):.1f} [{min(v):.1f}-{max(v):.1f}]"
             for v in (sides["old"], sides["new"])]
    print(f"{name:<32} {cells[0]:>26} {cells[1]:>26} {new / old:>5.2f}x")
EOF
