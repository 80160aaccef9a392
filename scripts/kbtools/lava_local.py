# SPDX-License-Identifier: GPL-2.0
"""A throwaway LAVA server and worker on this machine, to try and test the
kbench LAVA job (scripts/lava_job.py): everything lives in a Debian 12
chroot made with debootstrap (its own PostgreSQL, gunicorn,
lava-scheduler and lava-worker, started and stopped here); nothing of the
host's own services is touched.

    kbench lava local setup|start|run|check|stop|destroy [OPTION]...
                                        (scripts/lava_local.sh)

Who may get in: the LAVA superuser "admin" gets a random password at
setup, kept in STATE/admin-password (mode 0600, STATE mode 0700, root's);
the tools use an API token (STATE/token, 0600), never the password. Each
secret has its own mode; everything else is made as on a Debian system
(umask 022), and what LAVA's server reads as its own user (lavaserver)
has the owner and mode LAVA gives it. The Debian mirror is the host's own
(its apt sources), unless KBENCH_LAVA_MIRROR names one.

A daemon that dies is said, with the last lines of its log: start
watches all three until the scheduler has looked at the online worker's
device; run, while it waits, and also when a job is left Submitted on an
idle device past SCHEDULE_S.
"""

import argparse
import contextlib
import datetime
import glob
import http.cookiejar
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from kbtools import arch, cli, images, lava, lava_job, paths, proc
from kbtools.output import msg

SUITE = "bookworm"
WORKER = "kbench-worker"
DEVICE = "kbench-qemu01"
PG_PORT = 5432
SECRET_FILE = "admin-password"
TOKEN_FILE = "token"
# The guest: Debian 12 with what run_all.sh needs even with --no-build
# (make and the compiler: its test list goes through the Makefiles'
# library checks), python3 for the translator, a console login.
GUEST_PACKAGES = ("python3,bash,make,gcc,libc6-dev,libcap-dev,libcap2,"
                  "libnuma-dev,libnuma1,procps,util-linux,login,kmod,"
                  "iproute2")
# The kernel the guest boots unless --kernel says otherwise: Debian 12's
# (fetched once into the cache, shared with run_all.sh --kernel).
GUEST_KERNEL = "debian-6.1"
DEBIAN_SUITE = re.compile(r"^(buster|bullseye|bookworm|trixie|forky|sid|"
                          r"oldstable|stable|testing|unstable)(-updates)?$")
EXIT_FAILED, EXIT_USAGE, EXIT_MISSING = 1, 2, 3
# LAVA's server runs as this user (Debian's lava-server-gunicorn.service,
# and lava-scheduler drops to it): what the server reads must be theirs
# or readable by all, as Debian's packages make them.
LAVA_USER = "lavaserver"
# Once the worker is Online the scheduler starts, and all three are watched
# this long: a scheduler that cannot read a device dies in its first loop.
SETTLE_S = 10.0
API_WAIT_S = 120.0
WATCH_STEP_S = 0.5
DEAD_LOG_LINES = 12
# A job waits in Submitted for the scheduler's next loop (every 20 s, or
# sooner when a job arrives): past this, on an idle device, the lab is
# not scheduling and run stops waiting.
SCHEDULE_S = 120
POLL_S = 5


Failure = cli.Failure


@dataclass(frozen=True)
class Daemon:
    """One of the lab's daemons: its name in STATE (NAME.pid, NAME.log),
    what messages call it, and its command line in the chroot from the
    lab's URL and port (with its log on standard output, kept in
    STATE/NAME.log)."""
    name: str
    what: str
    command: Callable[[str, int], List[str]]


# As Debian's units start them (lava-server-gunicorn.service,
# lava-scheduler.service, lava-worker.service), but logging to stdout.
DAEMONS = (
    Daemon("gunicorn", "gunicorn (LAVA's web server and API)",
           lambda url, port: ["gunicorn", "lava_server.wsgi", "-u",
                              LAVA_USER, "-g", LAVA_USER, "--workers", "2",
                              "--bind", f"127.0.0.1:{port}", "--timeout",
                              "120"]),
    Daemon("worker", "lava-worker",
           lambda url, port: ["lava-worker", "--name", WORKER, "--url",
                              f"{url}/", "--token-file",
                              "/var/lib/lava/dispatcher/worker/token",
                              "--log-file", "-"]),
    Daemon("scheduler", "lava-scheduler",
           lambda url, port: ["lava-server", "manage", "lava-scheduler",
                              "--log-file", "-"]),
)


# ---- the host's Debian mirror ------------------------------------------------

def sources_entries(text: str, deb822: bool) -> List[Tuple[str, List[str],
                                                           List[str]]]:
    """(URI, suites, components) of each "deb" source in an apt sources
    file: one-line style (sources.list, *.list) or deb822 (*.sources)."""
    out = []
    if deb822:
        for stanza in re.split(r"\n\s*\n", text):
            fields: Dict[str, str] = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.strip()
            if fields.get("enabled", "yes").lower() == "no":
                continue
            if "deb" not in fields.get("types", "").split():
                continue
            for uri in fields.get("uris", "").split():
                out.append((uri, fields.get("suites", "").split(),
                            fields.get("components", "").split()))
        return out
    for line in text.splitlines():
        # "deb [signed-by=...] URI SUITE COMPONENT...", comments dropped.
        words = re.sub(r"\[[^]]*\]", " ", line.split("#", 1)[0]).split()
        if len(words) >= 3 and words[0] == "deb":
            out.append((words[1], [words[2]], words[3:]))
    return out


