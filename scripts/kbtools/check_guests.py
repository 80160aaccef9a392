# SPDX-License-Identifier: GPL-2.0
"""The steps of kbench check (kbtools.check's table) beyond this host:
the cross builds and the 32-bit programs here, the guests (x86_64 and
arm64, each path twice), the A/B whose boots die early, and the test
kernel's steps, exact mode's among them."""

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from typing import (ContextManager, Dict, Iterator, List, Optional,
                    Sequence, Tuple)

from kbtools import cli, lava_local, paths, proc
from kbtools.checking import (Check, Fail, Skip, cat, grep, place_in_tree,
                              tail)

# ---- other architectures ----------------------------------------------------

def elf_class_machine(path: str) -> str:
    """"ELF32 Intel 80386", "ELF64 AArch64", ... of a program."""
    out = proc.capture(["readelf", "-h", path])
    cls = re.search(r"(?m)^\s*Class:\s*(\S+)", out)
    machine = re.search(r"(?m)^\s*Machine:\s*(.+)$", out)
    return f"{cls.group(1) if cls else '?'} " \
        f"{machine.group(1).strip() if machine else '?'}"


def all_built_for(c: Check, where: str, want: str) -> None:
    """Every program of the collection in where (a standalone copy, or
    an install tree) is an ELF of want."""
    for d, p in c.programs():
        f = os.path.join(where, d, p)
        if not os.path.isfile(f):
            raise Fail(f"{d}/{p} was not built in {where}")
        got = elf_class_machine(f)
        if got != want:
            raise Fail(f"{d}/{p} is '{got}', not '{want}'")
        print(f"{d}/{p}: {got}")


def foreign_libs(c: Check, arch: str) -> str:
    """Debian's libcap/libnuma of ARCH unpacked (kbtools.debian); their
    directory. SKIP when the private indices cannot all be fetched (a
    mirror in the middle of a sync, no network): that says nothing about
    the code."""
    from kbtools import debian
    try:
        return debian.cross_libs("check", arch, paths.cache_dir())
    except cli.Failure as e:
        mirror_trouble(arch, e.status, f"the {arch} libraries")
        raise Fail(f"the {arch} libraries: {e}") from e


def mirror_trouble(arch: str, status: int, what: str) -> None:
    """After a setup failure (status 3) of a step that fetched Debian's
    ARCH packages: Skip when ARCH's private indices could not all be
    fetched."""
    d = os.path.join(paths.cache_dir(), "apt", arch)
    if status == 3 and os.path.exists(os.path.join(d, "incomplete")):
        print("\n".join(line for line in proc.tail(os.path.join(
            d, "update.log"), 5).splitlines() if re.match(r"^(E|W):", line)))
        raise Skip(f"Debian's {arch} package indices cannot be fetched now "
                   f"(mirror or network): {what} not checked")


def cross_one(c: Check, arch: str, triplet: str, want: str) -> None:
    """Standalone (a copy of the clone) and in a kernel tree (make -C
    tools/testing/selftests ARCH= CROSS_COMPILE= TARGETS=kbench
    install), every program an ELF of WANT."""
    cc = f"{triplet}-"
    c.need("git", f"{cc}gcc:gcc-{triplet}", "readelf:binutils")
    foreign_libs(c, arch)
    copy = c.path(f"cross-{arch}")
    shutil.rmtree(copy, ignore_errors=True)
    c.copy_project(copy)
    env = dict(os.environ, KBENCH_CACHE=paths.cache_dir())
    log = c.path(f"cross-{arch}.log")
    if c.run(["make", "-s", "-C", copy, f"ARCH={arch}",
              f"CROSS_COMPILE={cc}", f"KSRC={c.ksrc}"], out=log, both=True,
             env=env) != 0:
        print(proc.tail(log, 30), end="")
        raise Fail(f"standalone {arch} build failed")
    all_built_for(c, copy, want)
    sel = place_in_tree(c, "6.12")
    inst = c.path(f"cross-install-{arch}")
    log = c.path(f"cross-intree-{arch}.log")
    if c.run(["make", "-C", sel, f"ARCH={arch}", f"CROSS_COMPILE={cc}",
              "TARGETS=kbench", "install", f"INSTALL_PATH={inst}"], out=log,
             both=True, env=env) != 0:
        print(proc.tail(log, 30), end="")
        raise Fail(f"in-tree {arch} build failed")
    all_built_for(c, os.path.join(inst, "kbench"), want)


def cross_arm64(c: Check) -> None:
    cross_one(c, "arm64", "aarch64-linux-gnu", "ELF64 AArch64")


def cross_i386(c: Check) -> None:
    cross_one(c, "i386", "i686-linux-gnu", "ELF32 Intel 80386")


