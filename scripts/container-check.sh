#!/usr/bin/env bash
# Builds the container image from the Dockerfile, as written, with Debian's podman, and checks
# the runtime image and the compose file. No Docker engine needed; run as root on Debian 12:
#
#   bash scripts/container-check.sh [WORKDIR]      (default /var/tmp/neardup-container)
#   SKIP_BUILD=1 bash scripts/container-check.sh   (check the neardup:latest already built)
#
# 1. Makes the Dockerfile's base images locally: `debootstrap bookworm` (Debian's mirror, via
#    apt's own sources) -> `podman import`, tagged with the FROM names (debian:12, and a
#    documentation-free copy as debian:12-slim). Rerunning reuses them.
# 2. `podman build --isolation=chroot -t neardup:latest .` (the build stage runs every test).
# 3. Mounts the runtime image and checks: neardup and neardupd run (--version), the config at
#    /etc/neardup/neardup.yaml passes `neardupd --check-config`, every library resolves, the
#    neardup user exists and owns /var/lib/neardup; the image runs as that user, declares the
#    /var/lib/neardup volume, exposes 9464 and starts /usr/sbin/neardupd --config
#    /etc/neardup/neardup.yaml.
# 4. Validates compose.yaml with docker-compose (Debian's package; podman-compose 1.0.3 has no
#    `config` command).
# `podman run` is not used: it cannot set rlimits in some sandboxes.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/var/tmp/neardup-container}
mkdir -p "$work"
log() { printf '\n== %s\n' "$*"; }

log "tools (Debian packages)"
missing=()
for p in podman debootstrap docker-compose; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
podman --version

mirror=$(awk '/^deb / && /debian/ {print $2; exit}' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
fi
mirror=${mirror:-http://deb.debian.org/debian}

if ! podman image exists debian:12; then
  log "base image debian:12: debootstrap bookworm from $mirror"
  rm -rf "$work/rootfs"
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
  rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/archives/"*.deb
  tar -C "$work/rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - debian:12
  log "base image debian:12-slim: the same without documentation"
  rm -rf "$work/rootfs/usr/share/doc/"* "$work/rootfs/usr/share/man/"* "$work/rootfs/usr/share/info/"*
  tar -C "$work/rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - debian:12-slim
  rm -rf "$work/rootfs"
fi
podman images

if [ -z "${SKIP_BUILD:-}" ]; then
  log "podman build --isolation=chroot -t neardup:latest ."
  start=$(date +%s)
  podman build --isolation=chroot -t neardup:latest . 2>&1 | tee "$work/build.log" | grep -E '^(STEP|COMMIT)|tests passed|tests failed' || true
  [ "${PIPESTATUS[0]}" -eq 0 ] || { tail -40 "$work/build.log"; exit 1; }
  echo "built in $(( $(date +%s) - start )) s"
fi
podman image inspect neardup:latest --format 'image {{.Id}} size {{.Size}} bytes'

log "runtime image: configuration"
inspect() { podman image inspect neardup:latest --format "$1"; }
user=$(inspect '{{.Config.User}}')
volumes=$(inspect '{{range $k, $v := .Config.Volumes}}{{$k}} {{end}}')
entrypoint=$(inspect '{{join .Config.Entrypoint " "}}')
cmd=$(inspect '{{join .Config.Cmd " "}}')
ports=$(inspect '{{range $k, $v := .Config.ExposedPorts}}{{$k}} {{end}}')
stopsignal=$(inspect '{{.Config.StopSignal}}')
echo "User=$user Volumes=$volumes Entrypoint=$entrypoint Cmd=$cmd ExposedPorts=$ports StopSignal=$stopsignal"
[ "$user" = neardup ]
[ "$volumes" = "/var/lib/neardup " ]
[ "$entrypoint" = /usr/sbin/neardupd ]
[ "$cmd" = "--config /etc/neardup/neardup.yaml" ]
[ "$ports" = "9464/tcp " ]
[ "$stopsignal" = SIGTERM ]

log "runtime image: contents (mounted)"
mnt=$(podman image mount neardup:latest)
trap 'podman image unmount neardup:latest > /dev/null || true' EXIT
set -x
chroot "$mnt" /usr/sbin/neardupd --version
chroot "$mnt" /usr/bin/neardup --version
chroot "$mnt" /usr/sbin/neardupd --check-config /etc/neardup/neardup.yaml > "$work/effective.yaml"
grep -A1 '^store:' "$work/effective.yaml"
! chroot "$mnt" ldd /usr/sbin/neardupd /usr/bin/neardup | grep 'not found'
chroot "$mnt" getent passwd neardup
chroot "$mnt" stat -c '%U:%G %a %n' /var/lib/neardup
[ "$(chroot "$mnt" stat -c '%U' /var/lib/neardup)" = neardup ]
# The mounted image is read-only: the user's write access is read from the owner and the mode.
[ "$(chroot "$mnt" stat -c '%a' /var/lib/neardup)" = 700 ]
test ! -e "$mnt/usr/bin/cmake"   # the runtime image has no build tools
set +x

log "compose file"
docker-compose -f compose.yaml config -q
echo "docker-compose $(docker-compose version --short): compose.yaml is valid"
docker-compose -f compose.yaml config --services | sed 's/^/  service: /'
log "container check: OK"