def host_mirror(patterns: Sequence[str] = paths.APT_SOURCES
                ) -> Optional[str]:
    """The first Debian archive among the host's apt sources: a "deb"
    source of a Debian suite (not -security) with component main."""
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError:
                continue
            for uri, suites, comps in sources_entries(
                    text, path.endswith(".sources")):
                if "main" in comps and any(DEBIAN_SUITE.match(s)
                                           for s in suites):
                    return uri.rstrip("/")
    return None


# ---- the local lab -------------------------------------------------------------

class Lab:
    """The chroot under BASE (KBENCH_LAVA_DIR) and its daemons."""

    def __init__(self, prog: str, base: Optional[str] = None):
        self.prog = prog
        self.base = base or os.environ.get("KBENCH_LAVA_DIR") or \
            "/var/tmp/kbench-lava"
        self.root = os.path.join(self.base, "root")
        self.srv = os.path.join(self.root, "srv", "kbench")
        self.guest = os.path.join(self.srv, "guest")
        self.state = os.path.join(self.base, "state")
        self.port = int(os.environ.get("KBENCH_LAVA_PORT") or 8790)
        self.url = f"http://127.0.0.1:{self.port}"

    def say(self, text: str) -> None:
        msg(self.prog, text)

    def state_file(self, name: str) -> str:
        return os.path.join(self.state, name)

    def mirror(self) -> str:
        m = os.environ.get("KBENCH_LAVA_MIRROR") or host_mirror()
        if not m:
            raise Failure("no Debian archive among the host's apt sources "
                          "(/etc/apt/sources.list, /etc/apt/sources.list.d/):"
                          " set KBENCH_LAVA_MIRROR", EXIT_MISSING)
        return m

    # ---- commands in the chroot ----

    def in_root(self, *cmd: str) -> List[str]:
        return ["chroot", self.root, "/usr/bin/env", "-i",
                "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
                "DEBIAN_FRONTEND=noninteractive", "HOME=/root", *cmd]

    def logged(self, cmd: Sequence[str], log: str, what: str,
               append: bool = True) -> None:
        if proc.run(cmd, log=self.state_file(log), append=append) != 0:
            raise Failure(f"{what}: see {self.state_file(log)}")

    def manage(self, *args: str) -> List[str]:
        return self.in_root("lava-server", "manage", *args)

    def apt(self, *args: str) -> List[str]:
        return self.in_root("apt-get", "-y", "-q", "-o", "Dpkg::Use-Pty=0",
                            *args)

    def pg_running(self) -> bool:
        return os.access(os.path.join(self.root, "usr/bin/pg_ctlcluster"),
                         os.X_OK) and proc.succeeds(
            self.in_root("pg_ctlcluster", "15", "main", "status"))

    def pg_start(self) -> None:
        if not self.pg_running():
            self.logged(self.in_root("pg_ctlcluster", "15", "main", "start"),
                        "postgresql.log", "PostgreSQL did not start")

    def pg_stop(self) -> None:
        if self.pg_running():
            proc.run(self.in_root("pg_ctlcluster", "15", "main", "stop"))

    # ---- mounts ----

    def mounted(self, path: str) -> bool:
        return proc.succeeds(["mountpoint", "-q", path])

    def mount(self) -> None:
        for fs, where, opts in (("proc", "proc", ["-t", "proc"]),
                                ("sysfs", "sys", ["-t", "sysfs"]),
                                ("/dev", "dev", ["--bind"]),
                                ("/dev/pts", "dev/pts", ["--bind"])):
            target = os.path.join(self.root, where)
            if not self.mounted(target) and proc.run(
                    ["mount", *opts, fs, target]) != 0:
                raise Failure(f"cannot mount {target}")

    def umount(self) -> None:
        for where in ("dev/pts", "dev", "sys", "proc"):
            target = os.path.join(self.root, where)
            if self.mounted(target) and proc.run(["umount", target]) != 0:
                proc.run(["umount", "-l", target])

    # ---- checks ----

    def check_host(self) -> None:
        if os.geteuid() != 0:
            raise Failure("needs root (chroot, mount)", EXIT_USAGE)
        for tool in ("debootstrap", "chroot", "mountpoint"):
            if shutil.which(tool) is None:
                raise Failure(f"{tool} not found (apt-get install {tool})",
                              EXIT_MISSING)

    def port_busy(self, port: int) -> bool:
        return bool(proc.capture(["ss", "-ltnH", f"sport = :{port}"]).strip())

    def check_ports(self) -> None:
        """The chroot's daemons listen on the host's network: refuse to
        start where a host service already holds their ports."""
        for port in (PG_PORT, self.port):
            if not self.port_busy(port):
                continue
            if port == PG_PORT and self.pg_running():
                continue
            if port == self.port and self.pid_of("gunicorn"):
                continue
            raise Failure(f"port {port} is in use on this machine")

    # ---- secrets ----

    def private_state(self) -> None:
        """STATE exists, root's alone (0700), every file in it 0600."""
        os.makedirs(self.state, exist_ok=True)
        os.chmod(self.state, 0o700)
        for name in os.listdir(self.state):
            os.chmod(os.path.join(self.state, name), 0o600)

    def write_secret(self, name: str, text: str) -> None:
        path = self.state_file(name)
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                     0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.chmod(path + ".tmp", 0o600)
        os.replace(path + ".tmp", path)

    def read_secret(self, name: str) -> str:
        with open(self.state_file(name), encoding="utf-8") as f:
            return f.read().strip()

    def admin_password(self) -> str:
        """The admin's password: made once, random, kept 0600."""
        path = self.state_file(SECRET_FILE)
        if not os.path.isfile(path):
            self.write_secret(SECRET_FILE, secrets.token_urlsafe(24))
        return self.read_secret(SECRET_FILE)

    def set_admin(self) -> None:
        """The superuser admin with the state's random password, set
        through Django's shell on stdin: the password is never on a
        command line (which every local user can read in /proc)."""
        script = (
            "from django.contrib.auth.models import User\n"
            "import sys\n"
            "u, _ = User.objects.get_or_create(username='admin')\n"
            "u.is_superuser = u.is_staff = True\n"
            f"u.set_password({self.admin_password()!r})\n"
            "u.save()\n")
        try:
            proc.capture(self.manage("shell"), stdin=script)
        except proc.Failed as e:
            raise Failure(f"cannot set the admin's password: {e}") from e

    def admin_token(self) -> str:
        """The admin's API token (made on first use): CSV rows
        id,secret,description."""
        def first() -> str:
            rows = proc.capture(self.manage("tokens", "list", "--user",
                                            "admin", "--csv")).splitlines()
            return rows[1].split(",")[1] if len(rows) > 1 else ""
        token = first()
        if not token:
            proc.capture(self.manage("tokens", "add", "--user", "admin"))
            token = first()
        if not token:
            raise Failure("cannot make an API token for admin")
        return token

    def worker_token(self) -> None:
        """The worker's token file, from the server's record of it."""
        f = os.path.join(self.root, "var/lib/lava/dispatcher/worker/token")
        if os.path.isfile(f) and os.path.getsize(f):
            return
        os.makedirs(os.path.dirname(f), exist_ok=True)
        out = proc.capture(self.manage("workers", "details", WORKER))
        m = re.search(r"^token *: *(\S+)", out, re.M)
        if not m:
            raise Failure(f"no token for worker {WORKER} (setup "
                          "incomplete?)")
        fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(m.group(1) + "\n")

    # ---- setup ----

    def setup(self) -> None:
        self.check_host()
        mirror = self.mirror()
        os.makedirs(self.base, exist_ok=True)
        self.private_state()
        if not os.access(os.path.join(self.root, "usr/bin/apt-get"),
                         os.X_OK):
            self.say(f"debootstrap {SUITE} into {self.root} ({mirror})")
            shutil.rmtree(self.root, ignore_errors=True)
            self.logged(self.debootstrap(self.root, mirror),
                        "debootstrap.log", "debootstrap failed",
                        append=False)
        self.lab_file("etc/apt/sources.list", f"deb {mirror} {SUITE} main\n"
                      f"deb {mirror} {SUITE}-updates main\n")
        # No daemon starts while packages install: start does that.
        self.lab_file("usr/sbin/policy-rc.d", "#!/bin/sh\nexit 101\n", 0o755)
        try:
            self.mount()
            self.check_ports()
            self.logged(self.apt("update"), "apt.log",
                        "apt-get update failed", append=False)
            self.say("installing PostgreSQL")
            self.install("postgresql")
            self.pg_start()
            self.say("installing lava-server, lava-dispatcher, qemu (a few "
                     "minutes)")
            self.install("lava-server", "lava-dispatcher", "qemu-system-x86",
                         "gunicorn", "python3-yaml", "ca-certificates",
                         "cpio")
            self.configure()
        finally:
            self.pg_stop()
            self.umount()
            self.private_state()
        self.say(f"setup done; the admin's password is in "
                 f"{self.state_file(SECRET_FILE)} (root's alone); next: "
                 f"{self.prog.rsplit(' ', 1)[0]} start")

    def debootstrap(self, root: str, mirror: str, *opts: str) -> List[str]:
        """debootstrap's command line, the packages kept in the cache."""
        return ["debootstrap", "--variant=minbase",
                f"--cache-dir={self.debs()}", *opts, SUITE, root, mirror]

    def debs(self) -> str:
        """The Debian packages both debootstraps and the chroot's apt
        fetched, kept between labs (KBENCH_CACHE/lava/debs): a lab set
        up again downloads nothing it had."""
        d = os.path.join(paths.cache_dir(), "lava", "debs")
        os.makedirs(d, exist_ok=True)
        return d

    def install(self, *packages: str) -> None:
        """apt-get install in the chroot, from the cache's packages first;
        what it fetched is kept in the cache."""
        archives = os.path.join(self.root, "var/cache/apt/archives")
        link_debs(self.debs(), archives)
        self.logged(self.apt("install", "--no-install-recommends",
                             *packages), "apt.log",
                    f"installing {' '.join(packages)} failed")
        link_debs(archives, self.debs())
        proc.run(self.apt("clean"))

    def lab_file(self, rel: str, text: str, mode: int = 0o644,
                 owner: Optional[str] = None) -> None:
        """A file of the chroot that its programs read, with the mode (and
        owner, a user of the chroot's, its group of the same name) that
        Debian's packages give such files, whatever the caller's umask."""
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path + ".tmp", mode)
        if owner is not None:
            os.chown(path + ".tmp", *self.lab_ids(owner))
        os.replace(path + ".tmp", path)

    def lab_ids(self, user: str) -> Tuple[int, int]:
        """(uid, gid) of USER and its group in the chroot (not the
        host's: LAVA's users exist only there)."""
        ids = []
        for db in ("passwd", "group"):
            with open(os.path.join(self.root, "etc", db),
                      encoding="utf-8") as f:
                ids += [int(line.split(":")[2]) for line in f
                        if line.split(":")[0] == user]
        if len(ids) != 2:
            raise Failure(f"no user and group {user} in {self.root}")
        return ids[0], ids[1]

    def configure(self) -> None:
        self.lab_file("etc/lava-server/settings.d/50-kbench.yaml",
                      'ALLOWED_HOSTS: ["127.0.0.1", "localhost"]\n')
        self.logged(self.manage("migrate", "--noinput"), "manage.log",
                    "lava-server manage migrate failed", append=False)
        self.set_admin()
        for cmd in (("device-types", "add", "qemu"),
                    ("workers", "add", WORKER)):
            proc.run(self.manage(*cmd), log=self.state_file("manage.log"),
                     append=True)
        # As LAVA writes a device dictionary set through its API: the
        # server's, readable by all (lava-scheduler reads it as the
        # server's user).
        self.lab_file(f"etc/lava-server/dispatcher-config/devices/"
                      f"{DEVICE}.jinja2",
                      "{% extends 'qemu.jinja2' %}\n"
                      "{% set netdevice = 'user' %}\n"
                      "{% set memory = 2048 %}\n"
                      "{% set no_kvm = True %}\n", owner=LAVA_USER)
        proc.run(self.manage("devices", "add", "--device-type", "qemu",
                             "--worker", WORKER, DEVICE),
                 log=self.state_file("manage.log"), append=True)

    # ---- daemons ----

    def pid_of(self, name: str) -> int:
        try:
            with open(self.state_file(f"{name}.pid")) as f:
                return int(f.read().strip() or 0)
        except (OSError, ValueError):
            return 0

    def alive(self, pid: int) -> bool:
        """True when PID runs (a zombie, dead but not yet reaped by
        whoever inherited it, does not)."""
        if pid <= 0:
            return False
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        return state not in ("Z", "X")

    def start_daemon(self, daemon: "Daemon"
                     ) -> "Optional[subprocess.Popen[bytes]]":
        """The daemon in the chroot in a session of its own, its pid in
        STATE/NAME.pid, its output in STATE/NAME.log; None when it runs
        already."""
        if self.alive(self.pid_of(daemon.name)):
            return None
        log = os.open(self.state_file(f"{daemon.name}.log"),
                      os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            child = subprocess.Popen(
                ["chroot", self.root, "/usr/bin/env", "-i",
                 "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8",
                 "HOME=/root", *daemon.command(self.url, self.port)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True)
        finally:
            os.close(log)
        self.write_secret(f"{daemon.name}.pid", str(child.pid))
        return child

    def dead(self, daemon: "Daemon", status: Optional[int] = None) -> Failure:
        """The failure that says DAEMON is not running, with the last
        lines of its log."""
        log = self.state_file(f"{daemon.name}.log")
        how = f" (exit status {status})" if status is not None else ""
        last = proc.tail(log, DEAD_LOG_LINES).rstrip()
        return Failure(f"{daemon.what} is not running{how}; the last lines "
                       f"of {log}:\n" + (last or "(empty)"))

    def watch(self, daemons: Sequence["Daemon"],
              children: Dict[str, "subprocess.Popen[bytes]"],
              seconds: float, until: Optional[Callable[[], bool]] = None
              ) -> bool:
        """Watch DAEMONS for SECONDS (until UNTIL() is true, when given;
        its last answer returned): the first one found dead is a Failure
        naming it. CHILDREN are the ones this process started (their exit
        status known), the others are checked by pid."""
        end = time.monotonic() + seconds
        while True:
            for d in daemons:
                child = children.get(d.name)
                if child is not None:
                    if child.poll() is not None:
                        raise self.dead(d, child.returncode)
                elif not self.alive(self.pid_of(d.name)):
                    raise self.dead(d)
            if until is not None and until():
                return True
            if time.monotonic() >= end:
                return False
            time.sleep(WATCH_STEP_S)

    def stop_daemon(self, name: str) -> None:
        """End the session start_daemon began (its qemu too)."""
        pid = self.pid_of(name)
        if self.alive(pid):
            for sig, wait in ((15, 10.0), (9, 0.0)):
                try:
                    os.killpg(pid, sig)
                except (ProcessLookupError, PermissionError):
                    break
                end = time.monotonic() + wait
                while self.alive(pid) and time.monotonic() < end:
                    time.sleep(0.2)
                if not self.alive(pid):
                    break
        try:
            os.unlink(self.state_file(f"{name}.pid"))
        except FileNotFoundError:
            pass

    def api_up(self) -> bool:
        try:
            with lava.direct_opener().open(f"{self.url}/api/v0.2/", timeout=5):
                return True
        except (OSError, urllib.error.URLError):
            return False

    def api(self, path: str, data: Optional[bytes] = None) -> bytes:
        """A REST call with the admin's API token (never the password)."""
        try:
            return lava.Api(self.url,
                            self.read_secret(TOKEN_FILE)).call(path, data)
        except ValueError as e:
            raise Failure(str(e)) from e

    def start(self) -> None:
        self.check_host()
        if not os.access(os.path.join(self.root, "usr/bin/lava-server"),
                         os.X_OK):
            raise Failure(f"no LAVA in {self.root}: run "
                          f"'{self.prog.rsplit(' ', 1)[0]} setup' first")
        self.private_state()
        try:
            self.mount()
            self.check_ports()
            self.pg_start()
            self.worker_token()
            since = time.time()
            children = self.start_daemons(DAEMONS[:2])
            # While gunicorn starts: a lab set up before the password
            # was random gets one now; the tools' token.
            self.set_admin()
            self.write_secret(TOKEN_FILE, self.admin_token())
            if not self.watch(DAEMONS[:2], children, API_WAIT_S,
                              lambda: self.worker_online(since)):
                raise Failure(
                    f"the LAVA API did not come up with {WORKER} Online "
                    f"within {API_WAIT_S:g} s: see "
                    f"{self.state_file('gunicorn.log')} and "
                    f"{self.state_file('worker.log')}")
            # The scheduler last: its first loop then looks at the
            # online worker's devices, so a device it cannot use shows
            # within SETTLE_S, not one 20 s loop later.
            children.update(self.start_daemons(DAEMONS[2:]))
            self.watch(DAEMONS, children, SETTLE_S)
        except BaseException:
            # Nothing half-started stays: the logs tell what happened.
            self.say(f"stopping the lab again (its logs stay in "
                     f"{self.state})")
            self.stop()
            raise
        self.say(f"LAVA is up: {self.url}/ (logs in {self.state}; the "
                 f"admin's password in {self.state_file(SECRET_FILE)})")

    def start_daemons(self, daemons: Sequence[Daemon]
                      ) -> Dict[str, "subprocess.Popen[bytes]"]:
        """Start those of DAEMONS not running; the ones started."""
        children = {}
        for d in daemons:
            child = self.start_daemon(d)
            if child is not None:
                children[d.name] = child
        return children

    def worker_online(self, since: float) -> bool:
        """True when the API answers and says the worker is Online with a
        ping after SINCE (a time.time()): the database of a lab stopped
        a moment ago still says Online."""
        if not self.api_up():
            return False
        try:
            info = json.loads(self.api(f"workers/{WORKER}/"))
            ping = datetime.datetime.fromisoformat(
                str(info.get("last_ping")).replace("Z", "+00:00"))
        except (Failure, ValueError, AttributeError):
            return False
        return info.get("state") == "Online" and ping.timestamp() > since

    def stop(self) -> None:
        for d in reversed(DAEMONS):
            self.stop_daemon(d.name)
        if self.mounted(os.path.join(self.root, "proc")):
            self.pg_stop()
        self.umount()
        self.say("stopped")

    def mounts_below(self) -> List[str]:
        """The mount points at or below BASE (from /proc/self/mountinfo,
        its octal escapes undone)."""
        base = os.path.realpath(self.base)
        out = []
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                point = re.sub(r"\\([0-7]{3})",
                               lambda m: chr(int(m.group(1), 8)),
                               line.split()[4])
                if point == base or point.startswith(base.rstrip("/") + "/"):
                    out.append(point)
        return out

    def destroy(self) -> None:
        """Stop the lab, then remove BASE: never while anything below it
        is still mounted (the chroot's /dev is the host's own). Signals
        wait until it is done: an interrupted destroy would leave a
        stopped lab half removed."""
        with proc.deferred_signals():
            self.stop()
            left = self.mounts_below()
            if left:
                raise Failure(f"still mounted, {self.base} left as it is: "
                              f"{' '.join(left)}")
            shutil.rmtree(self.base, ignore_errors=True)
            if os.path.exists(self.base):
                raise Failure(f"cannot remove all of {self.base}")
            self.say(f"removed {self.base}")

    # ---- check: who gets in ----

    def check(self) -> int:
        """0 when admin/admin is refused, the state is root's alone and
        the token works; 1 otherwise (each problem said)."""
        bad = [f"{p} is readable or writable by others"
               for p in [self.state] + glob.glob(os.path.join(self.state,
                                                              "*"))
               if os.stat(p).st_mode & 0o077]
        if login_accepted(self.url, "admin", "admin"):
            bad.append("admin/admin logs in")
        for b in bad:
            self.say(b)
        if not bad:
            self.say("admin/admin is refused; the state is root's alone")
        return 1 if bad else 0

    # ---- run ----

    def run(self, argv: Sequence[str]) -> None:
        ap = cli.UsageParser(prog=f"{self.prog}")
        ap.add_argument("--kernel", default="")
        ap.add_argument("-t", "--test", action="append", default=[])
        ap.add_argument("-r", "--repeat")
        ap.add_argument("--timeout")
        ap.add_argument("--full", action="store_true")
        ap.add_argument("--machine-slow", action="store_true")
        ap.add_argument("--icount", action="store_true")
        ap.add_argument("--keep-rootfs", action="store_true")
        a = ap.parse_args(list(argv))
        a.kernel = a.kernel or GUEST_KERNEL
        images.check(arch.X86_64, a.kernel)
        job_args: List[str] = []
        for t in a.test:
            job_args += ["-t", t]
        for opt, value in (("--repeat", a.repeat), ("--timeout", a.timeout)):
            if value is not None:
                job_args += [opt, value]
        job_args += ["--full"] * a.full + ["--machine-slow"] * a.machine_slow
        job_args += ["--icount"] * a.icount
        self.check_host()
        if not self.api_up():
            raise Failure("LAVA is not running: "
                          f"'{self.prog.rsplit(' ', 1)[0]} start' first")
        try:
            self.run_job(a, job_args)
        finally:
            self.private_state()

    def run_job(self, a: "argparse.Namespace", job_args: List[str]) -> None:
        if not a.keep_rootfs or not os.path.isfile(
                os.path.join(self.srv, "rootfs.cpio")):
            self.make_guest()
            self.pack_guest()
        kernel = images.resolve(arch.X86_64, a.kernel, self.prog).file
        shutil.copy(kernel, os.path.join(self.srv, "vmlinuz"))
        os.chmod(os.path.join(self.srv, "vmlinuz"), 0o644)
        job = self.state_file("job.yaml")
        # The job as lava_job.py writes it (kbtools.lava_job), its
        # messages on stderr.
        with contextlib.redirect_stdout(sys.stderr):
            rc = lava_job.main(["--kernel", "file:///srv/kbench/vmlinuz",
                                "--rootfs", "file:///srv/kbench/rootfs.cpio",
                                "--init", "/sbin/kbench-init", "--job-name",
                                "kbench local", *job_args, "-o", job],
                               "lava_job.py")
        if rc != 0:
            raise Failure("lava_job.py failed")
        with open(job, encoding="utf-8") as f:
            reply = json.loads(self.api("jobs/", json.dumps(
                {"definition": f.read()}).encode()))
        ids = reply.get("job_ids") or []
        if not ids or not str(ids[0]).isdigit():
            raise Failure(f"job submission failed: {reply!r}")
        jid = str(ids[0])
        clock = proc.Clock()
        self.say(f"job {jid} submitted; waiting "
                 f"({self.url}/scheduler/job/{jid})")
        finished = False
        try:
            info = self.wait_job(jid, job_minutes(job) * 60 + POLL_S * 12)
            finished = True
        finally:
            if not finished:
                self.cancel_job(jid)
        print(f"job {info.get('id')}: {info.get('health')}", flush=True)
        self.say(f"job {jid} took {clock.seconds()} s from submission to "
                 "its end")
        self.write_secret("tests.json", self.api(
            f"jobs/{jid}/tests/?limit=10000").decode("utf-8", "replace"))
        self.write_secret("log.yaml", self.api(
            f"jobs/{jid}/logs/").decode("utf-8", "replace"))
        # The job's results against its KTAP (kbtools.lava --check-job).
        try:
            status = lava.check_job(self.state_file("tests.json"),
                                    self.state_file("log.yaml"), job,
                                    "kbtools.lava")
        except (OSError, ValueError) as e:
            raise Failure(f"cannot check the job's results: "
                          f"{' '.join(str(e).split())}", 2) from e
        if status:
            raise Failure("the job's results differ from its KTAP", status)

    def job_state(self, jid: str) -> Dict[str, str]:
        info = json.loads(self.api(f"jobs/{jid}/"))
        if not isinstance(info, dict):
            raise Failure(f"LAVA API jobs/{jid}/: not a job: {info!r}")
        return info

    def wait_job(self, jid: str, limit_s: float) -> Dict[str, str]:
        """The job's record once Finished. A daemon that dies meanwhile
        fails at once, naming it; so does a job left Submitted on an
        idle device past SCHEDULE_S (the scheduler is not scheduling),
        left Scheduled as long (the worker does not start it), or not
        finished past LIMIT_S (its own timeouts and some more)."""
        start = time.monotonic()
        since: Dict[str, float] = {}
        while True:
            info = self.job_state(jid)
            state = str(info.get("state"))
            if state == "Finished":
                return info
            now = time.monotonic()
            since.setdefault(state, now)
            waited = now - since[state]
            where = (f"job {jid} has been {state} (health "
                     f"{info.get('health')}) for {waited:.0f} s")
            if state == "Submitted" and waited > SCHEDULE_S and \
                    self.device_idle():
                raise Failure(
                    f"{where} with {DEVICE} Idle: the scheduler looks at its "
                    f"queue every 20 s, so it is not scheduling; see "
                    f"{self.state_file('scheduler.log')}")
            if state == "Scheduled" and waited > SCHEDULE_S:
                raise Failure(
                    f"{where}: the worker polls every 20 s, so it is not "
                    f"starting it; see {self.state_file('worker.log')}")
            if now - start > limit_s:
                raise Failure(f"{where}, {now - start:.0f} s since it was "
                              f"submitted: past its own timeouts")
            try:
                self.watch(DAEMONS, {}, POLL_S)
            except Failure as e:
                raise Failure(f"{where}: {e}") from None

    def device_idle(self) -> bool:
        info = json.loads(self.api(f"devices/{DEVICE}/"))
        return isinstance(info, dict) and info.get("state") == "Idle"

    def cancel_job(self, jid: str) -> None:
        """Cancel a job left behind (run failed or was interrupted): a
        lab put right later must not run it."""
        try:
            self.api(f"jobs/{jid}/cancel/")
            self.say(f"job {jid} cancelled")
        except Failure as e:
            self.say(f"could not cancel job {jid}: {e}")

    def write_guest_init(self) -> None:
        """The guest's init: the mounts the collection needs, then a root
        login on the serial console (LAVA's auto_login), again and again."""
        init = os.path.join(self.guest, "sbin", "kbench-init")
        with open(paths.script("scripts/guest/guest_mounts.sh"),
                  encoding="utf-8") as f:
            mounts = f.read()
        with open(init, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n" + mounts + GUEST_INIT_TAIL)
        os.chmod(init, 0o755)

    def copy_collection(self) -> None:
        """The built collection (no .git, no caches) and the kselftest
        files of the provisioned tree that its Makefiles read."""
        from kbtools import ksrc
        tree = ksrc.provision(paths.cache_dir(), ksrc.DEFAULT_VERSION,
                              self.prog)
        dest = os.path.join(self.guest, "opt", "kbench")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(paths.TOP, dest, symlinks=True, ignore=lambda d, n: [
            x for x in n if d == paths.TOP and x in (".git", ".cache", "out",
                                                     "build")])
        sel = os.path.join(tree, "tools", "testing", "selftests")
        mini = os.path.join(dest, ".cache", os.path.basename(tree), "tools",
                            "testing", "selftests")
        os.makedirs(mini)
        for name in ("lib.mk", "kselftest.h", "kselftest_harness.h"):
            shutil.copy2(os.path.join(sel, name), mini)
        shutil.copytree(os.path.join(sel, "kselftest"),
                        os.path.join(mini, "kselftest"), symlinks=True)
        open(os.path.join(dest, ".cache", os.path.basename(tree),
                          ".kbench-provisioned"), "w").close()

    def make_guest(self) -> None:
        if not os.access(os.path.join(self.guest, "usr/bin/python3"),
                         os.X_OK):
            self.say(f"debootstrap the guest rootfs into {self.guest} (once)")
            shutil.rmtree(self.guest, ignore_errors=True)
            os.makedirs(self.srv, exist_ok=True)
            self.logged(self.debootstrap(self.guest, self.mirror(),
                                         f"--include={GUEST_PACKAGES}"),
                        "guest.log", "debootstrap of the guest failed",
                        append=False)
            for junk in ("var/cache/apt/archives", "var/lib/apt/lists",
                         "usr/share/doc", "usr/share/man",
                         "usr/share/locale"):
                shutil.rmtree(os.path.join(self.guest, junk),
                              ignore_errors=True)
            # The guest's root logs in on its serial console without a
            # password: LAVA's auto_login; the guest is reached by its
            # console only (no network service in it).
            self.logged(["chroot", self.guest, "passwd", "-d", "root"],
                        "guest.log", "cannot clear the guest's root password")
            self.lab_file("srv/kbench/guest/etc/hostname", "kbench\n")
        self.write_guest_init()
        self.copy_collection()

    def pack_guest(self) -> None:
        self.say("packing the guest rootfs")
        # Uncompressed: LAVA unpacks and repacks it to append its overlay,
        # and the guest's kernel unpacks it under TCG; gzip costs minutes.
        if proc.run(self.in_root(
                "sh", "-c", "cd /srv/kbench/guest && find . -xdev | cpio -o "
                "-H newc --quiet >/srv/kbench/rootfs.cpio.tmp")) != 0:
            raise Failure("cannot pack the guest rootfs")
        with_gz = os.path.join(self.srv, "rootfs.cpio.gz")
        if os.path.exists(with_gz):
            os.unlink(with_gz)
        os.replace(os.path.join(self.srv, "rootfs.cpio.tmp"),
                   os.path.join(self.srv, "rootfs.cpio"))


def job_minutes(path: str) -> float:
    """The job's own timeout (timeouts: job: minutes) in its definition."""
    import yaml  # Debian: python3-yaml, as lava_job.py needs
    with open(path, encoding="utf-8") as f:
        job = yaml.safe_load(f)
    try:
        return float(job["timeouts"]["job"]["minutes"])
    except (KeyError, TypeError, ValueError):
        raise Failure(f"{path}: no job timeout in minutes") from None


# After the mounts every guest of ours has (scripts/guest/guest_mounts.sh): a
# root login on the serial console, again and again.
GUEST_INIT_TAIL = """\
mount -t tmpfs tmpfs /run
hostname kbench
while :; do
\t/sbin/agetty --noclear -L ttyS0 115200 vt100
done
"""


def link_debs(src: str, dest: str) -> None:
    """The .deb files of SRC that DEST lacks, hard-linked (copied across
    file systems)."""
    os.makedirs(dest, exist_ok=True)
    for path in glob.glob(os.path.join(src, "*.deb")):
        target = os.path.join(dest, os.path.basename(path))
        if os.path.exists(target):
            continue
        try:
            os.link(path, target)
        except OSError:
            shutil.copy2(path, target)


def login_accepted(url: str, user: str, password: str) -> bool:
    """True when Django's login form at URL/accounts/login/ takes USER
    and PASSWORD (a redirect away from the form); False when it shows
    the form again or cannot be reached. LAVA marks its CSRF cookie
    Secure, which urllib keeps off plain HTTP: it is sent back by hand."""
    jar = http.cookiejar.CookieJar()
    login = f"{url}/accounts/login/"
    try:
        with lava.direct_opener(jar).open(login, timeout=30) as r:
            page = r.read().decode("utf-8", "replace")
        m = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        form = urllib.parse.urlencode({
            "csrfmiddlewaretoken": m.group(1) if m else "",
            "username": user, "password": password, "next": "/"}).encode()
        cookies = "; ".join(f"{c.name}={c.value}" for c in jar)
        req = urllib.request.Request(login, data=form, headers={
            "Referer": login, "Cookie": cookies})
        with lava.direct_opener().open(req, timeout=30) as r:
            landed: str = urllib.parse.urlparse(r.geturl()).path
            return landed != "/accounts/login/"
    except (OSError, urllib.error.URLError):
        return False


USAGE = """\
Usage: {prog} setup|start|run|check|stop|destroy [OPTION]...
A throwaway LAVA (server, worker and one qemu device) in a Debian 12
chroot under {base} (KBENCH_LAVA_DIR), for the kbench LAVA job.

  setup     debootstrap the chroot, install PostgreSQL and LAVA 2023.01
            from Debian (the packages kept in .cache/lava/debs,
            KBENCH_CACHE), create the admin (a random password, kept in
            {state}/{secret}, mode 0600), the qemu device and the
            worker (about 2 GB of disk, 5-20 minutes; once)
  start     mount /proc, /sys, /dev into the chroot, start PostgreSQL,
            gunicorn (127.0.0.1:{port}, KBENCH_LAVA_PORT), lava-worker and
            lava-scheduler; the tools' API token in {state}/{token}.
            Fails, naming it with its log's last lines, when a daemon
            dies within {settle:g} s of the worker coming Online
  run       pack the built collection into a guest rootfs (debootstrapped
            once), submit the job (scripts/lava_job.py), wait for it, print
            its results from the REST API as a table and check them against
            the KTAP the job printed. Fails with the job's state when a
            daemon dies, or when the job stays Submitted on an idle device
            (or Scheduled) past {schedule} s: the scheduler looks every 20 s
  check     admin/admin must be refused and the state root's alone
  stop      stop what start started (by the pids it recorded), unmount
  destroy   stop, then remove {base} (never while anything in it is
            mounted; signals wait until it is done)

run options:
  --kernel IMAGE   the kernel to boot: a file, or debian-6.1 (default:
                   Debian 12's, fetched once into the cache as run_all.sh
                   --kernel does), debian-6.12
  --icount         exact mode: QEMU's instruction counter drives the guest,
                   every program runs twice, the measurements come back in
                   insn (guest instructions per operation)
  -t NAME, -r N, --repeat N, --full, --timeout SECS, --machine-slow
                   passed to scripts/lava_job.py (run_all.sh's options)
  --keep-rootfs    reuse the guest rootfs packed by the last run

Needs root, debootstrap, a Debian archive among the host's apt sources
(or KBENCH_LAVA_MIRROR) and the collection built (make).
Exit status: 0 done; 1 a step failed; 2 bad usage or not root; 3 a
missing host tool or mirror; 130 interrupted.
"""


def main(argv: Sequence[str], prog: str = "kbench lava local") -> int:
    lab = Lab(prog)
    if not argv:
        return cli.UsageParser(prog=prog).error(
            "no command (setup, start, run, check, stop, destroy)")
    cmd, rest = argv[0], list(argv[1:])
    if cmd in ("-h", "--help"):
        print(USAGE.format(prog=prog, base=lab.base, state=lab.state,
                           secret=SECRET_FILE, token=TOKEN_FILE,
                           port=lab.port, settle=SETTLE_S,
                           schedule=SCHEDULE_S), end="")
        return 0
    actions = {"setup": lab.setup, "start": lab.start, "stop": lab.stop,
               "destroy": lab.destroy}
    if cmd not in actions and cmd not in ("run", "check"):
        cli.UsageParser(prog=prog).error(f"unknown command '{cmd}'")
    if cmd != "run" and rest:
        cli.UsageParser(prog=prog).error(f"unknown option '{rest[0]}'")
    # The lab's files are made as Debian's tools make a system's (umask
    # 022: what debootstrap, dpkg's maintainer scripts and LAVA, which
    # reads them as its own users, expect), whatever the caller's umask;
    # the secrets and STATE have modes of their own (0600, 0700).
    os.umask(0o022)

    def body() -> int:
        if cmd == "run":
            lab.run(rest)
        elif cmd == "check":
            return lab.check()
        else:
            actions[cmd]()
        return 0
    return cli.orchestrate(prog, body)