def need_i386_runtime(c: Check) -> None:
    """32-bit x86 programs need an x86_64 host and the i386 C library;
    without them the step SKIPs and names the package."""
    if os.uname().machine != "x86_64":
        raise Skip("not an x86_64 host")
    if not os.path.exists("/lib/ld-linux.so.2"):
        raise Skip("missing the 32-bit C library "
                   f"({c.note_missing('libc6-i386')})")


I386 = "i386-linux-gnu"


def i386_build(c: Check, copy: str, log: str, ldflags: str = "") -> None:
    """The collection built as 32-bit x86 programs in a copy of the
    clone."""
    shutil.rmtree(copy, ignore_errors=True)
    c.copy_project(copy)
    extra = [f"LDFLAGS={ldflags}"] if ldflags else []
    if c.run(["make", "-s", "-C", copy, "ARCH=i386",
              "CROSS_COMPILE=i686-linux-gnu-", f"KSRC={c.ksrc}", *extra],
             out=log, both=True,
             env=dict(os.environ, KBENCH_CACHE=paths.cache_dir())) != 0:
        print(proc.tail(log, 30), end="")
        raise Fail("i386 build failed")


def i386_host_run(c: Check) -> None:
    """The collection as 32-bit x86 programs on this 64-bit kernel
    (compat system calls, compat netlink): every program passes, or
    skips with a reason. They run with the 32-bit C library of libc6-i386
    (or libc6:i386) and the system's libcap2:i386 and libnuma1:i386 when
    installed, else the same packages unpacked by kbtools.debian
    (LD_LIBRARY_PATH): no dpkg --add-architecture."""
    c.need("git", "i686-linux-gnu-gcc:gcc-i686-linux-gnu",
           "readelf:binutils", "python3")
    need_i386_runtime(c)
    libs = foreign_libs(c, "i386")
    ldpath = os.environ.get("LD_LIBRARY_PATH", "")
    if not (os.path.exists(f"/lib/{I386}/libcap.so.2") and
            os.path.exists(f"/usr/lib/{I386}/libnuma.so.1")):
        ldpath = ":".join(p for p in (f"{libs}/lib/{I386}",
                                      f"{libs}/usr/lib/{I386}", ldpath) if p)
        print(f"32-bit libcap/libnuma from {libs} (no libcap2:i386 "
              "libnuma1:i386 installed)")
    copy, out = c.path("i386-run"), c.path("i386.ktap")
    i386_build(c, copy, c.path("i386.log"))
    all_built_for(c, copy, "ELF32 Intel 80386")
    json_dir = c.path("i386-json")
    rc = c.run([os.path.join(copy, "run_all.sh"), "--no-build", "--json",
                json_dir], out=out,
               env=dict(os.environ, KSRC=c.ksrc, LD_LIBRARY_PATH=ldpath))
    c.every_program_ran(rc, out, "the 32-bit collection")
    c.ktap_clean(out, "KTAP check of the 32-bit run failed")
    if not grep(os.path.join(json_dir, "taskstats.json"),
                r'"user_bits": 32'):
        raise Fail("taskstats' JSON does not say it ran as a 32-bit program")


def patched_image(c: Check) -> str:
    """The patched test kernel's image (built and cached by
    kbtools.kernel), or $KBENCH_TESTKERNEL_IMAGE."""
    from kbtools import kernel
    img = os.environ.get("KBENCH_TESTKERNEL_IMAGE") or ""
    if not img:
        try:
            img = kernel.test_kernels(kernel.TestKernelBuild(
                unpatched=False), "check")["patched"]
        except cli.Failure as e:
            raise Fail(f"the patched test kernel: {e}") from e
    if not os.path.isfile(img):
        raise Fail(f"no patched test kernel image '{img}'")
    return img


