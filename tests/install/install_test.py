#!/usr/bin/env python3
"""The install works as the README says: `cmake --install BUILD --prefix P` into a DESTDIR puts
every file where the systemd unit and the config expect it.

    python3 tests/install/install_test.py BUILD_DIR

Checks, for prefix /usr (the README's and the package's) and /usr/local: the unit's ExecStart
binary is installed and runs, its --config file is installed and passes `neardupd
--check-config`, the unit's User= is created by the installed sysusers file with the unit's
StateDirectory as home, the config's store.path is that state directory, the man pages, bash
completion, docs and licence are in place, and a re-install keeps an edited config.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = None


def install(destdir, prefix):
    env = dict(os.environ, DESTDIR=destdir)
    proc = subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix], env=env,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"cmake --install --prefix {prefix} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def unit_settings(path):
    settings = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", "[")) and "=" in line:
                key, value = line.split("=", 1)
                settings[key] = value
    return settings


class Install(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="neardup-install-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def check_layout(self, prefix, etc):
        root = os.path.join(self.tmp, prefix.strip("/").replace("/", "_"))
        install(root, prefix)
        at = lambda path: root + path  # noqa: E731: the DESTDIR copy of an absolute path

        unit_path = at(f"{prefix}/lib/systemd/system/neardupd.service")
        self.assertTrue(os.path.isfile(unit_path), unit_path)
        unit = unit_settings(unit_path)

        # ExecStart: the installed daemon, with the installed config.
        exec_start = unit["ExecStart"].split()
        self.assertEqual(exec_start[0], f"{prefix}/sbin/neardupd")
        self.assertEqual(exec_start[1:], ["--config", f"{etc}/neardup/neardup.yaml"])
        # The roles' template: the same unit, one role per instance.
        role_unit = unit_settings(at(f"{prefix}/lib/systemd/system/neardupd@.service"))
        self.assertEqual(role_unit["ExecStart"].split(), exec_start + ["--role", "%i"])
        self.assertEqual(role_unit["User"], unit["User"])
        daemon = at(exec_start[0])
        self.assertTrue(os.access(daemon, os.X_OK), daemon)
        version = subprocess.run([daemon, "--version"], capture_output=True, text=True, check=True)
        self.assertRegex(version.stdout, r"^neardupd \d+\.\d+\.\d+")
        config = at(exec_start[2])
        check = subprocess.run([daemon, "--check-config", config], capture_output=True, text=True)
        self.assertEqual(check.returncode, 0, check.stderr)

        # The user, its home and the state directory agree with the unit and the config.
        self.assertEqual(unit["User"], "neardup")
        self.assertEqual(unit["StateDirectory"], "neardup")
        self.assertEqual(unit["ConfigurationDirectory"], "neardup")
        self.assertEqual(unit["RestartPreventExitStatus"], "2")
        with open(at(f"{prefix}/lib/sysusers.d/neardup.conf"), encoding="utf-8") as f:
            users = [line.split() for line in f if line.strip() and not line.startswith("#")]
        self.assertEqual(len(users), 1)
        self.assertEqual(users[0][:2], ["u", "neardup"])
        self.assertEqual(users[0][-1], "/var/lib/neardup")
        self.assertIn('store.path: "/var/lib/neardup"', self.flatten(check.stdout))

        # The other command, its man pages and completion, the docs and the licence.
        self.assertTrue(os.access(at(f"{prefix}/bin/neardup"), os.X_OK))
        for path in (f"{prefix}/share/man/man1/neardup.1.gz", f"{prefix}/share/man/man8/neardupd.8.gz",
                     f"{prefix}/share/bash-completion/completions/neardup",
                     f"{prefix}/share/doc/neardup/LICENSE",
                     f"{prefix}/share/doc/neardup/docs/records.md",
                     f"{prefix}/share/doc/neardup/docs/operations.md",
                     f"{prefix}/share/doc/neardup/samples-licenses.md",
                     f"{prefix}/share/neardup/grafana/neardup.json",
                     f"{prefix}/share/neardup/prometheus/neardup.rules.yaml"):
            self.assertTrue(os.path.isfile(at(path)), path)

        # A re-install keeps the operator's edits to the config.
        with open(config, "a", encoding="utf-8") as f:
            f.write("# edited by the operator\n")
        output = install(root, prefix)
        self.assertIn("Keeping existing", output)
        with open(config, encoding="utf-8") as f:
            self.assertTrue(f.read().endswith("# edited by the operator\n"))
        return root

    @staticmethod
    def flatten(yaml_text):
        """'section:\\n  key: value' lines as 'section.key: value' (the effective config)."""
        out, section = [], ""
        for line in yaml_text.splitlines():
            if re.match(r"^[a-z_]+:\s*$", line):
                section = line.rstrip(":").strip()
            elif line.startswith("  ") and ":" in line and section:
                out.append(f"{section}.{line.strip()}")
        return "\n".join(out)

    def test_prefix_usr_puts_the_config_in_etc(self):
        self.check_layout("/usr", "/etc")

    def test_another_prefix_keeps_everything_under_it(self):
        self.check_layout("/usr/local", "/usr/local/etc")


if __name__ == "__main__":
    BUILD = sys.argv.pop(1)
    unittest.main(argv=[sys.argv[0], "-v"])
