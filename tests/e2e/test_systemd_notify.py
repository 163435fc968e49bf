#!/usr/bin/env python3
"""Plays systemd for a Type=notify neardupd (docs/operations.md): the daemon runs with NOTIFY_SOCKET
on this test's datagram socket and WATCHDOG_USEC set (WATCHDOG_PID unset), and must send, all
from its own pid (NotifyAccess=main): READY=1 after start-up, STATUS= lines with pages/s and the
index size, WATCHDOG=1 at least every half watchdog timeout while it works, RELOADING=1 (with
MONOTONIC_USEC) then READY=1 on SIGHUP, and STOPPING=1 on SIGTERM before exiting 0. A second
daemon whose WATCHDOG_PID names another process must not ping at all."""
import os
import sys
import threading
import time

import harness as h

sys.path.insert(0, os.path.join(h.HERE, "..", "..", "ops", "testing"))
from notify_listener import NotifyListener  # noqa: E402

WATCHDOG_USEC = 1_000_000
WATCH_SECONDS = 5.0
PAGES = 400


class Recorder:
    """Collects (seconds since start, pid, assignments) from a socket in the background."""

    def __init__(self, path):
        self.listener = NotifyListener(path, want_pid=True)
        self.start = time.monotonic()
        self.messages = []
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.done.is_set():
            for pid, assignments in self.listener.messages(timeout=0.2):
                with self.lock:
                    self.messages.append((time.monotonic() - self.start, pid, assignments))

    def snapshot(self):
        with self.lock:
            return list(self.messages)

    def wait(self, assignment, after=0, timeout=20):
        """Waits for a message holding `assignment` with index >= after; returns its index."""
        def find():
            for i, (_, _, assignments) in enumerate(self.snapshot()):
                if i >= after and assignment in assignments:
                    return i + 1
            return None
        return h.wait_for(find, timeout, f"{assignment} on the notify socket") - 1

    def close(self):
        self.done.set()
        self.thread.join()
        self.listener.close()


def test(workdir):
    broker = h.Broker(workdir, ["pages:2", "tagged:2", "dead:1"])
    pages, urls = h.generate_pages(workdir, PAGES, seed=5)
    config = h.write_config(workdir, broker.bootstrap)
    recorder = Recorder(workdir.file("notify.sock"))
    try:
        daemon = h.Daemon(workdir, config, env={"NOTIFY_SOCKET": recorder.listener.path,
                                                "WATCHDOG_USEC": str(WATCHDOG_USEC),
                                                "WATCHDOG_PID": None})
        ready = recorder.wait("READY=1")
        ready_at = recorder.snapshot()[ready][0]
        h.produce(broker.bootstrap, "pages", pages)
        h.wait_for_outputs(broker.bootstrap, "tagged", set(urls), timeout=40)
        time.sleep(max(0.0, ready_at + WATCH_SECONDS - (time.monotonic() - recorder.start)))

        pings = [t for t, _, a in recorder.snapshot() if "WATCHDOG=1" in a and t >= ready_at]
        window = [t for t in pings if t <= ready_at + WATCH_SECONDS]
        gaps = [b - a for a, b in zip(pings, pings[1:])]
        h.log(f"{len(window)} watchdog pings in the {WATCH_SECONDS:.0f} s after READY=1 "
              f"(WATCHDOG_USEC={WATCHDOG_USEC}), longest gap {max(gaps):.2f} s")
        h.check(len(window) >= WATCH_SECONDS / (WATCHDOG_USEC / 1e6) * 2 - 2,
                f"only {len(window)} watchdog pings in {WATCH_SECONDS} s")
        h.check(max(gaps) < WATCHDOG_USEC / 1e6, f"a gap of {max(gaps):.2f} s between pings")
        statuses = [a for _, _, a in recorder.snapshot() if any(x.startswith("STATUS=") for x in a)]
        h.check(statuses, "no STATUS= line")
        last_status = next(x for x in statuses[-1] if x.startswith("STATUS="))
        h.check("pages/s" in last_status and "documents" in last_status,
                f"STATUS= lacks pages/s or the index size: {last_status}")
        h.log(f"last {last_status}")

        daemon.reload()
        reloading = recorder.wait("RELOADING=1", after=ready + 1)
        h.check(any(x.startswith("MONOTONIC_USEC=") for x in recorder.snapshot()[reloading][2]),
                "RELOADING=1 without MONOTONIC_USEC")
        recorder.wait("READY=1", after=reloading + 1)
        daemon.wait_log("reload accepted")

        code, seconds = daemon.terminate()
        stopping = recorder.wait("STOPPING=1", after=reloading + 1, timeout=5)
        h.check(code == 0, f"exit code {code} after SIGTERM")
        messages = recorder.snapshot()
        pids = {pid for _, pid, _ in messages}
        h.check(pids == {daemon.process.pid}, f"senders {pids} != the daemon {daemon.process.pid}")
        kinds = [next(x for x in a if not x.startswith("MONOTONIC_USEC")).split("=")[0]
                 for _, _, a in messages if "WATCHDOG=1" not in a]
        h.log(f"sequence without pings: {' '.join(kinds)}; STOPPING=1 is message "
              f"{stopping + 1} of {len(messages)}; exit {code} in {seconds:.2f} s; all from pid "
              f"{daemon.process.pid}")
    finally:
        recorder.close()

    # WATCHDOG_PID names another process: the watchdog is not this daemon's, so no pings.
    recorder = Recorder(workdir.file("notify2.sock"))
    try:
        daemon = h.Daemon(workdir, config, name="neardupd-other-pid",
                          env={"NOTIFY_SOCKET": recorder.listener.path,
                               "WATCHDOG_USEC": str(WATCHDOG_USEC), "WATCHDOG_PID": "1"})
        recorder.wait("READY=1")
        time.sleep(2 * WATCHDOG_USEC / 1e6)
        daemon.stop()
        pings = [m for m in recorder.snapshot() if "WATCHDOG=1" in m[2]]
        h.check(not pings, f"{len(pings)} pings although WATCHDOG_PID is another process")
        h.log("WATCHDOG_PID=1: no pings, as systemd expects")
    finally:
        recorder.close()


if __name__ == "__main__":
    h.run(test, "systemd-notify")
