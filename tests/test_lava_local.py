# SPDX-License-Identifier: GPL-2.0
"""Tests of kbtools/lava_local.py (scripts/lava_local.sh), without a lab:
the mirror from the host's apt sources, who gets in (a random admin
password never on a command line, admin/admin refused, the state root's
alone), the modes of what LAVA reads whatever the caller's umask, a dead
daemon named with its log, a job that is not scheduled, destroy never
removing while mounted, bad usage. subprocess is mocked but for the
daemons' stand-ins (sh); a real lab runs in make check-all's lava_lab."""

import contextlib
import http.server
import io
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
from typing import Any, Dict, List, Optional, Tuple
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

from kbtools import cli, lava_local, proc  # noqa: E402
from support import present, quiet  # noqa: E402


class FakePopen:
    """subprocess.Popen as kbtools.proc uses it: every command line and
    its standard input recorded, exit status 0, no output."""

    calls: List["FakePopen"] = []

    def __init__(self, cmd: List[str], **kw: Any):
        self.cmd = cmd
        self.returncode = 0
        self.pid = 999999
        self.stdin_text: Optional[str] = None
        FakePopen.calls.append(self)

    def communicate(self, text: Optional[str] = None) -> Tuple[str, str]:
        self.stdin_text = text
        return "", ""

    def wait(self, timeout: Optional[float] = None) -> int:
        return 0


