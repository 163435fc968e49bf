#!/usr/bin/env python3
"""Plays systemd's notification socket for tests of a Type=notify service.

Binds an AF_UNIX datagram socket, prints every message it receives as one line (a message's
newline-separated assignments joined by single spaces, e.g. "RELOADING=1 MONOTONIC_USEC=123"),
and exits when --exit-on is seen or --timeout seconds have passed.

    notify_listener.py --socket /tmp/x/notify.sock --timeout 30 --exit-on STOPPING=1 &
    NOTIFY_SOCKET=/tmp/x/notify.sock WATCHDOG_USEC=2000000 neardupd --config c.yaml

A socket path starting with "@" is an abstract socket (as in NOTIFY_SOCKET). The socket file
is removed on exit. "listening on PATH" goes to stderr once the socket is bound; callers may
also wait for the socket file to appear. --pid prefixes each line with the sender's pid
("pid=1234 READY=1"), to check that notifications come from the main process
(NotifyAccess=main).

Exit status: 0 on --exit-on seen, or on timeout when no --exit-on was given; 1 when --exit-on
was given and not seen in time; 2 on usage errors.

Also importable: `with NotifyListener(path) as l: for msg in l.messages(timeout=10): ...`.
"""

import argparse
import os
import socket
import struct
import sys
import time


class NotifyListener:
    """A bound notification socket. messages() yields (pid or None, [assignments])."""

    def __init__(self, path, want_pid=False):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if want_pid:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.sock.bind("\0" + path[1:] if path.startswith("@") else path)

    def close(self):
        self.sock.close()
        if not self.path.startswith("@"):
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def messages(self, timeout):
        """Yields messages until `timeout` seconds from the first call have passed."""
        deadline = time.monotonic() + timeout
        creds_size = socket.CMSG_SPACE(struct.calcsize("3i"))
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self.sock.settimeout(left)
            try:
                data, ancdata, _, _ = self.sock.recvmsg(65536, creds_size)
            except socket.timeout:
                return
            pid = None
            for level, kind, payload in ancdata:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid, _, _ = struct.unpack("3i", payload[: struct.calcsize("3i")])
            text = data.decode("utf-8", errors="replace")
            yield pid, [line for line in text.split("\n") if line]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--socket", required=True, help="socket path to bind (@name: abstract)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before exiting")
    parser.add_argument("--exit-on", help="exit once a message contains this assignment")
    parser.add_argument("--pid", action="store_true", help="prefix lines with the sender pid")
    args = parser.parse_args()

    with NotifyListener(args.socket, want_pid=args.pid) as listener:
        print(f"listening on {args.socket}", file=sys.stderr, flush=True)
        for pid, assignments in listener.messages(args.timeout):
            line = " ".join(assignments)
            if args.pid:
                line = f"pid={pid} {line}"
            print(line, flush=True)
            if args.exit_on and args.exit_on in assignments:
                return 0
    return 1 if args.exit_on else 0


if __name__ == "__main__":
    sys.exit(main())
