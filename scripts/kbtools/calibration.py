# SPDX-License-Identifier: GPL-2.0
"""Calibration of exact verdicts from the kernel under test: what boots
of one kernel, on one QEMU with one setup, showed of each row under the
instruction counter (kbtools.exact.Known), taken from an A/A of that
kernel and cached per image, so that a bisection or a series pays for
it once.

A row's class is what the calibration's boots showed, bounded by the
prior of the architecture (kbtools.exact.with_prior: a row that the
prior's boots saw move is at best near, however alike three boots read
it); a kept one is bounded again, when read, by the prior as it is
then. A calibration holds for the kernel image it was taken on and
nothing else: its key is everything that can change a row's instructions (the
image's contents, and so its release and configuration; QEMU's
version; the architecture; the vCPUs; the -icount options; the kernel
command line the guest booted with; the guest's settings; the build of
the programs it ran). A row that
the calibration of this kernel lacks is judged by the boot rule, never
as exact (kbtools.exact.decide).

    calibration.of_boots(run.tests)      the rows of a run's own boots
    calibration.cached(key)              a stored one, or None
    calibration.store(key, cal)          keep one for the next run
"""

import dataclasses
import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from kbtools import exact, kernel, paths, proc, results

# Bump when what a calibration holds, or how it is taken, changes.
LAYOUT = 1
# Boots an A/A calibration takes when nothing is cached. Two can agree
# by chance on a row that moves one boot in five: over five boots of the
# test kernel, every two-boot calibration against every other boot gave
# 9 false verdicts in 2,820 row comparisons, every three-boot one none
# in 1,880 (docs/exact-runs.md).
BOOTS = 3