def testkernel_i386(c: Check) -> None:
    """taskstats as a 32-bit program on the patched test kernel: the
    /proc/taskstats ioctl through the kernel's compat path
    (compat_ptr_ioctl) and the netlink replies to a 32-bit caller. The
    ioctl checks and row must run (no SKIP) and pass."""
    c.need("git", "i686-linux-gnu-gcc:gcc-i686-linux-gnu",
           "readelf:binutils", "file", "python3")
    need_i386_runtime(c)
    libs = foreign_libs(c, "i386")
    img = patched_image(c)
    # The guest sees this host's root but its own /tmp, and starts with
    # a fresh environment: the copy lives in the cache, its libraries
    # are found by their run path.
    copy = os.path.join(paths.cache_dir(), "vm", "i386-kbench")
    i386_build(c, copy, c.path("tk-i386.log"), ldflags=(
        f"-Wl,-rpath,{libs}/lib/{I386}:{libs}/usr/lib/{I386}"))
    if elf_class_machine(os.path.join(copy, "taskstats", "taskstats")) != \
            "ELF32 Intel 80386":
        raise Fail("taskstats is not a 32-bit x86 program")
    out = c.path("tk-i386.ktap")
    rc = c.run([os.path.join(copy, "run_all.sh"), "--kernel", img,
                "--no-build", "-t", "taskstats", "--json",
                os.path.join(copy, "json")], cwd=copy, out=out,
               env=dict(os.environ, KBENCH_CACHE=paths.cache_dir(),
                        KSRC=c.ksrc))
    cat(out)
    if rc != 0:
        raise Fail(f"the 32-bit taskstats on the test kernel exited {rc}")
    c.ktap_clean(out, "KTAP check failed")
    for t in ("ioctl_matches_netlink", "ioctl_errors", "ioctl"):
        if not grep(out, rf"^    ok [0-9]+ {t}$"):
            raise Fail(f"{t} did not run and pass in the 32-bit taskstats")
    if not grep(os.path.join(copy, "json", "taskstats.json"),
                r'"user_bits": 32'):
        raise Fail("taskstats' JSON does not say it ran as a 32-bit program")
    shutil.rmtree(copy, ignore_errors=True)


def vm_arm64_6_12(c: Check) -> None:
    """The arm64 guest: Debian's 6.12 arm64 kernel under TCG, the
    collection cross-built; its KTAP as strict as the host's, its JSON
    back."""
    c.need("qemu-system-aarch64:qemu-system-arm",
           "aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu", "cpio",
           "dpkg-deb:dpkg")
    out, json_dir = c.path("arm64.ktap"), c.path("arm64-json")
    rc = c.collection(["--kernel", "debian-6.12", "--arch", "arm64",
                       "--json", json_dir], out)
    try:
        c.every_program_ran(rc, out, "the arm64 guest run")
    except Fail:
        mirror_trouble("arm64", rc, "the arm64 guest")
        raise
    c.ktap_clean(out, "KTAP check of the arm64 guest's stream failed")
    if not grep(os.path.join(json_dir, "syscall_overhead.json"),
                r'"arch": "aarch64", "hostname": "[^"]*", "user_bits": 64'):
        raise Fail("no arm64 JSON copied back")


# ---- a LAVA lab ---------------------------------------------------------------

# What a local lab listens on (PostgreSQL, LAVA's server).
LAB_PORTS = (5432, 8790)


def port_in_use(port: int) -> bool:
    rc, out = proc.output(["ss", "-ltnH", f"sport = :{port}"])
    return rc == 0 and bool(out.strip())


def lava_phase(c: Check, phase: str, secs: int, *args: str,
               out: Optional[str] = None) -> None:
    """scripts/lava_local.sh PHASE, stopped (SIGTERM: it cleans up, then
    SIGKILL a minute later) past SECS; says its wall time, fails naming
    the phase."""
    start = time.monotonic()
    rc = c.run(["timeout", "-k", "60", str(secs),
                paths.script("scripts/lava_local.sh"), phase, *args],
               out=out)
    print(f"lava_local.sh {phase}: {int(time.monotonic() - start)} s")
    if rc == 124:
        raise Fail(f"lava_local.sh {phase} did not end within {secs} s")
    if rc != 0:
        raise Fail(f"lava_local.sh {phase} exited {rc}")


def lava_left(lab: str) -> List[str]:
    """What of the lab is still there (its directory, a mount below it,
    a process whose root is in it); nothing when it is gone."""
    left = [f"{lab} exists"] if os.path.exists(lab) else []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        left += [f"mounted: {line.split()[4]}" for line in f
                 if f" {lab}/" in line]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            root = os.readlink(f"/proc/{pid}/root")
        except OSError:
            continue
        if root.startswith(lab + "/"):
            left.append(f"process /proc/{pid} runs in it")
    return left


def lava_lab(c: Check) -> None:
    """A LAVA lab end to end, as docs/lava.md has a user try it: a lab
    of its own (in /var/tmp) set up from nothing, started, one
    syscall_overhead job on Debian's 6.1 kernel (the image vm_debian_6_1
    fetched), its results read back through LAVA's REST API and checked
    against the job's KTAP (at least 12 measurements, getpid among
    them), stopped and destroyed: nothing left mounted, running or on
    disk (by lava_series, when the run has it: it uses the same lab).
    Debian's packages stay in .cache/lava/debs for the next run."""
    start = time.monotonic()
    out = c.path("lava-run.out")
    with check_lab(c) as lab:
        lava_phase(c, "run", 1200, "-t", "syscall_overhead",
                   "--timeout", "900", out=out)
        cat(out)
        with open(out, encoding="utf-8", errors="replace") as f:
            lines = [ln.split() for ln in f]
        if not any(len(w) == 3 and w[0] == "job" and w[2] == "Complete"
                   for w in lines):
            raise Fail("the job did not end Complete")
        measured = [w for w in lines if len(w) >= 5
                    and w[0] == "syscall_overhead"
                    and re.fullmatch(r"[0-9.]+", w[3]) and w[4] == "us"]
        if len(measured) < 12:
            raise Fail(f"{len(measured)} measurements in us from LAVA's "
                       "API, want 12 or more")
        if not any(w[1] == "getpid" and w[2] == "pass"
                   and float(w[3]) > 0 for w in measured):
            raise Fail("no passed getpid measurement from LAVA's API")
    print(f"lava_lab: {len(measured)} measurements, the lab "
          f"{'kept for lava_series' if os.path.exists(lab) else 'gone'}; "
          f"{int(time.monotonic() - start)} s in all")


