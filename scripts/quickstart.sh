#!/usr/bin/env bash
# The quick start: installs what building and running neardup needs (scripts/install-deps.sh
# --runtime, not the test toolchain), builds the two programs it runs (neardup and neardupd,
# without the tests), then runs the main job on the bundled sample crawl: a development Kafka
# broker, neardupd reading pages from it and publishing tagged pages back, and a summary of what
# was tagged. Stops everything it started. The tests need the full set: README, "Quick start".
set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

# Runs a step with its output in a log, shown only when it fails. On a terminal, a build's
# progress ("[12/118]", Ninja's count of steps) stands after the step's name while it runs.
step() {
  local what=$1; shift
  local begun=$SECONDS
  printf '== %s ... ' "$what"
  if ! "$@" 2>&1 | tee "$work/step.log" | show_count "$what"; then
    printf '\r== %s ... failed:\n' "$what"
    tail -40 "$work/step.log"
    exit 1
  fi
  printf '\r== %s ... %d s        \n' "$what" "$((SECONDS - begun))"
}
show_count() {
  if [ -t 1 ]; then
    { grep --line-buffered -o '^\[[0-9]*/[0-9]*\]' || true; } |
      while read -r count; do printf '\r== %s ... %s' "$1" "$count"; done
  else
    cat > /dev/null
  fi
}

step "installing the build's dependencies (apt; scripts/install-deps.sh --runtime)" \
  bash scripts/install-deps.sh --runtime
# A tree configured before (with the tests, say) keeps its options.
configure=(cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release)
[ -f build/CMakeCache.txt ] || configure+=(-DNEARDUP_TESTS=OFF)
step "configuring build/" "${configure[@]}"
step "building neardup and neardupd" cmake --build build --target neardup neardupd

neardup=build/cli/neardup
neardupd=build/daemon/neardupd

echo
echo "== neardup compare: one article on two sites (a, b), and another article (c)"
"$neardup" compare samples/pages/a.html samples/pages/b.html || true
"$neardup" compare samples/pages/a.html samples/pages/c.html || true

pages=$(zcat samples/crawl.jsonl.gz | wc -l)
echo
echo "== the development broker (librdkafka's mock cluster on loopback)"
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
echo "== neardupd --config $work/neardup.yaml (its log: $work/neardupd.log)"
"$neardupd" --config "$work/neardup.yaml" 2> "$work/neardupd.log" &
daemon=$!
pids=("$daemon" "${pids[@]}")

echo "== feeding the $pages pages of samples/crawl.jsonl.gz to topic 'pages'"
"$neardup" produce --bootstrap "$bootstrap" --topic pages --key-field url \
  --in samples/crawl.jsonl.gz
echo "== reading the tagged pages back from 'pages-tagged'"
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

echo
echo "quickstart: done in $((SECONDS - started)) s. Next: build/cli/neardup --help, docs/cli.md;"
echo "the tests need the full toolchain: bash scripts/install-deps.sh (README, \"Quick start\")."
