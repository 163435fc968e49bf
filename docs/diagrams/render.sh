#!/usr/bin/env bash
# Renders every diagram source in docs/diagrams/ (*.dot, Graphviz) into an SVG beside it, which
# the documents show. Needs Graphviz (apt install graphviz); the rendered files are checked in, so
# reading the docs needs nothing.
#
#   docs/diagrams/render.sh
set -euo pipefail
cd "$(dirname "$0")"
command -v dot > /dev/null || { echo "render.sh: dot is missing: apt install graphviz" >&2; exit 2; }
for source in *.dot; do
  dot -Tsvg "$source" -o "${source%.dot}.svg"
  echo "rendered ${source%.dot}.svg"
done
