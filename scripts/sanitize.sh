#!/usr/bin/env bash
# Builds the tree with AddressSanitizer and UndefinedBehaviorSanitizer (scripts/sanitized-build.sh)
# and runs the test suite there; any sanitizer report fails the run. With --fuzz SECONDS it then
# runs every fuzz target that long, two at a time (scripts/fuzz.sh). The tree is build-sanitize/,
# or $NEARDUP_SANITIZE_DIR. ctest's test `sanitized_suite` runs `--fuzz 5` in build/sanitize.
#
#   scripts/sanitize.sh                 # every test but the end-to-end ones (labels e2e, commands)
#   scripts/sanitize.sh --all           # those too: a real broker per e2e test, and the Python
#                                       # tests of the commands (warc_end_to_end, cli_end_to_end,
#                                       # docs_examples)
#   scripts/sanitize.sh --fuzz 60       # and then each fuzz target for 60 s
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${NEARDUP_SANITIZE_DIR:-build-sanitize}
all=0
fuzz_seconds=0
while [ $# -gt 0 ]; do
  case "$1" in
    --all) all=1 ;;
    --fuzz) fuzz_seconds=$2; shift ;;
    *) echo "sanitize.sh: unknown argument $1 (--all, --fuzz SECONDS)" >&2; exit 2 ;;
  esac
  shift
done

scripts/sanitized-build.sh "$dir"
# Leaks are reported too; a report makes the process exit non-zero, which fails its test.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The install tests install the build (and a .deb of it) into the system: not a sanitized one.
select=(-E '^(install_layout|deb_package_installs_and_runs)$')
[ $all = 1 ] || select+=(-LE 'e2e|commands')
ctest --test-dir "$dir" --output-on-failure -j2 "${select[@]}"
if [ "$fuzz_seconds" -gt 0 ]; then
  scripts/fuzz.sh --build-dir "$dir" --jobs 2 "$fuzz_seconds"
fi
