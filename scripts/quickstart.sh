#!/usr/bin/env bash
# The quick start: install dependencies, build, then run the main job on the bundled sample
# crawl: a development Kafka broker, neardupd reading pages from it and publishing tagged
# pages back, and a summary of what was tagged. Stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build

neardup=build/cli/neardup
neardupd=build/daemon/neardupd
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

echo
echo "== neardup compare: one article on two sites (a, b), and another article (c)"
"$neardup" compare samples/pages/a.html samples/pages/b.html || true
"$neardup" compare samples/pages/a.html samples/pages/c.html || true

pages=$(zcat samples/crawl.jsonl.gz | wc -l)
echo
echo "== development broker (librdkafka's mock cluster on loopback)"
"$neardup" broker --topic pages:4 --topic pages-tagged:4 --topic pages-dead:1 \
  --bootstrap-file "$work/bootstrap" > /dev/null 2> "$work/broker.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/bootstrap" ] && break; sleep 0.1; done
bootstrap=$(cat "$work/bootstrap")
echo "bootstrap servers: $bootstrap"

cat > "$work/neardup.yaml" <<YAML
kafka:
  bootstrap_servers: "$bootstrap"
  group_id: neardup-quickstart
  input_topic: pages
  output_topic: pages-tagged
  dead_letter_topic: pages-dead
store:
  path: "$work/index"
  expected_documents: 100000
metrics:
  listen: ""
YAML

echo
echo "== neardupd --config $work/neardup.yaml"
"$neardupd" --config "$work/neardup.yaml" 2> "$work/neardupd.log" &
daemon=$!
pids=("$daemon" "${pids[@]}")

echo "== feeding $pages pages to topic 'pages'"
zcat samples/crawl.jsonl.gz | "$neardup" produce --bootstrap "$bootstrap" --topic pages --key-field url
if ! "$neardup" consume --bootstrap "$bootstrap" --topic pages-tagged --count "$pages" \
    --timeout 60 --out "$work/tagged.jsonl"; then
  echo "quickstart: fewer tagged pages than fed; neardupd's log:" >&2
  tail -20 "$work/neardupd.log" >&2
  exit 1
fi

kill -TERM "$daemon"
status=0
wait "$daemon" || status=$?
echo "neardupd stopped (exit $status)"

echo
echo "== what neardupd tagged (pages-tagged topic)"
python3 scripts/summarize.py "$work/tagged.jsonl" --truth samples/crawl-truth.jsonl
