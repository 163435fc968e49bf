#!/usr/bin/env python3
"""A single-node Apache Kafka broker (KRaft: broker and controller in one process) on loopback,
started from the jars that tests/kafka/pom.xml pins and the build copies into
<build>/tests/kafka/lib. The end-to-end tests use it through KafkaBroker; by hand:

  python3 tests/kafka/broker.py --lib build/tests/kafka/lib --topic pages:4 \\
      --topic pages-tagged:4 --topic pages-dead:1

prints the bootstrap servers once the topics exist and runs until Ctrl-C (SIGINT/SIGTERM), then
stops the broker and deletes its data unless --dir was given.

Steps: write server.properties (one node, loopback listeners, replication factor 1 for the
offsets and transaction-state topics, a 16 MiB log-cleaner buffer instead of the 128 MiB
default, no topic auto-creation), format the log directory (kafka.tools.StorageTool, or a
copy of what it wrote for an earlier broker: _format), start
kafka.Kafka, wait until the broker port accepts connections (with a fixed port the broker opens
its listener only once it has started), create the topics through the admin API
(`neardup topics --create`), and on stop send SIGTERM (a controlled shutdown).
Python 3 standard library only; needs `java` (17 or newer) on PATH.
"""
import argparse
import base64
import ctypes
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Any 22-character base64url text is a valid cluster id; a fixed one keeps runs alike.
CLUSTER_ID = "bmVhcmR1cC10ZXN0cy0xMQ"
# -XX:TieredStopAtLevel=1 (the quick C1 compiler only): measured on 2 busy cores, the broker
# listens after a median 8.0 s instead of 12.3 s and holds 178 MiB instead of 215 MiB.
JVM_OPTIONS = ["-Xms64m", "-Xmx512m", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
               "-XX:TieredStopAtLevel=1", "-XX:+ExitOnOutOfMemoryError",
               "-Djava.awt.headless=true"]