# The steps that use a local lab: one lab for those of the run, set up
# by the first, destroyed by the last (a lab costs minutes).
LAB_USERS = ("lava_lab", "lava_series")


def check_lab(c: Check) -> ContextManager[str]:
    """The run's local lab (local_lab), shared by LAB_USERS: its
    directory."""
    return c.shared("the local LAVA lab", LAB_USERS, lambda: local_lab(c))


@contextlib.contextmanager
def local_lab(c: Check) -> Iterator[str]:
    """A local LAVA lab of the step's own (scripts/lava_local.sh in a
    new directory of /var/tmp), set up and started: its directory. Then
    stopped and destroyed, also when the block fails; what is left of
    it, or a port still held, fails the step."""
    c.need("debootstrap", "python3")
    for port in LAB_PORTS:
        if port_in_use(port):
            raise Skip(f"port {port} is in use on this machine (a LAVA lab "
                       "or a PostgreSQL of its own): the lab needs it")
    # The guest gets the collection as built here (alone: build it).
    log = c.path("lava-make.log")
    if c.run(["make", "-s", "-C", c.top, "all"], out=log, both=True) != 0:
        print(tail(log, 20))
        raise Fail("the collection does not build")
    # Not below the check's scratch directory: a lab that could not be
    # unmounted must never meet its removal (its chroot's /dev is the
    # host's).
    lab = tempfile.mkdtemp(prefix="kbench-lava-check.", dir="/var/tmp")
    with environ_set("KBENCH_LAVA_DIR", lab):
        done = False
        try:
            lava_phase(c, "setup", 1800)
            lava_phase(c, "start", 180)
            yield lab
            lava_phase(c, "stop", 120)
            lava_phase(c, "destroy", 300)
            done = True
        finally:
            if not done:
                c.run(["timeout", "600",
                       paths.script("scripts/lava_local.sh"), "destroy"])
                for line in lava_left(lab):
                    print(f"left behind: {line}")
    left = lava_left(lab)
    if left:
        raise Fail(f"destroy left: {'; '.join(left)}")
    for port in LAB_PORTS:
        if port_in_use(port):
            raise Fail(f"port {port} still in use after destroy")


# What the first three commits of bisect-demo's steps series move on
# syscall_overhead's exact rows, in instructions per operation (every
# other exact row +0): getppid +1 nop, a documentation file, ksys_msgsnd
# +2 nops.
LAVA_SERIES_STEPS: Tuple[Dict[str, int], ...] = (
    {"getppid": 1}, {}, {"msgsnd_rcv": 2})


def lava_series(c: Check) -> None:
    """kbench series --lava through a local lab (docs/series.md, "Through
    a LAVA lab"; lava_lab's, when the run has both): the first three
    commits of bisect-demo's steps series on the test kernel's tree, the
    base's three calibration boots and one per commit, each a job of the
    lab on its images served from the lab's /srv/kbench; every commit's
    step on every exact row of syscall_overhead as LAVA_SERIES_STEPS has
    it, to the instruction, and the steps adding up."""
    from kbtools import bisect_demo, kernel, series
    c.need("git", "python3")
    start = time.monotonic()
    state, out = c.path("lava-series-state"), c.path("lava-series")
    shutil.rmtree(state, ignore_errors=True)
    with check_lab(c) as lab:
        try:
            # The tree's unpatched build, on which the commits build
            # incrementally (cached by hash).
            kernel.test_kernels(kernel.TestKernelBuild(patched=False),
                                "check")
            tree = kernel.test_kernel_tree("check")
            committer = bisect_demo.Committer(tree, c.path())
            base = tip = committer.word("rev-parse", bisect_demo.BASE)
            for edit in bisect_demo.steps_edits()[:len(LAVA_SERIES_STEPS)]:
                tip = committer.commit(tip, edit)
        except cli.Failure as e:
            raise Fail(f"the test kernel's commits: {e}") from e
        guest, token = lava_guest(lab)
        with environ_set(series.LAVA_TOKEN, token):
            rc = c.task(series.main, [
                "--tree", tree, f"{base}..{tip}", "-t", "syscall_overhead",
                "--lava", guest.url,
                "--lava-images", os.path.join(guest.srv, "series"),
                "--lava-images-url", "file:///srv/kbench/series",
                "--lava-rootfs", "file:///srv/kbench/rootfs.cpio",
                "--lava-init", "/sbin/kbench-init", "--state", state,
                "--json", out], "kbench series")
        if rc != 0:
            raise Fail(f"kbench series --lava exited {rc}")
    series_steps(os.path.join(out, "series.json"), LAVA_SERIES_STEPS)
    print(f"lava_series: {len(LAVA_SERIES_STEPS)} commits through the "
          f"lab, the lab gone; {int(time.monotonic() - start)} s in all")