class Mirror(unittest.TestCase):
    def write(self, d: str, name: str, text: str) -> str:
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_deb822_and_one_line_sources(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            self.write(d, "a.sources",
                       "Types: deb\nURIs: http://mirror.test/sec\n"
                       "Suites: bookworm-security\nComponents: main\n\n"
                       "Types: deb-src\nURIs: http://mirror.test/src\n"
                       "Suites: bookworm\nComponents: main\n\n"
                       "Types: deb\nURIs: http://mirror.test/debian/\n"
                       "Suites: bookworm bookworm-updates\n"
                       "Components: main\n")
            self.assertEqual("http://mirror.test/debian",
                             lava_local.host_mirror([f"{d}/*.sources"]))
            self.write(d, "b.list", "# deb http://no.test/debian sid main\n"
                       "deb [arch=amd64] http://other.test/x nodistro main\n"
                       "deb http://one.test/debian trixie main contrib\n")
            self.assertEqual("http://one.test/debian",
                             lava_local.host_mirror([f"{d}/*.list"]))

    def test_no_mirror_is_exit_3(self) -> None:
        lab = lava_local.Lab("lava_local.sh", "/nonexistent")
        with mock.patch.object(lava_local, "host_mirror",
                               return_value=None), \
                mock.patch.dict(os.environ, {"KBENCH_LAVA_MIRROR": ""}):
            with self.assertRaises(lava_local.Failure) as e:
                lab.mirror()
        self.assertEqual(3, e.exception.status)
        self.assertIn("KBENCH_LAVA_MIRROR", str(e.exception))

    def test_no_registry_default_in_the_module(self) -> None:
        with open(lava_local.__file__) as f:
            text = f.read()
        self.assertNotIn("http://deb.", text)


class GuestInit(unittest.TestCase):
    def test_the_shared_mounts_then_a_login_loop(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            lab = lava_local.Lab("lava_local.sh", d)
            os.makedirs(os.path.join(lab.guest, "sbin"))
            lab.write_guest_init()
            init = os.path.join(lab.guest, "sbin", "kbench-init")
            with open(init) as f:
                text = f.read()
            self.assertTrue(os.access(init, os.X_OK))
        self.assertTrue(text.startswith("#!/bin/sh\n"))
        mounts = text.index("mount -t cgroup2 cgroup2 /sys/fs/cgroup\n")
        self.assertLess(text.index("mount -t proc proc /proc\n"), mounts)
        self.assertLess(mounts, text.index("mount -t tmpfs tmpfs /run\n"))
        self.assertTrue(text.endswith(
            "\t/sbin/agetty --noclear -L ttyS0 115200 vt100\ndone\n"))


class Secrets(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        FakePopen.calls = []
        p = mock.patch.object(subprocess, "Popen", FakePopen)
        p.start()
        self.addCleanup(p.stop)

    def lab(self) -> lava_local.Lab:
        lab = lava_local.Lab("lava_local.sh", self.tmp.name)
        lab.private_state()
        return lab

    def test_admin_password_random_private_and_off_the_command_line(self) -> None:
        lab = self.lab()
        with open(lab.state_file("old.log"), "w") as f:
            f.write("a log made before the state was private\n")
        os.chmod(lab.state_file("old.log"), 0o644)
        lab.set_admin()
        password = lab.read_secret(lava_local.SECRET_FILE)
        self.assertNotEqual("admin", password)
        self.assertGreaterEqual(len(password), 24)
        # Given on the shell's standard input, never as an argument.
        (call,) = FakePopen.calls
        self.assertEqual(["lava-server", "manage", "shell"], call.cmd[-3:])
        self.assertIn(repr(password), present(call.stdin_text))
        self.assertNotIn(password, " ".join(call.cmd))
        # A second lab gets another secret; the same lab keeps its own.
        lab.set_admin()
        self.assertEqual(password, lab.read_secret(lava_local.SECRET_FILE))
        other = lava_local.Lab("x", tempfile.mkdtemp(dir=self.tmp.name))
        other.private_state()
        self.assertNotEqual(password, other.admin_password())
        # The state: 0700, every file 0600 (old ones too, once made private).
        lab.private_state()
        self.assertEqual(0o700, stat.S_IMODE(os.stat(lab.state).st_mode))
        for name in os.listdir(lab.state):
            self.assertEqual(0o600, stat.S_IMODE(
                os.stat(lab.state_file(name)).st_mode), name)

    def test_token_from_the_server_kept_private(self) -> None:
        lab = self.lab()
        with mock.patch.object(proc, "capture", side_effect=[
                "id,secret,description\n", "",
                "id,secret,description\n7,tok123,\n"]):
            token = lab.admin_token()
        self.assertEqual("tok123", token)
        lab.write_secret(lava_local.TOKEN_FILE, token)
        self.assertEqual(0o600, stat.S_IMODE(os.stat(
            lab.state_file(lava_local.TOKEN_FILE)).st_mode))


class LabFiles(unittest.TestCase):
    """What LAVA reads gets Debian's modes and owners, whatever the umask
    of the caller (it was 077 for the whole process: the scheduler could
    not read its device)."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.lab = lava_local.Lab("lava_local.sh", self.tmp.name)
        etc = os.path.join(self.lab.root, "etc")
        os.makedirs(etc)
        uid, gid = os.getuid(), os.getgid()
        with open(os.path.join(etc, "passwd"), "w") as f:
            f.write(f"root:x:0:0::/root:/bin/sh\n"
                    f"lavaserver:x:{uid}:{gid}::/var/lib/lava-server:\n")
        with open(os.path.join(etc, "group"), "w") as f:
            f.write(f"root:x:0:\nlavaserver:x:{gid}:\n")
        old = os.umask(0o077)
        self.addCleanup(os.umask, old)

    def mode(self, rel: str) -> int:
        return stat.S_IMODE(os.stat(os.path.join(self.lab.root, rel))
                            .st_mode)

    def test_modes_whatever_the_umask(self) -> None:
        self.lab.lab_file("etc/lava-server/settings.d/50-kbench.yaml", "x\n")
        self.lab.lab_file("usr/sbin/policy-rc.d", "exit 101\n", 0o755)
        self.assertEqual(0o644, self.mode(
            "etc/lava-server/settings.d/50-kbench.yaml"))
        self.assertEqual(0o755, self.mode("usr/sbin/policy-rc.d"))

    def configure(self, *devices: int) -> List[List[str]]:
        """configure(*devices) run, its "devices add" commands."""
        with mock.patch.object(proc, "run", return_value=0) as run, \
                mock.patch.object(lava_local.Lab, "logged"), \
                mock.patch.object(lava_local.Lab, "set_admin"):
            self.lab.configure(*devices)
        return [c.args[0] for c in run.call_args_list
                if "devices" in c.args[0] and "add" in c.args[0]]

    def test_device_dictionary_is_the_servers(self) -> None:
        added = self.configure()
        self.assertEqual(lava_local.DEVICES, len(added))
        self.assertEqual(["kbench-qemu01", "kbench-qemu02"][
            :lava_local.DEVICES], [cmd[-1] for cmd in added])
        for cmd in added:
            name = cmd[-1]
            self.assertEqual(["--device-type", "qemu", "--worker",
                              lava_local.WORKER], cmd[-5:-1])
            rel = f"etc/lava-server/dispatcher-config/devices/{name}.jinja2"
            st = os.stat(os.path.join(self.lab.root, rel))
            self.assertEqual(0o644, stat.S_IMODE(st.st_mode))
            self.assertEqual((os.getuid(), os.getgid()),
                             (st.st_uid, st.st_gid))
        self.assertEqual(0o644, self.mode(
            "etc/lava-server/settings.d/50-kbench.yaml"))

    def test_as_many_devices_as_asked(self) -> None:
        self.assertEqual(["kbench-qemu01", "kbench-qemu02",
                          "kbench-qemu03"],
                         [cmd[-1] for cmd in self.configure(3)])
        self.assertEqual(["kbench-qemu01"],
                         [cmd[-1] for cmd in self.configure(1)])

    def test_setup_takes_the_devices_asked(self) -> None:
        cases: List[Tuple[List[str], int]] = [
            ([], lava_local.DEVICES), (["--devices", "3"], 3),
            (["--devices", "1"], 1)]
        for argv, want in cases:
            with mock.patch.object(lava_local.Lab, "setup") as setup, \
                    mock.patch.object(cli, "orchestrate",
                                      lambda prog, body: body()):
                self.assertEqual(0, lava_local.main(["setup", *argv]))
            setup.assert_called_once_with(want)

    def test_bad_devices_is_bad_usage(self) -> None:
        for argv in (["--devices", "0"], ["--devices", "x"], ["--devices"],
                     ["--bogus"]):
            with mock.patch.object(lava_local.Lab, "setup") as setup, \
                    contextlib.redirect_stderr(io.StringIO()) as err, \
                    self.assertRaises(SystemExit) as e:
                lava_local.main(["setup", *argv])
            self.assertEqual(2, e.exception.code, argv)
            self.assertIn("--", err.getvalue())
            setup.assert_not_called()
        with contextlib.redirect_stderr(io.StringIO()), \
                self.assertRaises(SystemExit) as e:
            lava_local.main(["start", "--devices", "2"])
        self.assertEqual(2, e.exception.code)

    def test_owner_from_the_chroot_not_the_host(self) -> None:
        self.assertEqual((os.getuid(), os.getgid()),
                         self.lab.lab_ids("lavaserver"))
        with self.assertRaises(lava_local.Failure):
            self.lab.lab_ids("nosuchuser")

    def test_main_sets_a_system_umask(self) -> None:
        os.umask(0o077)
        with mock.patch.object(cli, "orchestrate",
                               return_value=0):
            lava_local.main(["stop"], "lava_local.sh")
        self.assertEqual(0o022, os.umask(0o077))


class Daemons(unittest.TestCase):
    """A daemon that died is named, with the last lines of its log."""

    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.lab = lava_local.Lab("lava_local.sh", self.tmp.name)
        self.lab.private_state()

    def spawn(self, name: str,
              script: str) -> "subprocess.Popen[bytes]":
        log = open(self.lab.state_file(f"{name}.log"), "w")
        self.addCleanup(log.close)
        child = subprocess.Popen(["sh", "-c", script], stdout=log,
                                 stderr=log, start_new_session=True)
        self.addCleanup(self.reap, child)
        self.lab.write_secret(f"{name}.pid", str(child.pid))
        return child

    def reap(self, child: "subprocess.Popen[bytes]") -> None:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()

    def test_a_dead_child_is_named_with_its_log(self) -> None:
        children = {d.name: self.spawn(d.name, "exec sleep 60")
                    for d in lava_local.DAEMONS[:2]}
        children["scheduler"] = self.spawn(
            "scheduler", "echo 'INFO [INIT] Starting main loop'; echo "
            "'PermissionError: [Errno 13] Permission denied: dev.jinja2'; "
            "exit 0")
        start = time.monotonic()
        with self.assertRaises(lava_local.Failure) as e:
            self.lab.watch(lava_local.DAEMONS, children, 30)
        self.assertLess(time.monotonic() - start, 5)
        text = str(e.exception)
        self.assertTrue(text.startswith("lava-scheduler is not running "
                                        "(exit status 0)"), text)
        self.assertTrue(text.endswith("PermissionError: [Errno 13] "
                                      "Permission denied: dev.jinja2"), text)

    def test_all_alive_for_the_time_given(self) -> None:
        children = {d.name: self.spawn(d.name, "exec sleep 60")
                    for d in lava_local.DAEMONS}
        self.assertFalse(self.lab.watch(lava_local.DAEMONS, children, 0.6))
        self.assertTrue(self.lab.watch(lava_local.DAEMONS, {}, 5,
                                       lambda: True))

    def test_a_zombie_is_dead(self) -> None:
        """run checks daemons it did not start by their pids: one that
        died but was not reaped yet is not running."""
        child = self.spawn("worker", "exit 3")
        for _ in range(100):
            if not self.lab.alive(child.pid):
                break
            time.sleep(0.05)
        self.assertFalse(self.lab.alive(child.pid))
        self.assertIsNone(child.returncode)  # not reaped: a zombie
        with self.assertRaises(lava_local.Failure) as e:
            self.lab.watch(lava_local.DAEMONS[1:2], {}, 5)
        self.assertIn("lava-worker is not running;", str(e.exception))
        self.assertTrue(self.lab.alive(os.getpid()))
        self.assertFalse(self.lab.alive(0))


class WorkerOnline(unittest.TestCase):
    """A worker is Online for start once it pinged since: the database of
    a lab stopped a moment ago still says Online."""

    def online(self, reply: str, since: float) -> bool:
        lab = lava_local.Lab("lava_local.sh", "/nonexistent")
        with mock.patch.object(lava_local.Lab, "api_up", return_value=True), \
                mock.patch.object(lava_local.Lab, "api",
                                  return_value=reply.encode()):
            return lab.worker_online(since)

    def test_a_ping_since_start(self) -> None:
        reply = ('{"hostname": "kbench-worker", "state": "Online", '
                 '"last_ping": "2026-11-27T07:34:56.409588Z"}')
        self.assertTrue(self.online(reply, 1795764890.0))
        self.assertFalse(self.online(reply, 1795764900.0))
        self.assertFalse(self.online(reply.replace("Online", "Offline"),
                                     1795764890.0))
        for bad in ('{"state": "Online", "last_ping": null}', "[]", "{"):
            self.assertFalse(self.online(bad, 0), bad)


class Waiting(unittest.TestCase):
    """run stops waiting for a job the lab does not schedule."""

    def setUp(self) -> None:
        self.lab = lava_local.Lab("lava_local.sh", "/nonexistent")
        for name, value in (("SCHEDULE_S", 0.2), ("POLL_S", 0.05)):
            p = mock.patch.object(lava_local, name, value)
            p.start()
            self.addCleanup(p.stop)
        watch = mock.patch.object(lava_local.Lab, "watch",
                                  lambda *a: time.sleep(0.05))
        watch.start()
        self.addCleanup(watch.stop)

    def wait(self, states: List[Dict[str, str]], idle: bool = True,
             limit: float = 30) -> Dict[str, str]:
        replies = iter(states)
        with mock.patch.object(lava_local.Lab, "job_state",
                               lambda self, jid: next(replies)), \
                mock.patch.object(lava_local.Lab, "idle_device",
                                  return_value="kbench-qemu02" if idle
                                  else ""):
            return self.lab.wait_job("7", limit)

    def test_submitted_on_an_idle_device_fails_with_the_state(self) -> None:
        start = time.monotonic()
        with self.assertRaises(lava_local.Failure) as e:
            self.wait([{"state": "Submitted", "health": "Unknown"}] * 1000)
        self.assertLess(time.monotonic() - start, 10)
        text = str(e.exception)
        self.assertIn("job 7 has been Submitted (health Unknown)", text)
        self.assertIn("with kbench-qemu02 Idle", text)
        self.assertIn("not scheduling", text)
        self.assertIn("scheduler.log", text)

    def test_submitted_behind_a_busy_device_waits(self) -> None:
        with self.assertRaises(lava_local.Failure) as e:
            self.wait([{"state": "Submitted", "health": "Unknown"}] * 1000,
                      idle=False, limit=1)
        self.assertIn("past its own timeouts", str(e.exception))

    def test_scheduled_but_not_started(self) -> None:
        with self.assertRaises(lava_local.Failure) as e:
            self.wait([{"state": "Scheduled", "health": "Unknown"}] * 1000)
        self.assertIn("worker", str(e.exception))

    def test_an_idle_device_is_one_that_takes_jobs(self) -> None:
        listed = [{"hostname": "kbench-qemu01", "state": "Running",
                   "health": "Unknown"},
                  {"hostname": "kbench-qemu02", "state": "Idle",
                   "health": "Maintenance"},
                  {"hostname": "kbench-qemu03", "state": "Idle",
                   "health": "Good"}]
        with mock.patch.object(lava_local.Lab, "read_secret",
                               return_value="t"), \
                mock.patch("kbtools.lava.Api.devices",
                           return_value=listed) as devices:
            self.assertEqual("kbench-qemu03", self.lab.idle_device())
            devices.assert_called_with("qemu")
            devices.return_value = listed[:2]
            self.assertEqual("", self.lab.idle_device())

    def test_finished(self) -> None:
        info = self.wait([{"state": "Submitted"}, {"state": "Running"},
                          {"state": "Finished", "health": "Complete"}])
        self.assertEqual("Complete", info["health"])


class Destroy(unittest.TestCase):
    def test_never_removes_while_mounted(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            lab = lava_local.Lab("lava_local.sh", d)
            with mock.patch.object(lava_local.Lab, "stop"), \
                    mock.patch.object(lava_local.Lab, "mounts_below",
                                      return_value=[f"{d}/root/dev"]):
                with self.assertRaises(lava_local.Failure) as e:
                    lab.destroy()
            self.assertIn("still mounted", str(e.exception))
            self.assertTrue(os.path.isdir(d))
            with mock.patch.object(lava_local.Lab, "stop"), \
                    contextlib.redirect_stderr(io.StringIO()):
                lab.destroy()
            self.assertFalse(os.path.exists(d))
            os.makedirs(d)  # for the TemporaryDirectory's cleanup

    def test_mount_points_below_the_lab(self) -> None:
        lab = lava_local.Lab("lava_local.sh", "/")
        self.assertIn("/proc", lab.mounts_below())
        lab = lava_local.Lab("lava_local.sh", "/proc/nonexistent")
        self.assertEqual([], lab.mounts_below())

    def test_a_signal_waits_for_the_end(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            lab = lava_local.Lab("lava_local.sh", d)

            def stop() -> None:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.1)
            with mock.patch.object(lava_local.Lab, "stop", side_effect=stop):
                with self.assertRaises(proc.Interrupted):
                    lab.destroy()
            self.assertFalse(os.path.exists(d))
            os.makedirs(d)


class FakeLogin(http.server.BaseHTTPRequestHandler):
    """Django's login form as LAVA serves it: a CSRF token in the form,
    a redirect away on the right password, the form again otherwise."""

    password = "s3cret"

    def log_message(self, *args: Any) -> None:
        pass

    def form(self) -> None:
        body = (b'<form method="post"><input type="hidden" '
                b'name="csrfmiddlewaretoken" value="tok"></form>')
        self.send_response(200)
        # LAVA marks it Secure, though it serves plain HTTP here.
        self.send_header("Set-Cookie", "csrftoken=tok; Path=/; Secure")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.startswith("/accounts/login/"):
            return self.form()
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length", 0))
        form = urllib.parse.parse_qs(self.rfile.read(n).decode())
        if "csrftoken=tok" not in self.headers.get("Cookie", ""):
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        good = (form.get("csrfmiddlewaretoken") == ["tok"]
                and form.get("username") == ["admin"]
                and form.get("password") == [self.password])
        if not good:
            return self.form()
        self.send_response(302)
        self.send_header("Location", "/")
        self.send_header("Content-Length", "0")
        self.end_headers()


class WhoGetsIn(unittest.TestCase):
    def setUp(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                      FakeLogin)
        t = threading.Thread(target=self.server.serve_forever, daemon=True)
        t.start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def test_admin_admin_refused_the_secret_accepted(self) -> None:
        self.assertFalse(lava_local.login_accepted(self.url, "admin",
                                                   "admin"))
        self.assertTrue(lava_local.login_accepted(self.url, "admin",
                                                  FakeLogin.password))

    def test_check_says_what_is_wrong(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            lab = lava_local.Lab("lava_local.sh", d)
            lab.url = self.url
            lab.private_state()
            lab.write_secret(lava_local.SECRET_FILE, "x")
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(0, lab.check())
            self.assertIn("admin/admin is refused", err.getvalue())
            os.chmod(lab.state_file(lava_local.SECRET_FILE), 0o644)
            with mock.patch.object(FakeLogin, "password", "admin"), \
                    contextlib.redirect_stderr(err):
                self.assertEqual(1, lab.check())
            self.assertIn("readable or writable by others", err.getvalue())
            self.assertIn("admin/admin logs in", err.getvalue())


class Usage(unittest.TestCase):
    def call(self, *argv: str) -> Tuple[Any, str]:
        rc, _, err = quiet(lava_local.main, list(argv), "lava_local.sh")
        return rc, err

    def test_bad_usage_is_2_with_a_hint(self) -> None:
        for argv in ((), ("bogus",), ("stop", "--bogus"),
                     ("run", "--bogus"), ("run", "--kernel", "/nonexistent"),
                     ("run", "--kernel", "debian-5.10")):
            rc, err = self.call(*argv)
            self.assertEqual(2, rc, argv)
            self.assertIn("Try 'lava_local.sh --help'", err)

    def test_not_root_is_2(self) -> None:
        with mock.patch.object(os, "geteuid", return_value=1000), \
                mock.patch.dict(os.environ, {"KBENCH_LAVA_DIR": "/nonexistent"}):
            rc, err = self.call("start")
        self.assertEqual(2, rc)
        self.assertIn("needs root", err)

    def test_help_says_where_the_secret_is(self) -> None:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(0, lava_local.main(["--help"], "lava_local.sh"))
        self.assertIn(lava_local.SECRET_FILE, out.getvalue())
        self.assertIn("0600", out.getvalue())


if __name__ == "__main__":
    unittest.main()
