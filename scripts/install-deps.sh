#!/usr/bin/env bash
# Installs neardup's dependencies on Debian 12 (apt):
#   bash scripts/install-deps.sh             every build, test and run dependency (the test command)
#   bash scripts/install-deps.sh --runtime   only what building and running the programs needs:
#                                            the quick start, `-DNEARDUP_TESTS=OFF` builds, the .deb
# The tests' Python packages (PyPI, pinned) go into a virtual environment, .venv in the source
# tree, never into the system's Python; CMake's test configuration finds it there.
# Idempotent: safe to run any number of times. Needs root (or sudo) for apt.
set -euo pipefail
cd "$(dirname "$0")/.."

runtime=false
case "${1:-}" in
  "") ;;
  --runtime) runtime=true ;;
  *) echo "usage: bash scripts/install-deps.sh [--runtime]" >&2; exit 2 ;;
esac

# What a build of neardup and neardupd needs (cmake -DNEARDUP_TESTS=OFF), and python3 for the
# quick start's summary. dpkg-dev (with build-essential) and file: CPack's dpkg-shlibdeps for the
# .deb.
runtime_packages=(
  build-essential cmake ninja-build pkg-config python3 ca-certificates file
  libicu-dev libuchardet-dev libxml2-dev libxxhash-dev liblmdb-dev librdkafka-dev
  libyaml-cpp-dev libyaml-dev libsimdjson-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libmicrohttpd-dev libsystemd-dev zlib1g-dev
  # the metrics' registry and text exposition (ops/)
  prometheus-cpp-dev
  # WARC input: brotli decodes `Content-Encoding: br` bodies, OpenSSL's libcrypto checks SHA-1
  # block digests
  libbrotli-dev libssl-dev
)

# What the tests need besides.
test_packages=(
  git lmdb-utils systemd
  # the HTTP client of the unit tests; brotli's encoder (in libbrotli-dev) writes their fixtures
  libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  kcat clang-format
  # the sanitized tree and the fuzz targets (scripts/sanitized-build.sh); Debian's clang 14
  # cannot compile <expected> from libstdc++ 12
  clang-16 libclang-rt-16-dev
  # The Apache Kafka broker of the end-to-end tests (tests/kafka): Java to run it, Maven to
  # fetch its pinned jars from Maven Central at build time.
  openjdk-17-jre-headless maven
  # promtool checks the alert rules and the metrics text; lintian checks the .deb
  prometheus lintian
  # /usr/bin/time measures peak memory
  time
  # wget writes WARC files for the tests, and warcio (PyPI, below) writes and indexes them
  wget
  # The Python package (python/): pybind11 and Python's headers to build it, venv for the tests'
  # environment and `pip install ./python`, pytest for its tests
  pybind11-dev python3-dev python3-venv python3-pytest
)

# Python packages of the tests (PyPI), pinned, installed into the virtual environment when it
# cannot import them (it sees Debian's packages too, so pytest comes from python3-pytest).
python_packages=(warcio==1.8.1 pytest==9.2.0)
venv="$PWD/.venv"

packages=("${runtime_packages[@]}")
$runtime || packages+=("${test_packages[@]}")

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
else
  echo "install-deps: installing ${#missing[@]} packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi
$runtime && exit 0

if [ ! -x "$venv/bin/python3" ]; then
  echo "install-deps: making the tests' Python environment $venv"
  python3 -m venv --system-site-packages "$venv"
fi
missing_python=()
for p in "${python_packages[@]}"; do
  "$venv/bin/python3" -c "import ${p%%==*}" 2>/dev/null || missing_python+=("$p")
done
if [ ${#missing_python[@]} -eq 0 ]; then
  echo "install-deps: all ${#python_packages[@]} Python packages already in $venv"
else
  echo "install-deps: installing ${missing_python[*]} into $venv (pip)"
  "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "${missing_python[@]}"
fi
