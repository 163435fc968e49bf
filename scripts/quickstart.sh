#!/usr/bin/env bash
# The quick start: install dependencies, build, and run neardup over the bundled sample crawl.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build

neardup=build/cli/neardup
echo
echo "== neardup compare: one article on two sites (a, b), and another article (c)"
"$neardup" compare samples/pages/a.html samples/pages/b.html || true
"$neardup" compare samples/pages/a.html samples/pages/c.html || true

echo
echo "== neardup dedup over the sample crawl ($(zcat samples/crawl.jsonl.gz | wc -l) pages, planted duplicates)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
zcat samples/crawl.jsonl.gz | "$neardup" dedup --store "$work/index" --out "$work/tagged.jsonl"
python3 scripts/summarize.py "$work/tagged.jsonl" --truth samples/crawl-truth.jsonl
