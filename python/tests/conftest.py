"""Shared fixtures: the sample pages of the tree and, when it can be found, the `neardup`
command (to build an index and to check that the package answers as the command does).

The command is $NEARDUP, else `neardup` on PATH, else <tree>/build/cli/neardup.
"""
import gzip
import json
import os
import pathlib
import shutil
import subprocess

import pytest

TREE = pathlib.Path(os.environ.get("NEARDUP_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
PAGES = TREE / "samples" / "pages"


def neardup_command():
    for candidate in (os.environ.get("NEARDUP"), shutil.which("neardup"),
                      str(TREE / "build" / "cli" / "neardup")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def pages():
    """The directory of the sample pages."""
    return PAGES


@pytest.fixture(scope="session")
def page():
    """The bytes of samples/pages/NAME.html: a and b are near-duplicates, c another article."""
    return lambda name: (PAGES / f"{name}.html").read_bytes()


@pytest.fixture(scope="session")
def cli():
    """Runs the neardup command; returns its JSON lines and exit code."""
    command = neardup_command()
    if command is None:
        pytest.skip("the neardup command was not found (set NEARDUP)")

    def run(*args, stdin=None):
        proc = subprocess.run([command, *map(str, args)], input=stdin, capture_output=True,
                              timeout=120)
        assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")
        return [json.loads(line) for line in proc.stdout.splitlines()], proc.returncode

    return run


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory, cli, page):
    """An index holding pages a (id "a") and c (id "c"), written by `neardup dedup`."""
    store = tmp_path_factory.mktemp("index")
    lines = [json.dumps({"url": f"https://example.com/{name}", "id": name,
                         "body": page(name).decode("utf-8")}) for name in ("a", "c")]
    out, _ = cli("dedup", "--store", store, "--in", "-", "--out", "-",
                     stdin=gzip.compress("\n".join(lines).encode() + b"\n"))
    assert [line["neardup"]["status"] for line in out] == ["unique", "unique"]
    return store
