#!/usr/bin/env python3
"""Readiness and journald (docs/operations.md). neardupd started while its only broker is down is
alive (/healthz 200) but not ready: /readyz answers 503 with the reason, neardup_ready is 0 and
no READY=1 reaches the notify socket. Once the broker is up the daemon becomes ready (READY=1,
/readyz 200, neardup_ready 1); a later outage turns /readyz back to 503 and the recovery to 200.
Its /metrics text passes `promtool check metrics`.

stderr is given to the daemon as a journal stream (JOURNAL_STREAM names its device and inode,
as systemd does): every line must then start with its syslog priority, <4> for warnings, <3>
for errors, <6> for info, and carry no timestamp."""
import os
import re
import subprocess
import sys
import time
import urllib.request

import harness as h

sys.path.insert(0, os.path.join(h.HERE, "..", "..", "ops", "testing"))
from notify_listener import NotifyListener  # noqa: E402


def test(workdir):
    broker = h.Broker(workdir, ["pages:2", "tagged:2", "dead:1"])
    broker.down()
    if broker.kind == "mock":
        h.wait_for(lambda: "ok down all" in open(workdir.file("broker.log")).read(), 10,
                   "the broker to go down")
    port = h.free_port()
    config = h.write_config(workdir, broker.bootstrap, metrics_listen=f"127.0.0.1:{port}")
    log_path = workdir.file("neardupd.log")
    open(log_path, "w").close()
    stat = os.stat(log_path)
    listener = NotifyListener(workdir.file("notify.sock"))
    daemon = h.Daemon(workdir, config, env={
        "NOTIFY_SOCKET": listener.path, "JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"})
    url = f"http://127.0.0.1:{port}"
    notified = []

    def collect():
        for _, assignments in listener.messages(timeout=0.1):
            notified.extend(assignments)
        return notified

    # Down: alive, not ready, no READY=1, for several seconds.
    daemon.metrics_url()
    h.wait_for(lambda: h.get(url + "/healthz")[0] == 200, 30, "/healthz")
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        status, body = h.get(url + "/readyz")
        h.check(status == 503, f"/readyz {status} {body!r} while the broker is down")
        h.check(h.get(url + "/healthz")[0] == 200, "/healthz failed while the broker is down")
        h.check("READY=1" not in collect(), "READY=1 sent while the broker is down")
        time.sleep(0.5)
    down_reason = h.get(url + "/readyz")[1].strip()
    h.check(h.metric(h.scrape(url), "neardup_ready") == 0, "neardup_ready is not 0")
    h.log(f"broker down: /healthz 200, /readyz 503 {down_reason!r}, no READY=1")

    broker.up()
    h.wait_for(lambda: h.get(url + "/readyz")[0] == 200, 60, "/readyz 200 after the broker is up")
    h.wait_for(lambda: "READY=1" in collect(), 10, "READY=1 after the broker is up")
    h.check(h.metric(h.scrape(url), "neardup_ready") == 1, "neardup_ready is not 1")
    h.log(f"broker up: /readyz 200 {h.get(url + '/readyz')[1].strip()!r}, READY=1 sent")

    broker.down()
    h.wait_for(lambda: h.get(url + "/readyz")[0] == 503, 30, "/readyz 503 in an outage")
    h.log(f"outage: /readyz 503 {h.get(url + '/readyz')[1].strip()!r}")
    broker.up()
    h.wait_for(lambda: h.get(url + "/readyz")[0] == 200, 60, "/readyz 200 after the outage")
    h.log("recovered: /readyz 200")

    with urllib.request.urlopen(url + "/metrics", timeout=5) as response:
        text = response.read()
    lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True)
    h.check(lint.returncode == 0 and not lint.stdout.strip() and not lint.stderr.strip(),
            f"promtool check metrics: exit {lint.returncode} {lint.stdout!r} {lint.stderr!r}")
    h.log(f"promtool check metrics: clean ({len(text.splitlines())} lines)")
    daemon.stop()
    listener.close()

    lines = [line for line in daemon.log_text().splitlines() if line]
    priorities = {}
    for line in lines:
        found = re.match(r"^<([0-7])>(\S+) ", line)
        h.check(found, f"a line without a priority prefix: {line!r}")
        h.check(not re.match(r"^<\d>\d{4}-", line), f"a timestamp under journald: {line!r}")
        want = {"trace": "7", "debug": "7", "info": "6", "warning": "4", "error": "3",
                "critical": "2"}[found.group(2)]
        h.check(found.group(1) == want, f"priority {found.group(1)} for {found.group(2)}: {line!r}")
        priorities[found.group(1)] = priorities.get(found.group(1), 0) + 1
    h.check(priorities.get("6") and priorities.get("4"), f"want info and warning lines: {priorities}")
    h.log(f"journal priorities of {len(lines)} lines: "
          + ", ".join(f"<{p}> x{n}" for p, n in sorted(priorities.items())))


if __name__ == "__main__":
    h.run(test, "readiness")
