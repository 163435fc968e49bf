#!/usr/bin/env bash
# Runs `neardup dedup` twice over every page of the synthetic-dev crawl, into one store, and
# checks: every page tagged, the second run's output byte-identical to the first, no page
# duplicate_of itself; then scores the duplicate links against the planted clusters.
#
#   scripts/eval/dedup_synthetic.sh DATA_DIR [NEARDUP] [CONFIG]
set -euo pipefail
data_root=${1:?usage: dedup_synthetic.sh DATA_DIR [NEARDUP] [CONFIG]}
neardup=${2:-build/cli/neardup}
config_args=()
[ -n "${3:-}" ] && config_args=(--config "$3")
root="$data_root/data/neardup/synthetic-dev"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$root" > "$work/pages.jsonl" <<'PY'
import base64, json, os, sys
root = sys.argv[1]
for line in open(os.path.join(root, "truth.jsonl"), encoding="utf-8"):
    t = json.loads(line)
    body = open(os.path.join(root, "pages", t["id"] + ".html"), "rb").read()
    print(json.dumps({"url": t["url"], "id": t["id"],
                      "body_base64": base64.b64encode(body).decode("ascii")}))
PY
python3 - "$root" > "$work/truth.jsonl" <<'PY'
import json, os, sys
for line in open(os.path.join(sys.argv[1], "truth.jsonl"), encoding="utf-8"):
    t = json.loads(line)
    print(json.dumps({"id": t["id"], "cluster": t["cluster"]}))
PY

"$neardup" dedup "${config_args[@]}" --store "$work/index" --in "$work/pages.jsonl" --out "$work/run1.jsonl"
"$neardup" dedup "${config_args[@]}" --store "$work/index" --in "$work/pages.jsonl" --out "$work/run2.jsonl"

in=$(wc -l < "$work/pages.jsonl"); out=$(wc -l < "$work/run1.jsonl")
echo "input pages: $in, tagged: $out"
[ "$in" -eq "$out" ] || { echo "FAIL: not every page was tagged"; exit 1; }
if cmp -s "$work/run1.jsonl" "$work/run2.jsonl"; then echo "second run: byte-identical"; else echo "FAIL: second run differs"; exit 1; fi
python3 - "$work/run1.jsonl" <<'PY'
import json, sys
bad = [r["id"] for r in map(json.loads, open(sys.argv[1])) if r["neardup"].get("duplicate_of") == r["id"]]
print(f"duplicate_of itself: {len(bad)}")
sys.exit(1 if bad else 0)
PY
python3 "$(dirname "$0")/../summarize.py" "$work/run1.jsonl" --truth "$work/truth.jsonl" --examples 0
"$neardup" stats --store "$work/index"
