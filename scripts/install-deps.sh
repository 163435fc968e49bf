#!/usr/bin/env bash
# Installs every build, test and run dependency of neardup on Debian 12 (apt).
# Idempotent: safe to run any number of times. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git python3 ca-certificates
  libicu-dev libuchardet-dev libxml2-dev libxxhash-dev
  liblmdb-dev lmdb-utils librdkafka-dev
  libyaml-cpp-dev libyaml-dev libsimdjson-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libmicrohttpd-dev libsystemd-dev systemd zlib1g-dev
  prometheus-cpp-dev
  # tests: the HTTP client of the unit tests
  libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  kcat clang-format
  # tests: the sanitized tree and the fuzz targets (scripts/sanitized-build.sh); Debian's clang
  # 14 cannot compile <expected> from libstdc++ 12
  clang-16 libclang-rt-16-dev
  # The Apache Kafka broker of the end-to-end tests (tests/kafka): Java to run it, Maven to
  # fetch its pinned jars from Maven Central at build time.
  openjdk-17-jre-headless maven
  # tests: promtool checks the alert rules and the metrics text; dpkg-dev and file build the .deb
  prometheus dpkg-dev file
  # tests: /usr/bin/time measures peak memory
  time
  # WARC input: brotli decodes `Content-Encoding: br` bodies, OpenSSL's libcrypto checks SHA-1
  # block digests; wget writes WARC files for the tests, and pip installs warcio (below), which
  # writes and indexes them
  libbrotli-dev libssl-dev wget python3-pip
  # The Python package (python/): pybind11 and Python's headers to build it, venv for
  # `pip install ./python`, pytest for its tests
  pybind11-dev python3-dev python3-venv python3-pytest
)

# Python packages of the tests (PyPI), pinned. Installed for the python3 on PATH, which is the
# one CMake finds for the tests, when it cannot import them (Debian's python3 has pytest from
# python3-pytest; a pyenv or virtual environment gets it from pip).
python_packages=(warcio==1.8.1 pytest==9.2.0)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
else
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

missing_python=()
for p in "${python_packages[@]}"; do
  python3 -c "import ${p%%==*}" 2>/dev/null || missing_python+=("$p")
done
if [ ${#missing_python[@]} -eq 0 ]; then
  echo "install-deps: all ${#python_packages[@]} Python packages already installed"
else
  echo "install-deps: installing ${missing_python[*]} (pip)"
  # Debian's own python3 is marked externally managed: these test-only packages go beside it.
  $SUDO env PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet "${missing_python[@]}"
fi
