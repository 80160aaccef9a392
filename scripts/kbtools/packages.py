# SPDX-License-Identifier: GPL-2.0
"""The Debian packages kbench uses (packages.txt at the top of the clone)
and the set-up that installs a command's share of them.

A command (a "use": run_all.sh, check, check-all, ci) sets up the packages
of its purposes. set_up() finds the missing ones and, as root on Debian or
Ubuntu, installs them with apt-get, one line saying which and how to undo
it; otherwise it says what is missing and how to install it, and the
command stops with exit status 4 (nothing could run). scripts/setup.sh
calls it (after getting python3 onto a bare root); scripts/packages.py is
the command line.

The install lines and package table of README.md and docs/*.md are
generated from the list (readme_render); docs_problems() says where those
files disagree.
"""

import dataclasses
import glob
import io
import os
import re
import shutil
import subprocess
import sys
from typing import Iterable, Mapping, Sequence, TextIO

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIST = os.path.join(TOP, "packages.txt")
# Left out when KSRC names a kernel tree of the user's own.
HARNESS = "harness"
INSTALL = ("apt-get", "install", "--no-install-recommends")
EXIT_MISSING = 4


class ListError(Exception):
    """packages.txt (or the README's generated parts) cannot be read."""


@dataclasses.dataclass(frozen=True)
class Package:
    name: str
    purpose: str
    probes: tuple[str, ...]


@dataclasses.dataclass
class PackageList:
    purposes: dict[str, str]
    uses: dict[str, tuple[str, ...]]
    packages: list[Package]

    def purposes_of(self, use: str) -> tuple[str, ...]:
        if use not in self.uses:
            raise ListError(f"unknown use '{use}' (known: {', '.join(self.uses)})")
        return self.uses[use]

    def of_use(self, use: str, ksrc: bool = False) -> list[Package]:
        """USE's packages in list order; without the harness when KSRC."""
        want = set(self.purposes_of(use))
        if ksrc:
            want.discard(HARNESS)
        return [p for p in self.packages if p.purpose in want]

    def names_of(self, use: str, without: str | None = None) -> list[str]:
        """USE's package names, less those of use WITHOUT."""
        drop = {p.name for p in self.of_use(without)} if without else set()
        return [p.name for p in self.of_use(use) if p.name not in drop]

    def get(self, name: str) -> Package | None:
        for p in self.packages:
            if p.name == name:
                return p
        return None

    def package_of(self, command: str) -> Package | None:
        """The package whose probes name COMMAND."""
        for p in self.packages:
            if command in p.probes:
                return p
        return None


def parse(text: str, where: str = "packages.txt") -> PackageList:
    """The list of TEXT (packages.txt's format); ListError names the line.
    Comments take whole lines: the bash readers (awk) see every field."""
    plist = PackageList({}, {}, [])
    seen: dict[str, int] = {}
    order = ("purpose", "use", "package")
    stage = 0
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        at = f"{where}:{n}"
        kind = words[0]
        if kind not in order:
            raise ListError(f"{at}: unknown kind of line '{kind}' (purpose, use or package)")
        if "#" in line:
            raise ListError(f"{at}: a comment takes a line of its own")
        if order.index(kind) < stage:
            raise ListError(f"{at}: a {kind} line after the {order[stage]} lines")
        stage = order.index(kind)
        if len(words) < 3:
            raise ListError(f"{at}: a {kind} line needs at least two fields")
        if kind == "purpose":
            if words[1] in plist.purposes:
                raise ListError(f"{at}: purpose '{words[1]}' again")
            plist.purposes[words[1]] = " ".join(words[2:])
            continue
        for w in words[2:] if kind == "use" else words[1:2]:
            if w not in plist.purposes:
                raise ListError(f"{at}: unknown purpose '{w}'")
        if kind == "use":
            if words[1] in plist.uses:
                raise ListError(f"{at}: use '{words[1]}' again")
            plist.uses[words[1]] = tuple(words[2:])
            continue
        name = words[2]
        if not re.fullmatch(r"[a-z0-9][a-z0-9.+-]+", name):
            raise ListError(f"{at}: '{name}' is not a Debian package name")
        if name in seen:
            raise ListError(f"{at}: package '{name}' again (line {seen[name]})")
        seen[name] = n
        plist.packages.append(Package(name, words[1], tuple(words[3:])))
    if not plist.packages:
        raise ListError(f"{where}: no package")
    return plist