@dataclass(frozen=True)
class Key:
    """Everything that can change the instructions of a row."""
    image_sha256: str      # the kernel image's contents
    qemu: str              # QEMU's version line
    arch: str
    cpus: int
    icount: str            # the -icount options
    cmdline: str           # what the guest's command line adds
    settings: str = ""     # the guest's own settings (root, reset, ...)
    programs: str = ""     # the build of the programs it runs

    def digest(self) -> str:
        text = json.dumps([LAYOUT, asdict(self)], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Calibration:
    """The rows of one kernel ('TEST:ROW' -> Known) and where they came
    from: the key (None: the run's own boots) and what the guest said
    of its kernel."""
    rows: Dict[str, exact.Known]
    boots: int
    release: str = ""
    key: Optional[Key] = None
    sources: List[str] = field(default_factory=list)
    kernel: str = ""        # its build (exact.kernel_of), for the prior

    def to_json(self) -> Dict[str, Any]:
        return {"layout": LAYOUT,
                "key": asdict(self.key) if self.key else None,
                "release": self.release, "kernel": self.kernel,
                "boots": self.boots,
                "sources": self.sources,
                "rows": {k: v.to_json() for k, v in sorted(self.rows.items())}}

    @staticmethod
    def from_json(doc: Any) -> "Calibration":
        """ValueError when doc is not a calibration."""
        try:
            if doc.get("layout") != LAYOUT:
                raise ValueError(f"not a calibration (layout "
                                 f"{doc.get('layout')!r}, not {LAYOUT})")
            key = Key(**doc["key"]) if doc.get("key") else None
            # Each row as its boots showed it, bounded by the prior as it
            # is now (the key names the architecture): one kept under an
            # earlier prior, or before priors bounded classes, takes
            # today's bounds, looser as well as tighter.
            rows = {str(k): exact.with_prior(as_measured(
                                                 exact.Known.from_json(v)),
                                             key.arch if key else None,
                                             str(k), None,
                                             key.settings if key else None,
                                             doc.get("kernel") or None)
                    for k, v in doc["rows"].items()}
            return Calibration(rows, int(doc["boots"]),
                               str(doc.get("release") or ""), key,
                               [str(s) for s in doc.get("sources") or []],
                               str(doc.get("kernel") or ""))
        except (AttributeError, KeyError, TypeError) as e:
            raise ValueError(f"not a calibration ({e})") from e


def as_measured(known: exact.Known) -> exact.Known:
    """A row of a kept calibration with the class its boots' figures give
    (kbtools.exact.known_of), not the one a prior bounded it to then."""
    return dataclasses.replace(known, cls=exact.class_of(known.boot_range,
                                                         known.median))


def load(path: str) -> Calibration:
    """A calibration file; OSError or ValueError."""
    with open(path, encoding="utf-8") as f:
        return Calibration.from_json(json.load(f))


def save(path: str, cal: Calibration) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    results.write_json(tmp, cal.to_json())
    os.replace(tmp, path)


def of_boots(tests: Mapping[str, results.Test], stat: str = "median",
             prior: bool = True) -> Dict[str, exact.Known]:
    """The rows of icount runs whose repetitions came from two or more
    boots of one kernel (a run_all.sh --vs-kernel side, or boots merged
    with results.merge_dirs), each boot's repetitions in run order,
    bounded by the prior of their architecture (not when prior is
    False: what the boots alone showed, as the prior itself is made)."""
    rows: Dict[str, exact.Known] = {}
    for test in tests.values():
        if test.clock_mode() != results.ClockMode.ICOUNT:
            continue
        for row in test.rows.values():
            scale = test.insn_per_unit(row.unit) if row.unit else None
            if scale is None or row.status != results.Status.OK:
                continue
            for where, known in of_row(f"{test.name}:{row.name}", row,
                                       scale, stat).items():
                rows[where] = exact.with_prior(
                    known, exact.setup_of(test.header), where, None,
                    test.header.machine.icount_settings,
                    exact.kernel_of(test.header)) if prior else known
    return rows


def of_row(key: str, row: results.Row, scale: float, stat: str = "median"
           ) -> Dict[str, exact.Known]:
    """What the boots of one row (row.boots tells them apart; figures
    times scale, in instructions) showed of it, where a calibration
    keeps it: its stat under key and, where every repetition holds a
    steady mode (exact.figure_of), the mode under exact.mode_key(key);
    not bounded by any prior. The bisection calibrates good's boots with
    it."""
    figures = {key: stat}
    if exact.figure_of([row], stat) == exact.MODE:
        figures[exact.mode_key(key)] = exact.MODE
    out = {}
    for where, figure in figures.items():
        known = exact.known_of([[v * scale for v in boot]
                                for boot in row.boot_reps(figure)])
        if known:
            out[where] = known
    return out


def of_dirs(dirs: Sequence[str], stat: str = "median",
            prior: bool = True) -> Calibration:
    """The calibration from result directories of one kernel (each a
    boot, or boots already merged), bounded by the prior unless prior
    is False (of_boots); results.ResultError or OSError."""
    runs = [results.load(d) for d in dirs]
    merged: Dict[str, results.Test] = {}
    release = kernel = ""
    for run in runs:
        for name, test in run.tests.items():
            release = release or (test.header.kernel.release or "")
            kernel = kernel or (exact.kernel_of(test.header) or "")
            if name not in merged:
                merged[name] = test
                continue
            for rname, row in test.rows.items():
                into = merged[name].rows.setdefault(
                    rname, results.Row(rname, row.unit))
                for rep, boot in zip(row.reps, row.boots):
                    into.add_rep(rep, boot)
    rows = of_boots(merged, stat, prior)
    boots = max((k.boots for k in rows.values()), default=0)
    return Calibration(rows, boots, release,
                       sources=[os.path.abspath(d) for d in dirs],
                       kernel=kernel)


def qemu_version(binary: str) -> str:
    """QEMU's first --version line ('' when it cannot say)."""
    rc, out = proc.output([binary, "--version"])
    return out.splitlines()[0].strip() if rc == 0 and out else ""


def key_of(image: str, qemu: str, arch: str, cpus: int, icount: str,
           cmdline: Sequence[str], settings: str = "",
           programs: str = "") -> Key:
    return Key(kernel.file_sha(image), qemu_version(qemu), arch, cpus, icount,
               " ".join(cmdline), settings, programs)


def cache_dir() -> str:
    return os.path.join(paths.cache_dir(), "calibration")


def cache_path(key: Key) -> str:
    return os.path.join(cache_dir(), f"{key.digest()}.json")


def cached(key: Key) -> Optional[Calibration]:
    """The stored calibration of this key, or None (none, or one that
    cannot be read: it is taken again)."""
    try:
        cal = load(cache_path(key))
    except (OSError, ValueError):
        return None
    return cal if cal.key == key else None


def store(key: Key, cal: Calibration) -> str:
    """Keep cal as the calibration of key; its path."""
    os.makedirs(cache_dir(), exist_ok=True)
    cal.key = key
    path = cache_path(key)
    save(path, cal)
    return path


def describe(cal: Calibration) -> str:
    """One line: what the calibration is of."""
    medians = [k for key, k in cal.rows.items()
               if not key.endswith(exact.MODE_KEY_SUFFIX)]
    counts = {c: sum(1 for k in medians if k.cls == c)
              for c in exact.CLASSES}
    what = ", ".join(f"{n} {c}" for c, n in counts.items())
    of = f" of {cal.release}" if cal.release else ""
    modes = len(cal.rows) - len(medians)
    steady = f"; {modes} by a steady mode" if modes else ""
    return f"calibration{of}: {cal.boots} boots, {len(medians)} rows " \
        f"({what}{steady})"

