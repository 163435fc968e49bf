#!/usr/bin/env bash
# Scores `neardup extract` on the Scrapinghub Article Extraction Benchmark (AEB).
#
# Usage: scripts/eval/aeb.sh DATA_DIR [NEARDUP]
#   DATA_DIR  holds data/extraction/scrapinghub-aeb/ and tools/aeb_score.py
#   NEARDUP     the neardup binary (default: build/cli/neardup)
# Prints the scorer's report (F1, precision, recall, worst pages) and the extraction wall
# time and throughput on stderr. Extra arguments after NEARDUP go to aeb_score.py.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 DATA_DIR [NEARDUP] [aeb_score.py options...]" >&2
  exit 2
fi
data_root=$1
neardup=${2:-build/cli/neardup}
shift $(( $# >= 2 ? 2 : 1 ))
html_dir=$data_root/data/extraction/scrapinghub-aeb/html
scorer=$data_root/tools/aeb_score.py
for f in "$html_dir" "$scorer" "$neardup"; do
  [ -e "$f" ] || { echo "$0: not found: $f" >&2; exit 2; }
done

out=$(mktemp --suffix=.jsonl)
trap 'rm -f "$out"' EXIT
start=$(date +%s.%N)
"$neardup" extract "$html_dir" >"$out"
end=$(date +%s.%N)
bytes=$(cat "$html_dir"/*.html | wc -c)
awk -v s="$start" -v e="$end" -v b="$bytes" 'BEGIN {
  printf "extract: %.1f MB in %.3f s wall = %.1f MB/s\n", b / 1e6, e - s, b / 1e6 / (e - s)
}' >&2
python3 "$scorer" "$out" --per-doc "$@"
