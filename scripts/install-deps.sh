#!/usr/bin/env bash
# Installs every build, test and run dependency of neardup on Debian 12 (apt).
# Idempotent: safe to run any number of times. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git python3 ca-certificates
  libicu-dev libuchardet-dev libxml2-dev libxxhash-dev
  liblmdb-dev lmdb-utils librdkafka-dev
  libyaml-cpp-dev libyaml-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libcpp-httplib-dev libsystemd-dev systemd zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  kcat clang-format
  # The Apache Kafka broker of the end-to-end tests (tests/kafka): Java to run it, Maven to
  # fetch its pinned jars from Maven Central at build time.
  openjdk-17-jre-headless maven
  # tests: promtool checks the alert rules and the metrics text; dpkg-dev and file build the .deb
  prometheus dpkg-dev file
  # The Python package (python/): pybind11 and Python's headers to build it, venv for
  # `pip install ./python`, pytest for its tests
  pybind11-dev python3-dev python3-venv python3-pip python3-pytest
)

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

# The python3 first on PATH builds and tests the Python package (CMake finds that one). When it
# is not Debian's (a pyenv or a virtual environment), python3-pytest is not on its path: pip
# gives it pytest.
if ! python3 -c 'import pytest' 2>/dev/null; then
  echo "install-deps: installing pytest for $(command -v python3)"
  python3 -m pip install --quiet pytest
fi