def die_with_parent():
    """For Popen(preexec_fn=...): the child gets SIGTERM when the process that started it dies,
    so that a test killed on its time-out leaves no broker (or daemon) behind. Linux only."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def random_uuid():
    """A Kafka Uuid as its tools print it: 16 random bytes in unpadded base64url, never
    starting with '-' (Kafka's Uuid.randomUuid() draws again)."""
    while True:
        text = base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def kafka_version(lib):
    """The broker's version, from the kafka_2.13-<version>.jar among the jars."""
    for jar in glob.glob(os.path.join(lib, "kafka_2.13-*.jar")):
        found = re.match(r"kafka_2\.13-(.+)\.jar$", os.path.basename(jar))
        if found:
            return found.group(1)
    raise RuntimeError(f"no kafka_2.13-*.jar in {lib}: build the project first (the build "
                       f"copies the broker's jars there with Maven)")


class KafkaBroker:
    """One broker process over one data directory. start() formats the directory the first
    time; stop() and start() again keep the data and the ports (an outage and a recovery)."""

    def __init__(self, lib, directory, message_max_bytes=None, log_path=None, neardup=None):
        self.lib = os.path.abspath(lib)
        self.version = kafka_version(self.lib)
        self.directory = directory
        self.log_path = log_path or os.path.join(directory, "broker.log")
        self.neardup = neardup or os.environ.get("NEARDUP", "neardup")
        self.message_max_bytes = message_max_bytes
        self.port = self.controller_port = None
        self.process = None
        self.formatted = False
        # What one broker computes for the next: a formatted directory.
        self.cache = os.path.join(os.path.dirname(self.lib), "broker-cache")
        self.startup_seconds = self.format_seconds = None

    @property
    def bootstrap(self):
        return f"127.0.0.1:{self.port}"

    def _java(self, main, *args):
        return ["java", *JVM_OPTIONS, "-cp", os.path.join(self.lib, "*"),
                f"-Dlog4j2.configurationFile={os.path.join(HERE, 'log4j2.properties')}",
                main, *args]

    def _write_properties(self):
        path = os.path.join(self.directory, "server.properties")
        properties = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller_port}",
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port},"
                         f"CONTROLLER://127.0.0.1:{self.controller_port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": os.path.join(self.directory, "data"),
            # One node: every internal topic has one replica (and one partition, to start fast).
            "offsets.topic.replication.factor": "1",
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            "transaction.state.log.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": "1",
            "share.coordinator.state.topic.min.isr": "1",
            "group.initial.rebalance.delay.ms": "0",
            # The cleaner's dedupe buffer is allocated on the heap at start (128 MiB default).
            "log.cleaner.dedupe.buffer.size": str(16 << 20),
            # A misspelt topic is an error, as on a production cluster.
            "auto.create.topics.enable": "false",
            # A small machine: fewer threads than the defaults.
            "num.network.threads": "2",
            "num.io.threads": "4",
            "num.recovery.threads.per.data.dir": "1",
            "background.threads": "4",
        }
        if self.message_max_bytes:
            properties["message.max.bytes"] = str(self.message_max_bytes)
        with open(path, "w") as f:
            f.writelines(f"{k}={v}\n" for k, v in properties.items())
        return path

    def start(self, timeout=120):
        """Starts the broker and waits until its port accepts connections; returns the
        seconds that took (also in self.startup_seconds). The first start picks free ports
        (again, on a bind race) and formats the data directory; a restart keeps both."""
        os.makedirs(self.directory, exist_ok=True)
        first = self.port is None
        for _ in range(3 if first else 1):
            if first:
                self.port, self.controller_port = free_port(), free_port()
            properties = self._write_properties()
            if not self.formatted:
                start = time.monotonic()
                self._format(properties)
                self.format_seconds = time.monotonic() - start
                self.formatted = True
            if self._launch(properties, timeout):
                return self.startup_seconds
            if not first or not self._bind_race():
                break
        raise RuntimeError(f"the broker exited with code {self.process.returncode} while "
                           f"starting; see {self.log_path}")

    def _format(self, properties):
        """Formats the data directory. kafka.tools.StorageTool runs once for these jars, and
        what it wrote goes to broker-cache/formatted-<version>-<cluster id> beside lib/; later
        brokers copy that, as it depends only on the node id, the cluster id and the jars'
        metadata version (not on ports or paths), with a directory id of their own. A JVM
        less per broker: about a second of a core."""
        data = os.path.join(self.directory, "data")
        template = os.path.join(self.cache, f"formatted-{self.version}-{CLUSTER_ID}")
        if not os.path.isfile(os.path.join(template, "bootstrap.checkpoint")):
            with open(self.log_path, "a") as log:
                subprocess.run(self._java("kafka.tools.StorageTool", "format", "-t",
                                          CLUSTER_ID, "-c", properties),
                               check=True, stdout=subprocess.DEVNULL, stderr=log)
            staging = None
            try:  # another broker may be writing it too: the first rename wins
                os.makedirs(self.cache, exist_ok=True)
                staging = tempfile.mkdtemp(dir=self.cache)
                for name in ("meta.properties", "bootstrap.checkpoint"):
                    shutil.copy(os.path.join(data, name), staging)
                os.rename(staging, template)
            except OSError:
                if staging:
                    shutil.rmtree(staging, ignore_errors=True)
            return
        os.makedirs(data, exist_ok=True)
        shutil.copy(os.path.join(template, "bootstrap.checkpoint"), data)
        with open(os.path.join(template, "meta.properties")) as f:
            meta = f.read()
        meta = re.sub(r"(?m)^directory\.id=.*$", f"directory.id={random_uuid()}", meta)
        with open(os.path.join(data, "meta.properties"), "w") as f:
            f.write(meta)

    def _launch(self, properties, timeout):
        """Starts kafka.Kafka; True once the port accepts, False if the process exited."""
        start = time.monotonic()
        with open(self.log_path, "a") as log:
            self.process = subprocess.Popen(self._java("kafka.Kafka", properties),
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            preexec_fn=die_with_parent)
        while time.monotonic() - start < timeout:
            if self.process.poll() is not None:
                return False
            if accepts(self.port):
                self.startup_seconds = time.monotonic() - start
                return True
            time.sleep(0.05)
        self.process.kill()
        self.process.wait()
        raise RuntimeError(f"the broker did not open port {self.port} within {timeout}s; "
                           f"see {self.log_path}")

    def _bind_race(self):
        with open(self.log_path, errors="replace") as f:
            return "Address already in use" in f.read()[-20000:]

    def rss_kib(self):
        """The broker process's resident memory (KiB), from /proc."""
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def create_topics(self, topics):
        """topics: NAME:PARTITIONS[:KEY=VALUE,...] texts, created through the admin API."""
        # A broker that has just opened its port may answer its first request slowly on a busy
        # machine: more than the tools' few seconds.
        args = [self.neardup, "topics", "--bootstrap", self.bootstrap, "--connect-timeout", "30"]
        for topic in topics:
            args += ["--create", topic]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def stop(self, timeout=60):
        """SIGTERM (a controlled shutdown), then SIGKILL after `timeout` seconds."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def alive(self):
        return self.process is not None and self.process.poll() is None


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", required=True, help="the broker's jars (<build>/tests/kafka/lib)")
    parser.add_argument("--dir", help="data directory (default: a temporary one, deleted)")
    parser.add_argument("--topic", action="append", default=[],
                        help="NAME:PARTITIONS[:KEY=VALUE,...] to create (repeatable)")
    parser.add_argument("--message-max-bytes", type=int, help="the broker's message.max.bytes")
    parser.add_argument("--neardup", help="the neardup binary (default: $NEARDUP or PATH)")
    args = parser.parse_args()
    directory = args.dir or tempfile.mkdtemp(prefix="neardup-kafka-")
    broker = KafkaBroker(args.lib, directory, args.message_max_bytes, neardup=args.neardup)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    try:
        seconds = broker.start()
        broker.create_topics(args.topic)
        print(broker.bootstrap, flush=True)
        print(f"kafka {broker.version} ready on {broker.bootstrap} in {seconds:.1f}s, "
              f"RSS {broker.rss_kib() / 1024:.0f} MiB; data in {directory}; Ctrl-C stops it",
              file=sys.stderr, flush=True)
        while not stop and broker.alive():
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        broker.stop()
        if not args.dir:
            shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
