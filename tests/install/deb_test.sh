#!/usr/bin/env bash
# The Debian package installs with apt on this machine and its daemon runs:
#   bash tests/install/deb_test.sh BUILD_DIR
# Builds the .deb with CPack from BUILD_DIR's install rules, checks it with lintian (no errors),
# installs it with `apt-get install ./neardup_*.deb`, checks `neardupd --version`,
# `neardupd --check-config /etc/neardup/neardup.yaml`, the neardup user and the installed files,
# then purges the package
# (the system is left as it was, unless the package was installed before the test).
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if dpkg-query -W -f='${Status}' neardup 2>/dev/null | grep -q "install ok installed"; then
  echo "deb_test: a neardup package is already installed; refusing to replace it" >&2
  exit 1
fi

(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" > cpack.log 2>&1) || {
  cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/neardup_*.deb)
echo "deb_test: built $(basename "$deb")"
dpkg-deb --info "$deb" | sed -n '/Package:/,$p'
# Debian's checks of a package: no errors (warnings are printed, not failed on).
lintian --fail-on error --tag-display-limit 0 "$deb"

cleanup() {
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq neardup > /dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$deb"

set -x
/usr/sbin/neardupd --version
/usr/sbin/neardupd --check-config /etc/neardup/neardup.yaml > "$work/effective.yaml"
grep -q '^  path: "/var/lib/neardup"$' "$work/effective.yaml"
/usr/bin/neardup --version
getent passwd neardup
grep -q '^ExecStart=/usr/sbin/neardupd --config /etc/neardup/neardup.yaml$' \
  /usr/lib/systemd/system/neardupd.service
test -f /usr/share/man/man1/neardup.1.gz
test -f /usr/share/man/man8/neardupd.8.gz
test -f /usr/share/bash-completion/completions/neardup
test -f /usr/share/doc/neardup/LICENSE
dpkg-query -W -f='${Conffiles}\n' neardup | grep -q /etc/neardup/neardup.yaml
set +x
echo "deb_test: OK"
