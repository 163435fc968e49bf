#!/usr/bin/env bash
# A real run behind docs/dashboard.png: neardupd on the development broker (`neardup broker`),
# fed synthetic pages with planted near-duplicates (tests/e2e/gen_pages.py) in bursts of varying
# size, a few records that are not pages, one accepted and one rejected reload; Debian's
# prometheus scrapes it every 2 s; then docs/diagrams/dashboard.py evaluates the Grafana
# dashboard's queries on that Prometheus and draws its panels.
#
#   docs/diagrams/dashboard-run.sh BUILD_DIR OUT.png [MINUTES]
#   e.g. PYTHON=venv/bin/python docs/diagrams/dashboard-run.sh build docs/dashboard.png
#
# Needs prometheus (apt install prometheus) and a python3 with matplotlib for the drawing
# ($PYTHON, default python3). MINUTES (default 10) of feeding, then 30 s to drain. The answers
# Prometheus gave are kept beside the picture (OUT-data.json): `dashboard.py render` draws them
# again without a run.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
build=$(cd "$1" && pwd)
out=$(realpath "$2")
minutes=${3:-10}
python=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
tree=$(cd "$here/../.." && pwd)
neardup=$build/cli/neardup
neardupd=$build/daemon/neardupd
command -v prometheus >/dev/null || { echo "dashboard-run.sh: prometheus is missing: apt install prometheus" >&2; exit 2; }
"$python" -c "import matplotlib" || { echo "dashboard-run.sh: $python has no matplotlib" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

"$neardup" broker --topic pages:6 --topic tagged:6 --topic dead:1 \
  --bootstrap-file "$work/bootstrap" 2>"$work/broker.log" &
pids+=($!)
for _ in $(seq 100); do [[ -s $work/bootstrap ]] && break; sleep 0.1; done
bootstrap=$(cat "$work/bootstrap")

metrics_port=$(free_port)
write_config() {  # $1: log level (a reloadable key)
  cat >"$work/neardup.yaml" <<EOF
kafka:
  bootstrap_servers: "$bootstrap"
  group_id: "neardup"
  input_topic: "pages"
  output_topic: "tagged"
  dead_letter_topic: "dead"
  consumer_properties:
    statistics.interval.ms: "1000"
store:
  path: "$work/store"
  expected_documents: 1000000
  sync: false
metrics:
  listen: "127.0.0.1:$metrics_port"
log:
  level: $1
EOF
}
write_config info
"$neardupd" --config "$work/neardup.yaml" 2>"$work/neardupd.log" &
daemon=$!
pids+=($daemon)

prometheus_port=$(free_port)
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 2s
scrape_configs:
  - job_name: neardup
    static_configs:
      - targets: ["127.0.0.1:$metrics_port"]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prometheus" \
  --web.listen-address="127.0.0.1:$prometheus_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)

bursts=$((minutes * 6))  # one every 10 s
log "generating pages"
python3 "$tree/tests/e2e/gen_pages.py" --count $((bursts * 900)) --seed 7 --truncate-rate 0.3 \
  --out "$work/pages.jsonl"
for _ in $(seq 300); do
  curl -fs "http://127.0.0.1:$metrics_port/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
start=$(date +%s)
log "feeding $bursts bursts, one every 10 s; metrics on 127.0.0.1:$metrics_port"
line=1
for burst in $(seq 1 "$bursts"); do
  tick=$((start + burst * 10))
  # A slow swell and a spike every few minutes: 150 .. 1650 pages a burst.
  size=$(python3 -c "import math; print(int(900 + 600 * math.sin($burst / 6) + (300 if $burst % 17 == 0 else 0)))")
  sed -n "${line},$((line + size - 1))p" "$work/pages.jsonl" >"$work/burst.jsonl"
  line=$((line + size))
  if ((burst % 5 == 0)); then
    echo 'this is not json' >>"$work/burst.jsonl"
    echo '{"body": "<p>a page without its url</p>"}' >>"$work/burst.jsonl"
  fi
  "$neardup" produce --bootstrap "$bootstrap" --topic pages --key-field cluster \
    --in "$work/burst.jsonl" 2>>"$work/produce.log"
  if ((burst == bursts * 2 / 5)); then
    log "reload: accepted (log.level debug)"
    write_config debug
    kill -HUP "$daemon"
  elif ((burst == bursts * 3 / 5)); then
    log "reload: rejected (an invalid file), then the good file again"
    echo "store: [unclosed" >"$work/neardup.yaml"
    kill -HUP "$daemon"
    sleep 1
    write_config info
  fi
  now=$(date +%s)
  ((tick > now)) && sleep $((tick - now))
done
log "draining"
sleep 30
end=$(date +%s)
"$python" "$here/dashboard.py" collect --prometheus "http://127.0.0.1:$prometheus_port" \
  --start "$start" --end "$end" --step 5 "$work/data.json"
cp "$work/data.json" "${out%.*}-data.json"
"$python" "$here/dashboard.py" render "$work/data.json" "$out"