def lava_guest(lab: str) -> Tuple[lava_local.Lab, str]:
    """The local lab (under LAB) with its guest rootfs packed (the built
    collection, as lava_local.sh run packs it), and its admin's API
    token."""
    guest = lava_local.Lab("check", lab)
    try:
        guest.make_guest()
        guest.pack_guest()
        return guest, guest.admin_token()
    except cli.Failure as e:
        raise Fail(f"the lab's guest: {e}") from e


def series_steps(path: str, want: Sequence[Dict[str, int]]) -> None:
    """kbench series' JSON (PATH): commit N's step on each exact row
    want[N-1].get(row, 0) instructions (slower when more, faster when
    fewer, same at 0) to within half an instruction, and every exact
    row's steps checked and adding up to its total."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    exact = [r for r in doc["records"]
             if r.get("class") == "exact" and r["n"] > 0]
    bad = []
    for n, moved in enumerate(want, 1):
        rows = {r["row"]: r for r in exact if r["n"] == n}
        missing = [row for row in moved if row not in rows]
        if missing or not rows:
            bad.append(f"commit {n}: no exact "
                       f"{', '.join(missing) or 'row'}")
        for row, r in sorted(rows.items()):
            expect = moved.get(row, 0)
            verdict = "slower" if expect > 0 else \
                "faster" if expect < 0 else "same"
            step = r.get("step_insn")
            ok = step is not None and abs(step - expect) < 0.5 and \
                r.get("step_verdict") == verdict
            print(f"{'ok' if ok else 'FAIL'}: commit {n} {row}: step "
                  f"{step} insn, {r.get('step_verdict')} (want {expect:+d}, "
                  f"{verdict})")
            if not ok:
                bad.append(f"commit {n} {row}: {step} insn, "
                           f"{r.get('step_verdict')}, want {expect:+d}")
    checks = doc.get("checks", [])
    bad += [f"{ch['row']}: the steps do not add up to the total"
            for ch in checks if not ch.get("adds_up")]
    unchecked = {f"{r['test']}:{r['row']}" for r in exact} - \
        {ch["row"] for ch in checks}
    bad += [f"{row}: no check that its steps add up"
            for row in sorted(unchecked)]
    if len({r["n"] for r in exact}) != len(want):
        bad.append(f"exact rows for {len({r['n'] for r in exact})} "
                   f"commits, want {len(want)}")
    if bad:
        raise Fail("; ".join(bad))


@contextlib.contextmanager
def environ_set(name: str, value: str) -> Iterator[None]:
    """os.environ[name] = value inside the block (the children's)."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


# ---- each guest path a second time ------------------------------------------
# The steps below run after the first boots of their paths
# (vm_debian_6_1, vm_arm64_6_12), in the same checkout: the cache, the
# cross-built collection and the earlier results are still there, so a
# path that works once and then fails fails here.

def json_layout(dirs: Sequence[str]) -> None:
    """Each directory holds the same JSON files as the first, each with
    the same keys, repetitions and rows (each row its keys and
    repetitions)."""
    def layout(d: str) -> Dict[str, object]:
        out: Dict[str, object] = {}
        for f in sorted(os.listdir(d)):
            if f.endswith(".json"):
                with open(os.path.join(d, f), encoding="utf-8") as fh:
                    doc = json.load(fh)
                out[f] = {"keys": sorted(doc), "repeat": doc.get("repeat"),
                          "repetitions": len(doc.get("repetitions", [])),
                          "rows": {r["name"]: (sorted(r), len(
                              r.get("repetitions", [])))
                              for r in doc["rows"]}}
        return out
    want = layout(dirs[0])
    for f, v in want.items():
        assert isinstance(v, dict)
        print(f"{f}: repeat {v['repeat']}, {len(v['rows'])} rows")
    bad = not want
    for d in dirs[1:]:
        got = layout(d)
        for f in sorted(set(want) | set(got)):
            if want.get(f) != got.get(f):
                print(f"FAIL: {d}/{f}: {got.get(f)} against {want.get(f)}")
                bad = True
    if bad:
        raise Fail("the JSON layouts differ")


def vm_repeat_layout(c: Check) -> None:
    """A guest's repetitions are merged on the host (the arm64 guest has
    no python3): --repeat 3 in an x86_64 and in an arm64 guest give, file
    for file and key for key, the JSON of a --repeat 3 here."""
    c.need("file", "python3", "qemu-system-aarch64:qemu-system-arm",
           "aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu", "cpio",
           "dpkg-deb:dpkg")
    d = c.path("layout")
    rc = c.collection(["-t", "syscall_overhead", "--repeat", "3", "--json",
                       os.path.join(d, "here")], d + "-here.ktap",
                      env=dict(os.environ, KSFT_MACHINE_SLOW="yes"))
    if rc != 0:
        raise Fail("run_all.sh --repeat 3 here failed")
    for arch, kernel in (("x86_64", "debian-6.1"), ("arm64", "debian-6.12")):
        out = f"{d}-{arch}.ktap"
        rc = c.collection(["--kernel", kernel, "--arch", arch, "-t",
                           "syscall_overhead", "--repeat", "3", "--json",
                           os.path.join(d, arch)], out)
        if arch == "arm64" and rc == 3:
            mirror_trouble("arm64", rc, "the arm64 guest")
        if rc != 0:
            raise Fail(f"--repeat 3 in the {arch} guest exited {rc}: "
                       f"{tail(out, 3)}")
        if os.path.exists(os.path.join(d, arch, "repetitions")):
            raise Fail(f"the {arch} guest's repetitions were left unmerged")
    json_layout([os.path.join(d, n) for n in ("here", "x86_64", "arm64")])


def vm_arm64_icount_aa(c: Check) -> None:
    """Issue 40's A/A: Debian 6.12 against itself on arm64 under
    --icount, one boot a side, two runs a boot, twice in a row: no
    verdict, getpid, getppid, getsid and getpgid_0 same (exact), every
    exact row identical to the instruction, each side's JSON with its two
    repetitions. A row that moves now and then (clone: identical in three
    calibration boots, 248 instructions off in the fourth, CI 2026-11-27)
    is near by arm64's prior (kbtools.exact.with_prior), so an exact row
    that moves is a wrong class again, and fails."""
    c.need("file", "python3", "qemu-system-aarch64:qemu-system-arm",
           "aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu", "cpio",
           "dpkg-deb:dpkg")
    for k in (1, 2):
        out = c.path(f"arm64-aa-{k}")
        rc = c.collection(["--kernel", "debian-6.12", "--vs-kernel",
                           "debian-6.12", "--arch", "arm64", "--icount", "-t",
                           "syscall_overhead", "--json", out], out + ".ktap")
        with open(out + ".ktap", encoding="utf-8", errors="replace") as f:
            sys.stdout.write("".join(ln for ln in f
                                     if not ln.startswith("    ")))
        if rc == 3:
            mirror_trouble("arm64", rc, "the arm64 A/A")
        if rc != 0:
            raise Fail(f"the arm64 A/A ({k} of 2) exited {rc}")
        if not grep(os.path.join(out, "candidate", "syscall_overhead.json"),
                    r'"repeat": 2,'):
            raise Fail("the candidate's JSON does not hold its two "
                       "repetitions")
        exact_rows(c, out, {n: "same:exact" for n in (
            "getpid", "getppid", "getsid", "getpgid_0")})


def vm_debian_6_1(c: Check) -> None:
    c.need("file", "python3")
    from kbtools import ci_vm
    if c.task(ci_vm.main, [], "ci_vm.sh") != 0:
        raise Fail("a Debian kernel's guest failed (above)")


def ab_boot_retry(c: Check) -> None:
    """A kernel A/B whose boots die before the tests start (rdinit that
    does not exist: a panic at boot): each boot is tried once more, said
    in the stream, the failed try's console kept, and no verdict comes of
    it."""
    c.need("file", "python3")
    out, ktap = c.path("retry"), c.path("retry.ktap")
    rc = c.collection(["--kernel", "debian-6.1", "--vs-kernel", "debian-6.1",
                       "--repeat", "1", "--append", "rdinit=/nonexistent",
                       "-t", "syscall_overhead", "--json", out], ktap)
    err = c.path("collection.err")
    if rc != 1:
        raise Fail(f"exit {rc}, want 1: {tail(err, 3)}")
    with open(ktap, encoding="utf-8", errors="replace") as f:
        text = f.read()
    if len(re.findall(r"(?m)^# .* boot 1 ended before the tests started "
                      r"\(exit 125\): trying once more$", text)) != 2:
        raise Fail("no second try of each side's boot")
    if len(re.findall(r"(?m)^not ok [12] kbench: ", text)) != 2:
        raise Fail("the failed boots are not 'not ok'")
    failed = os.path.join(out, "base", "console-1-failed.log")
    if not os.path.isfile(failed):
        raise Fail("the failed try's console was not kept")
    # The boots must have died of the panic, not of anything else.
    if not grep(failed, "Kernel panic"):
        lines = [ln for ln in proc.tail(err, 10000).splitlines()
                 if "vm_run.sh: " in ln]
        raise Fail(f"the failed try did not panic: {lines[:1]}")


def testkernel_patched(c: Check) -> None:
    """The ioctl and .ks code paths on a kernel that has the
    interfaces."""
    c.need("file", "python3")
    from kbtools import testkernel
    if c.task(testkernel.run_main, ["--patched-only"], "run.sh") != 0:
        raise Fail("testkernel/run.sh --patched-only failed (above)")


# ---- exact mode (QEMU's instruction counter) --------------------------------

def exact_rows(c: Check, d: str, want: Dict[str, str]) -> None:
    """The comparison of D/base with D/candidate (kept as D.json) in
    exact mode: each row of want ({row: "VERDICT"} or "VERDICT:CLASS")
    exact or near (or that class) with that verdict, every other row of
    an icount clock, no other row slower or faster, and every other exact
    row the same to the instruction."""
    from kbtools import compare, results
    # The base kernel's calibration the A/B took (its own boots, or the
    # cache).
    cal = os.path.join(d, "calibration.json")
    try:
        cmp = compare.comparison(compare.Request(
            [os.path.join(d, "base"), os.path.join(d, "candidate")],
            fmt="json", calibration=cal if os.path.isfile(cal) else None))
    except results.ResultError as err:
        raise Fail(f"compare.py: {err}") from err
    with open(d + ".json", "w", encoding="utf-8") as f:
        f.write(cmp.text)
    bad = False
    for e in cmp.entries:
        row = f"{e.test}:{e.name}"
        if e.clock != "icount" and e.verdict not in ("skipped", "missing"):
            print(f"FAIL: {row} is not an icount row")
            bad = True
        if e.name in want:
            verdict, _, cls = want[e.name].partition(":")
            ok = e.verdict == verdict and e.row_class in (
                [cls] if cls else ["exact", "near"])
            print(f"{e.name}: {e.verdict} ({e.row_class}), {e.delta} insn, "
                  f"x{e.ratio}")
            bad = bad or not ok
        elif e.verdict in ("slower", "faster"):
            print(f"FAIL: {row} {e.verdict} ({e.row_class})")
            bad = True
        elif e.row_class == "exact" and abs(e.delta or 0) >= 0.5:
            print(f"FAIL: exact row {e.name} moved {e.delta} insn")
            bad = True
    for name in sorted(set(want) - {e.name for e in cmp.entries}):
        print(f"FAIL: no row {name}")
        bad = True
    if bad:
        raise Fail("the exact verdicts are not the expected ones")


def icount_aa(c: Check) -> None:
    """An A/A of the patched test kernel in exact mode, one boot each: no
    verdict, and every exact row identical to the instruction."""
    c.need("file", "python3")
    img = patched_image(c)
    out = c.path("icount-aa")
    rc = c.collection(["--kernel", img, "--vs-kernel", img, "--icount", "-t",
                       "syscall_overhead,pmqtest,taskstats", "--json", out],
                      out + ".ktap")
    cat(out + ".ktap")
    if rc != 0:
        raise Fail(f"the icount A/A exited {rc}")
    if not grep(out + ".ktap",
                r"^# base: .*icount: figures are guest instructions"):
        raise Fail("the comparison does not say it counts instructions")
    exact_rows(c, out, {})


def icount_ab(c: Check) -> None:
    """A known cost in exact mode, one boot: syscall_overhead under two
    seccomp filters that differ in one compare, run on getppid alone
    (--base-prefix / --vs-prefix inside the guest; any filter sends every
    system call through seccomp, hence one on both sides): getppid slower
    (exact), every other row same. The wrapper lives in the cache, which
    the guest sees (not in this step's /tmp)."""
    c.need("file", "python3")
    img = patched_image(c)
    out = c.path("icount-ab")
    wrap = os.path.join(paths.cache_dir(), "seccomp_wrap")
    os.makedirs(os.path.dirname(wrap), exist_ok=True)
    c.must(["cc", "-O2", "-o", wrap, os.path.join(c.top, "tests",
                                                  "seccomp_wrap.c")],
           "cannot build seccomp_wrap")
    rc = c.collection(["--kernel", img, "--icount", "-t", "syscall_overhead",
                       "--base-prefix", f"{wrap} -n 0 -s getppid",
                       "--vs-prefix", f"{wrap} -n 1 -s getppid", "--json",
                       out], out + ".ktap")
    cat(out + ".ktap")
    if rc != 0:
        raise Fail(f"the icount A/B exited {rc}")
    exact_rows(c, out, {"getppid": "slower"})


def icount_validate(c: Check) -> None:
    """The one-command validation of a patch from a tree, in exact mode:
    the bisect demo's small series (five nops at the start of getsid) on
    the test kernel's tree, its good commit against the one that adds the
    nops (an incremental build, cached by hash): getsid slower (exact) by
    five instructions, every other row same."""
    from kbtools import bisect_demo, kernel, validate
    c.need("git", "file", "python3")
    # The tree's unpatched build, on which the commits build incrementally.
    try:
        kernel.test_kernels(kernel.TestKernelBuild(patched=False), "check")
    except cli.Failure as e:
        raise Fail(f"the unpatched test kernel: {e}") from e
    tree = kernel.test_kernel_tree("check")
    series = bisect_demo.Committer(tree, c.path()).series("small")
    out = c.path("icount-validate")
    rc = c.task(validate.main, ["--tree", tree, "--base", series.good,
                                "--candidate", series.culprit, "-t",
                                "syscall_overhead", "--json", out],
                "validate.py")
    if rc != 0:
        raise Fail(f"validate.py exited {rc}")
    exact_rows(c, out, {"getsid": "slower"})



# The function that holds the one-nop commit's nop (SYSCALL_DEFINE0's
# body: x64_sys_call calls it, __x64_sys_getppid is inlined there), and
# what where must find in it.
GETPPID_NOP_EXPECT = "__do_sys_getppid:+1"


def icount_where(c: Check) -> None:
    """Issue 44's one-nop case: kbench where on the test kernel's tree,
    its unpatched commit against the one that puts one nop first in
    getppid() (images built once, cached by hash), one exact boot each
    with ftrace's function_graph tracer, then one each with kbench's
    QEMU plugin (where --plugin): +1 instruction in the function that
    holds the nop, +0 in every other function on getppid's path, and
    the sum equal to the row's delta (where --expect), both ways. Then
    the same commit as a series of one (kbench series --where, the
    images and the base's calibration cached: the two A/B boots and
    the two plugin boots): its summary names the function."""
    from kbtools import bisect_demo, kernel, where
    c.need("git", "file", "python3")
    try:
        # The tree's unpatched build, on which the commit builds
        # incrementally.
        kernel.test_kernels(kernel.TestKernelBuild(patched=False), "check")
        tree = kernel.test_kernel_tree("check")
        s = bisect_demo.Committer(tree, c.path()).getppid_nop()
        base, cand = (kernel.build_commit(kernel.CommitBuild(tree, rev),
                                          "check").image
                      for rev in (s.good, s.culprit))
    except cli.Failure as e:
        raise Fail(f"the test kernel's commits: {e}") from e
    runs: List[Tuple[str, List[str]]] = [
        ("icount-where", []), ("icount-where-plugin", ["--plugin"])]
    for name, how in runs:
        out = c.path(name)
        rc = c.task(where.main, ["--kernel", base, "--vs-kernel", cand,
                                 "-t", "syscall_overhead:getppid",
                                 "--expect", GETPPID_NOP_EXPECT, *how,
                                 "--keep", out, "--json", out + ".json"],
                    "where")
        if rc == cli.EXIT_SETUP and how:
            # The ftrace half passed; the plugin's header is out of reach.
            raise Skip("where --plugin: no plugin header (Debian's qemu "
                       "source package through the host's apt sources; "
                       "above)")
        if rc != 0:
            raise Fail(f"{' '.join(['where', *how])} exited {rc}: not "
                       f"{GETPPID_NOP_EXPECT} alone (above)")
    series_where(c, tree, s.good, s.culprit)


def series_where(c: Check, tree: str, good: str, nop: str) -> None:
    """kbench series --where on GOOD..NOP, its state in the step's
    directory: the step's line in the summary, and under it the
    function that holds the nop and nothing else."""
    from kbtools import series
    summary = c.path("icount-where-series.txt")
    rc = c.task(series.main, ["--tree", tree, f"{good}..{nop}", "-t",
                              "syscall_overhead:getppid", "--where",
                              "--where-with", "plugin", "--state",
                              c.path("icount-where-series"), "--summary",
                              summary], "kbench series")
    if rc != 0:
        raise Fail(f"kbench series --where exited {rc} (above)")
    cat(summary)
    func, _, delta = GETPPID_NOP_EXPECT.partition(":")
    want = f"    in {func} {float(delta):+.3f}\n"
    with open(summary, encoding="utf-8") as f:
        text = f.read()
    if want not in text or "counted by kbench's QEMU plugin" not in text:
        raise Fail(f"the series' summary does not read '{want.strip()}' "
                   "alone, counted by the plugin")
