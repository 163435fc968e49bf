# neardupd container image (docs/operations.md): built and tested on Debian 12, run on
# debian:12-slim as a non-root user with the index on a volume.
#
#   docker build -t neardup .        (or: podman build --isolation=chroot -t neardup:latest .)
#   docker run -v neardup-state:/var/lib/neardup \
#              -v ./neardup.yaml:/etc/neardup/neardup.yaml:ro -p 9464:9464 neardup
#
# scripts/container-check.sh builds it with podman and checks the runtime image.
#
# The built-in /etc/neardup/neardup.yaml is examples/neardup.yaml (all defaults); mount your
# own (compose.yaml mounts deploy/neardup.compose.yaml). Metrics need metrics.listen on
# 0.0.0.0 to be reachable from outside the container.

FROM debian:12 AS build
WORKDIR /src
# Run from the source tree: the tests' Python environment goes to /src/.venv, where CMake finds it.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# The image is only built if every test passes.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
 && cmake --build /build \
 && ctest --test-dir /build --output-on-failure --parallel "$(nproc)" \
 && DESTDIR=/out cmake --install /build

FROM debian:12-slim
# Runtime libraries only (the shared libraries behind scripts/install-deps.sh's -dev packages),
# and the CA certificates that TLS brokers are verified against (security.protocol SSL or
# SASL_SSL without ssl.ca.location: librdkafka then uses OpenSSL's store, /etc/ssl/certs).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates \
      libicu72 libuchardet0 libxml2 libxxhash0 liblmdb0 librdkafka1 librdkafka++1 \
      libyaml-cpp0.7 libsimdjson14 libspdlog1.10 libfmt9 libsystemd0 libmicrohttpd12 libbrotli1 \
      libprometheus-cpp-core1.0 \
 && rm -rf /var/lib/apt/lists/*
RUN groupadd --system neardup \
 && useradd --system --gid neardup --home-dir /var/lib/neardup --shell /usr/sbin/nologin neardup \
 && install -d -o neardup -g neardup -m 0700 /var/lib/neardup
# Binaries (bin/, sbin/), the systemd unit and sysusers file (unused here, harmless), docs.
COPY --from=build /out/usr/ /usr/
COPY --from=build /out/etc/neardup/neardup.yaml /etc/neardup/neardup.yaml
# Fail the build on a missing runtime library or a config the daemon would reject.
RUN for f in /usr/bin/neardup* /usr/sbin/neardup*; do \
      [ -e "$f" ] || continue; \
      if ldd "$f" | grep 'not found'; then echo "$f: missing libraries" >&2; exit 1; fi; \
    done \
 && /usr/sbin/neardupd --check-config /etc/neardup/neardup.yaml >/dev/null

USER neardup
VOLUME /var/lib/neardup
EXPOSE 9464
# SIGTERM (docker stop) drains in-flight pages and commits before exiting 0; SIGHUP reloads.
STOPSIGNAL SIGTERM
# neardupd installs to sbin (daemon/CMakeLists.txt); the absolute path does not rely on PATH.
ENTRYPOINT ["/usr/sbin/neardupd"]
CMD ["--config", "/etc/neardup/neardup.yaml"]