def load(path: str = LIST) -> PackageList:
    try:
        with open(path, encoding="utf-8") as f:
            return parse(f.read(), os.path.basename(path))
    except OSError as e:
        raise ListError(f"cannot read {path}: {e.strerror}") from e


def title(use: str) -> str:
    """How USE is run: a file as it is, a make target with make."""
    return use if "." in use or "/" in use else f"make {use}"


def install_line(names: Sequence[str], update: bool = False) -> str:
    line = " ".join(INSTALL + tuple(names))
    return f"apt-get update && {line}" if update else line


def undo_line(names: Sequence[str]) -> str:
    return " ".join(("apt-get", "purge", "--autoremove") + tuple(names))


def purpose_table(plist: PackageList, packages: Iterable[Package]) -> list[str]:
    """'  NAME  PURPOSE: what for' lines."""
    pkgs = list(packages)
    width = max((len(p.name) for p in pkgs), default=0)
    return [f"  {p.name:<{width}}  {p.purpose}: {plist.purposes[p.purpose]}"
            for p in pkgs]


# ---- Python modules of Debian packages ---------------------------------------

# The interpreter Debian's python3-* packages are for.
DEBIAN_PYTHON = "/usr/bin/python3"


def module_missing(module: str, package: str, python: str = sys.executable,
                   debian: str = DEBIAN_PYTHON) -> str:
    """What to say when PYTHON (this interpreter) cannot import MODULE,
    which Debian's PACKAGE installs: for Debian's python3 alone, so when
    PYTHON is another one (a pyenv shim's, a venv's) say which lacks it,
    and whether Debian's has it."""
    if not os.access(debian, os.X_OK) or \
            os.path.realpath(debian) == os.path.realpath(python):
        return f"{module} is missing: apt-get install {package}"
    if subprocess.run([debian, "-c", f"import {module}"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                      check=False).returncode == 0:
        return (f"{module} is missing from this python3 ({python}), not from"
                f" Debian's {debian}, which has it ({package}): run with"
                f" {debian}")
    return (f"{module} is missing: apt-get install {package}, then run with"
            f" Debian's {debian} (this python3, {python}, does not see"
            " Debian's packages)")


def debian_python(system: "System | None" = None,
                  debian: str = DEBIAN_PYTHON) -> bool:
    """Debian's python3 is here and dpkg has it installed (Debian,
    Ubuntu): the one the python3-* packages are for."""
    return os.access(debian, os.X_OK) and \
        (system or System()).dpkg_status(["python3"]).get("python3") == \
        "installed"


def other_python(python: str | None, debian: str = DEBIAN_PYTHON) -> bool:
    """PYTHON (a path, or None for none) is not Debian's python3."""
    return python is None or \
        os.path.realpath(python) != os.path.realpath(debian)


def debian_python_first(directory: str, system: "System | None" = None,
                        debian: str = DEBIAN_PYTHON) -> str:
    """As scripts/lib.bash's use_debian_python: when PATH's python3 is
    not Debian's (a pyenv shim, a venv) and Debian's is installed, a link
    to it goes into DIRECTORY, first in os.environ's PATH, so that every
    python3 started from here sees Debian's packages. What to say about
    it; '' when nothing changed."""
    have = shutil.which("python3")
    if not other_python(have, debian) or not debian_python(system, debian):
        return ""
    try:
        os.makedirs(directory, exist_ok=True)
        link = os.path.join(directory, "python3")
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(debian, link)
    except OSError:
        return (f"python3 in PATH is {have or 'none'}, not Debian's {debian}"
                f" (which has the python3-* packages), and {directory}"
                f" cannot be written: the tools run with {have or 'none'}")
    os.environ["PATH"] = directory + os.pathsep + os.environ.get("PATH", "")
    return (f"python3 in PATH is {have or 'none'}; the tools run with"
            f" Debian's {debian}, which has the python3-* packages (first in"
            f" PATH through {directory})")


# ---- the machine -----------------------------------------------------------

class System:
    """The machine as the set-up sees it (tests give a fake one)."""

    os_release = "/etc/os-release"

    def euid(self) -> int:
        return os.geteuid()

    def which(self, command: str) -> str | None:
        return shutil.which(command)

    def exists(self, pattern: str) -> bool:
        return bool(glob.glob(pattern))

    def os_ids(self) -> set[str]:
        """ID and ID_LIKE of os-release, lower case."""
        ids: set[str] = set()
        try:
            with open(self.os_release, encoding="utf-8") as f:
                for line in f:
                    key, _, value = line.strip().partition("=")
                    if key in ("ID", "ID_LIKE"):
                        ids.update(value.strip("\"'").lower().split())
        except OSError:
            pass
        return ids

    def dpkg_status(self, names: Sequence[str]) -> dict[str, str]:
        """{package: dpkg's status ('installed', 'unpacked', ...)} of
        NAMES that dpkg knows; 'installed' wins for a multi-arch one."""
        p = subprocess.run(
            ["dpkg-query", "-W", "-f=${Package}\\t${db:Status-Status}\\n",
             *names], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, check=False)
        status: dict[str, str] = {}
        for line in p.stdout.splitlines():
            name, _, state = line.partition("\t")
            if status.get(name) != "installed":
                status[name] = state
        return status

    def apt_candidates(self, names: Sequence[str]) -> set[str]:
        """Those of NAMES that apt's indices have a version of to install
        (apt-cache policy; apt-cache show succeeds when it finds any)."""
        p = subprocess.run(["apt-cache", "policy", *names], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, check=False)
        found: set[str] = set()
        name = ""
        for line in p.stdout.splitlines():
            if line.endswith(":") and not line.startswith(" "):
                name = line[:-1].split(":")[0]
            elif line.startswith("  Candidate: ") and line != "  Candidate: (none)":
                found.add(name)
        return found

    def apt_get(self, args: Sequence[str]) -> int:
        """apt-get ARGS, quiet: its errors on stderr (its whole output is
        in /var/log/apt/term.log), nothing on stdout."""
        sys.stderr.flush()
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        return subprocess.run(["apt-get", "-qq", *args], stdout=subprocess.DEVNULL,
                              env=env, check=False).returncode


class BareRoot(System):
    """A bare Debian root (debootstrap --variant=minbase), as root: of the
    list only the Essential packages installed, apt's indices not fetched
    yet; apt-get does what it is asked. The README's sample set-up runs on
    it (and tests start from it)."""

    ESSENTIAL = ("dpkg", "util-linux")

    def __init__(self) -> None:
        self.have: set[str] = set(self.ESSENTIAL)
        self.indices = False

    def euid(self) -> int:
        return 0

    def which(self, command: str) -> str | None:
        return f"/usr/bin/{command}"

    def exists(self, pattern: str) -> bool:
        return False

    def os_ids(self) -> set[str]:
        return {"debian"}

    def dpkg_status(self, names: Sequence[str]) -> dict[str, str]:
        return {n: "installed" for n in names if n in self.have}

    def apt_candidates(self, names: Sequence[str]) -> set[str]:
        return set(names) if self.indices else set()

    def apt_get(self, args: Sequence[str]) -> int:
        self.indices |= "update" in args
        if "install" in args:
            self.have.update(a for a in args[args.index("install") + 1:]
                             if not a.startswith("-"))
        return 0


# ---- the set-up ------------------------------------------------------------

@dataclasses.dataclass
class SetUp:
    """One set-up: what it says goes to ERR, each line 'PROG: ...'."""
    plist: PackageList
    prog: str
    system: System
    err: TextIO

    def say(self, text: str) -> None:
        print(f"{self.prog}: {text}", file=self.err)

    def show(self, line: str) -> None:
        """A line to copy, alone."""
        print(f"  {line}", file=self.err)

    def purposes(self, pkgs: Sequence[Package]) -> str:
        return ", ".join(dict.fromkeys(p.purpose for p in pkgs))

    def not_debian(self, pkgs: list[Package]) -> int:
        """No dpkg to ask: the probes tell what is missing."""
        missing = [p for p in pkgs
                   if not all(self.system.exists(x) if x.startswith("/")
                              else self.system.which(x) for x in p.probes)]
        if not missing:
            return 0
        self.say("not Debian or Ubuntu, and these are missing (Debian's"
                 " package names: install your system's equivalents):")
        for line in purpose_table(self.plist, missing):
            print(line, file=self.err)
        return EXIT_MISSING

    def run(self, use: str, no_install: bool, ksrc: bool) -> int:
        pkgs = self.plist.of_use(use, ksrc)
        sysm = self.system
        if (not {"debian", "ubuntu"} & sysm.os_ids()
                or not sysm.which("dpkg-query")):
            return self.not_debian(pkgs)
        status = sysm.dpkg_status([p.name for p in pkgs])
        missing = [p for p in pkgs if status.get(p.name) != "installed"]
        if not missing:
            return 0
        names = [p.name for p in missing]
        if not sysm.which("apt-get"):
            self.say("no apt-get here: install these packages by other means:")
            for line in purpose_table(self.plist, missing):
                print(line, file=self.err)
            return EXIT_MISSING
        update = sysm.apt_candidates(names) != set(names)
        why = ("not installing (--no-install)" if no_install
               else "not root" if sysm.euid() != 0 else "")
        if why:
            self.say(f"missing {len(names)} packages ({self.purposes(missing)}):"
                     f" {' '.join(names)}")
            self.say(f"{why}: install them as root, then run again:")
            self.show(install_line(names, update))
            return EXIT_MISSING
        return self.install(missing, update)

    def install(self, missing: list[Package], update: bool) -> int:
        names = [p.name for p in missing]
        if update:
            self.say("apt's package indices lack some of them: apt-get update")
            if not self.update(names):
                return EXIT_MISSING
        self.say(f"installing {len(names)} packages: {' '.join(names)}"
                 f" (undo: {undo_line(names)})")
        rc = self.system.apt_get(["-y", *INSTALL[1:], *names])
        if rc != 0 and not update and not self.installed(names):
            # Indices that name versions the mirror no longer has.
            self.say(f"apt-get install failed (exit status {rc}): apt-get"
                     " update, and once more")
            if not self.update(names):
                return EXIT_MISSING
            rc = self.system.apt_get(["-y", *INSTALL[1:], *names])
        left = [n for n in names if n not in self.installed(names)]
        if rc == 0 and not left:
            return 0
        return self.failed(names, rc, left)

    def installed(self, names: Sequence[str]) -> list[str]:
        status = self.system.dpkg_status(names)
        return [n for n in names if status.get(n) == "installed"]

    def update(self, names: Sequence[str]) -> bool:
        """apt-get update; False (said) when apt still lacks some of NAMES."""
        rc = self.system.apt_get(["update"])
        if rc == 0:
            lacking = [n for n in names if n not in self.system.apt_candidates(names)]
            if not lacking:
                return True
            self.say(f"apt has no version to install of {' '.join(lacking)}, even"
                     " after apt-get update (its messages above): nothing installed")
        else:
            self.say(f"apt-get update failed (exit status {rc}; its messages"
                     " above): nothing installed")
        self.say("to try again, as root:")
        self.show(install_line(names, update=True))
        return False

    def failed(self, names: list[str], rc: int, left: list[str]) -> int:
        """Say what an apt-get install that failed has left."""
        status = self.system.dpkg_status(left)
        done = [n for n in names if n not in left]
        what = (f"failed (exit status {rc}" if rc
                else "ended without installing them all (exit status 0")
        self.say(f"apt-get install {what}; its messages above, all of its"
                 " output in /var/log/apt/term.log)")
        if done:
            self.say(f"installed before it stopped: {' '.join(done)}"
                     f" (undo: {undo_line(done)})")
        else:
            self.say("none of them was installed (a dependency it installed:"
                     " apt-get autoremove --purge)")
        half = [n for n in left
                if status.get(n, "not-installed") not in ("not-installed", "config-files")]
        if half:
            self.say(f"left half-installed: {' '.join(half)} (finish: dpkg"
                     f" --configure -a; or undo: {undo_line(half)})")
        self.say(f"still missing: {' '.join(left)}; to try again, as root:")
        self.show(install_line(left))
        return EXIT_MISSING


def set_up(use: str, no_install: bool = False,
           plist: PackageList | None = None, system: System | None = None,
           err: TextIO | None = None, env: dict[str, str] | None = None) -> int:
    """Set up USE's packages; 0 when they are all there (now), 4 when not."""
    env = dict(os.environ) if env is None else env
    return SetUp(plist or load(), title(use), system or System(),
                 err or sys.stderr).run(use, no_install, bool(env.get("KSRC")))


# ---- README.md and docs/*.md ------------------------------------------------

BLOCK = re.compile(r"^<!-- packages\.txt: (.+?) -->\n(.*?)^<!-- end -->$",
                   re.M | re.S)
# Package names after 'apt-get install' in the prose (across line breaks).
PROSE_INSTALL = re.compile(r"apt-get install((?:\s+(?:-\S+|[a-z0-9][a-z0-9.+:-]*))+)")
WIDTH = 72


def wrapped(words: Sequence[str], indent: str = "        ") -> str:
    """Words as shell lines of at most WIDTH columns, continued by '\\'."""
    lines: list[str] = []
    cur = ""
    for w in words:
        if cur and len(cur) + 1 + len(w) + 2 > WIDTH:
            lines.append(cur + " \\")
            cur = indent + w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return "\n".join(lines)


def render_block(plist: PackageList, spec: str) -> str:
    """The text of one generated block: 'install USE [not USE]' (the
    install line), 'setup USE' (its set-up on a bare root) or 'table'."""
    words = spec.split()
    if words == ["table"]:
        rows = ["| purpose | what for | packages | set up by |",
                "|---|---|---|---|"]
        for purpose, text in plist.purposes.items():
            pkgs = " ".join(f"`{p.name}`" for p in plist.packages
                            if p.purpose == purpose)
            users = ", ".join(f"`{title(u)}`" for u, ps in plist.uses.items()
                              if purpose in ps)
            rows.append(f"| `{purpose}` | {text} | {pkgs} | {users} |")
        return "\n".join(rows) + "\n"
    if len(words) == 2 and words[0] == "setup":
        err = io.StringIO()
        SetUp(plist, title(words[1]), BareRoot(), err).run(words[1], False, False)
        return f"```\n{err.getvalue()}```\n"
    if len(words) in (2, 4) and words[0] == "install" and words[2:3] in ([], ["not"]):
        names = plist.names_of(words[1], words[3] if len(words) == 4 else None)
        return f"```sh\n{wrapped(INSTALL + tuple(names))}\n```\n"
    raise ListError(f"README.md: unknown generated block '{spec}'"
                    " (install USE [not USE], setup USE, or table)")


def readme_render(text: str, plist: PackageList) -> str:
    """TEXT with every generated block made again from the list."""
    return BLOCK.sub(lambda m: f"<!-- packages.txt: {m.group(1)} -->\n"
                     f"{render_block(plist, m.group(1))}<!-- end -->", text)


# The blocks the documentation must have: the quick start's sample set-up
# and install line (README.md), make check-all's install line and the
# table (docs/requirements.md).
REQUIRED_BLOCKS = ("setup run_all.sh", "install check",
                   "install check-all not check", "table")
# The files that hold them, and whose install lines are checked.
DOCS = ("README.md", "docs/*.md")


def docs_files() -> list[str]:
    """README.md and the pages of docs/, in that order."""
    return [f for pattern in DOCS
            for f in sorted(glob.glob(os.path.join(TOP, pattern)))]


def block_specs(text: str) -> list[str]:
    """The specs of TEXT's generated blocks ('install check', 'table')."""
    return [m.group(1) for m in BLOCK.finditer(text)]


def readme_problems(text: str, plist: PackageList,
                    required: Sequence[str] = REQUIRED_BLOCKS) -> list[str]:
    """Where one file and the list disagree (nothing: they agree); the
    blocks of REQUIRED must be in it."""
    problems = []
    specs = block_specs(text)
    problems += [f"no generated block '<!-- packages.txt: {s} -->'"
                 for s in required if s not in specs]
    want = readme_render(text, plist)
    if want != text:
        for spec, a, b in zip(specs, BLOCK.finditer(text), BLOCK.finditer(want)):
            if a.group(2) != b.group(2):
                problems.append(f"the block '{spec}' differs from packages.txt")
    outside = BLOCK.sub("", text)
    for m in PROSE_INSTALL.finditer(outside):
        for word in m.group(1).split():
            name = word.split(":", 1)[0]
            if not word.startswith("-") and plist.get(name) is None:
                problems.append(f"'apt-get install ... {name}' names a package"
                                " that packages.txt does not list")
    return problems


def docs_problems(texts: Mapping[str, str], plist: PackageList) -> list[str]:
    """Where files (path: text) and the list disagree, each problem after
    its file's name; every required block must be in one of them."""
    problems = [f"{path}: {p}" for path, text in texts.items()
                for p in readme_problems(text, plist, required=())]
    specs = {s for text in texts.values() for s in block_specs(text)}
    problems += [f"{', '.join(texts)}: no generated block"
                 f" '<!-- packages.txt: {s} -->'"
                 for s in REQUIRED_BLOCKS if s not in specs]
    return problems
