# SPDX-License-Identifier: GPL-2.0
"""The bench scripts' tables, from their programs' JSON (kbtools.bench
runs the programs; bench/*.py print the same tables from a file):

- seed_tables, seed_goal: taskstats' seed 000 table, every method's
  seconds per pass and ratio to per-pid netlink (taskstats-seed);
- memcg_table: one memcg_ks run's per-read, per-cat and cat-process
  cost of memory.stat and memory.numa_stat side by side
  (memcg-stat-read);
- pairs ... compare_dir: pmqtest's JSON read the way an rt-tests user
  reads rt-tests' own, ours beside theirs (pmqtest-vs-rttests);
- fork_table: fork's cost against the parent's size (fork-vs-size);
- book_table: proc_create beside TLPI's Table 28-3
  (proc-create-vs-book).
"""

import json
import re
import statistics
import sys
from typing import Any, Dict, List, Optional, Sequence, TextIO, Tuple

# A JSON object: a results document, one of its rows, an rt-tests pair.
Json = Dict[str, Any]

# ---- taskstats_seed ---------------------------------------------------------

SEED_METHODS = ["netlink_per_pid", "netlink_batched", "procfs",
                "procfs_pread", "ioctl", "bpf_iter"]
# The seed's seconds per pass (2021, RFC kernel), by process count.
SEED_PASSES = {
    "1000": {"netlink_per_pid": 0.004446851, "ioctl": 0.001553733},
    "10000": {"netlink_per_pid": 0.047024986, "ioctl": 0.023290664}}
# Each process count's rows by name ("_n": the count the run says).
SeedRows = Dict[str, Json]


def seed_rows(outdir: str, sizes: Sequence[str]) -> Tuple[SeedRows, str]:
    """Rows by name per size, the process count and the kernel release."""
    rows: SeedRows = {}
    kernel = "?"
    for n in sizes:
        with open(f"{outdir}/taskstats_{n}.json") as f:
            doc = json.load(f)
        rows[n] = {r["name"]: r for r in doc["rows"]}
        rows[n]["_n"] = doc["params"].get("nr_process", n)
        kernel = doc["kernel"]["release"]
    return rows, kernel


def seed_pass_s(rows: SeedRows, n: str, m: str) -> Optional[float]:
    r = rows[n].get(m)
    if not r or r.get("status") != "ok" or "extra" not in r:
        return None
    return float(r["extra"]["pass_s_median"])


def seed_header() -> str:
    return f"{'process-count':<16}" + "".join(f"{m:>17}" for m in SEED_METHODS)


def seed_tables(rows: SeedRows, kernel: str, sizes: Sequence[str]) -> None:
    print(f"kernel {kernel}; seconds per pass over all processes (median)")
    print(seed_header())
    print("-" * (16 + 17 * len(SEED_METHODS)))
    for n in sizes:
        cells = []
        for m in SEED_METHODS:
            v = seed_pass_s(rows, n, m)
            cells.append(f"{v:17.9f}" if v is not None else f"{'skip':>17}")
        print(f"{int(rows[n]['_n']):<16}" + "".join(cells))
    print()
    print("ratio per-pid netlink / method (x faster than netlink_per_pid)")
    print(seed_header())
    for n in sizes:
        base = seed_pass_s(rows, n, "netlink_per_pid")
        cells = []
        for m in SEED_METHODS:
            v = seed_pass_s(rows, n, m)
            cells.append(f"{base / v:16.2f}x" if base and v else f"{'-':>17}")
        print(f"{int(rows[n]['_n']):<16}" + "".join(cells))
    print()
    for n in sizes:
        r = rows[n].get("bpf_iter") or {}
        if r.get("status") == "ok" and "load_ms" in r.get("extra", {}):
            print(f"bpf_iter at {n}: program load {r['extra']['load_ms']:.3f} "
                  "ms, once (not in the passes above)")
    print()
    print("seed (2021, RFC kernel):")
    for n, s in SEED_PASSES.items():
        print(f"  {n:>6}: netlink {s['netlink_per_pid']:.9f}  "
              f"ioctl {s['ioctl']:.9f}  "
              f"({s['netlink_per_pid'] / s['ioctl']:.2f}x)")


def seed_goal(rows: SeedRows, goal: float) -> int:
    if "1000" not in rows:
        return 0
    base = seed_pass_s(rows, "1000", "netlink_per_pid")
    bat = seed_pass_s(rows, "1000", "netlink_batched")
    if not (base and bat):
        print("\ngoal: not measured (netlink rows skipped: run as root)")
        return 1
    r = base / bat
    verdict = "met" if r >= goal else "MISSED"
    print(f"\ngoal: netlink_batched >= {goal}x faster than netlink_per_pid "
          f"at 1000: {r:.2f}x, {verdict}")
    return 0 if r >= goal else 1


# ---- memcg_stat_read --------------------------------------------------------

MEMCG_NAME_RE = re.compile(
    r"^(stat|numa_stat)_(legacy|ks\w*?)_(per_read|per_cat|cat_process)$")
MEMCG_BPF_RE = re.compile(r"^bpf_iter(\d+)$")
MEMCG_FILES = {"stat": "memory.stat", "numa_stat": "memory.numa_stat"}
# A cell's key: (file, variant, mode).
MemcgCells = Dict[Tuple[str, str, str], float]


def cells_of(rows: Sequence[Json]) -> Tuple[MemcgCells, List[str]]:
    """{(file, variant, mode): median} of the rows that passed, and the
    variants, legacy first."""
    cells: MemcgCells = {}
    variants: List[str] = []
    for r in rows:
        m = MEMCG_NAME_RE.match(r.get("name", ""))
        if not m or r.get("status") != "ok" or "median" not in r:
            continue
        f, v, mode = m.groups()
        cells[(f, v, mode)] = r["median"]
        if v not in variants:
            variants.append(v)
    variants.sort(key=lambda v: (v != "legacy", len(v), v))
    return cells, variants


def fmt(x: Optional[float], width: int, digits: int = 3) -> str:
    return "%*.*f" % (width, digits, x) if x is not None else "%*s" % (width, "-")


def ratio(a: Optional[float], b: Optional[float]) -> str:
    return "%10.1f" % (a / b) if a and b else "%10s" % "-"


def memcg_table(doc: Json) -> List[str]:
    """The report, as a list of lines."""
    p = doc["params"]
    rows = doc["rows"]
    cells, variants = cells_of(rows)
    out = ["kernel %s, cgroup v%d %s (%s)" % (
        doc["kernel"]["release"], p["cgroup_version"], p["cgroup"],
        p["cgroup_origin"]),
        "%d reads per row (batches of %d), %d cat processes; median us per read, %s"
        % (p["count"], p["batch"], p["cat_count"], doc["clock"]), ""]
    hdr = "%-28s %10s %10s %12s %10s %10s" % (
        "file", "per_read", "per_cat", "cat_process", "cat/read", "cat/pcat")
    out += [hdr, "-" * len(hdr)]
    for v in variants:
        for f in ("stat", "numa_stat"):
            if (f, v, "per_read") not in cells:
                continue
            label = MEMCG_FILES[f] + ("" if v == "legacy" else ".ks [%s]" % v)
            rd, pc, cp = (cells.get((f, v, mode)) for mode in
                          ("per_read", "per_cat", "cat_process"))
            out.append("%-28s %s %s %s %s %s" % (
                label, fmt(rd, 10), fmt(pc, 10), fmt(cp, 12, 1),
                ratio(cp, rd), ratio(cp, pc)))
    dn = next((r for r in rows if r.get("name") == "cat_devnull_process"), None)
    if dn and "median" in dn:
        out.append("%-28s %10s %10s %12.1f" % ("cat /dev/null", "-", "-",
                                               dn["median"]))
    out.append("")
    out += ks_lines(cells, variants)
    out.append("")
    out += bpf_lines(rows, cells)
    return out


def ks_lines(cells: MemcgCells, variants: Sequence[str]) -> List[str]:
    ks = [v for v in variants if v != "legacy"]
    if not ks:
        return ["no .ks rows: the kernel has no memory.stat.ks (or no right to write a filter)"]
    out = ["ks / legacy (median per_read):"]
    for v in ks:
        for f in ("stat", "numa_stat"):
            a = cells.get((f, v, "per_read"))
            b = cells.get((f, "legacy", "per_read"))
            if a and b:
                out.append("  %-22s %-10s x%.2f" % (MEMCG_FILES[f] + ".ks", v, a / b))
    return out


def bpf_lines(rows: Sequence[Json], cells: MemcgCells) -> List[str]:
    """The bpf_iterN rows: us per read, against legacy memory.stat and
    the .ks filter of the same size (per_read), and the load once."""
    bpf = [r for r in rows if MEMCG_BPF_RE.match(r.get("name", ""))]
    ran = [r for r in bpf if r.get("status") == "ok" and "median" in r]
    if not ran:
        why = bpf[0].get("reason") if bpf else None
        return ["no bpf_iter rows ran: %s" % (why or "not in the results")]
    out = ["BPF cgroup iterator (create + read + close of an iterator fd), "
           "median us per read:",
           "  %-12s %10s %10s %10s" % ("row", "per_read", "/legacy", "/ks")]
    legacy = cells.get(("stat", "legacy", "per_read"))
    for r in ran:
        m = MEMCG_BPF_RE.match(r["name"])
        n = m.group(1) if m else ""
        ks = cells.get(("stat", "ks" + n, "per_read"))
        out.append("  %-12s %s %s %s" % (
            r["name"], fmt(r["median"], 10), quotient(r["median"], legacy),
            quotient(r["median"], ks)))
    load_ms = (ran[0].get("extra") or {}).get("load_ms")
    if load_ms is not None:
        out.append("  program load %.1f ms, once for every row; flush: %s"
                   % (load_ms, flush_of(ran[0].get("note"))))
    return out


def flush_of(note: Optional[str]) -> str:
    """The flush a bpf_iter row's note names ("...fd: WAY, then ...")."""
    m = re.search(r"fd: ([^,]+)", note or "")
    return m.group(1) if m else "?"


def quotient(a: Optional[float], b: Optional[float]) -> str:
    return "%10.2f" % (a / b) if a and b else "%10s" % "-"


# ---- rt_tests_json ----------------------------------------------------------

def rt_load(path: str) -> Json:
    with open(path, encoding="utf-8") as f:
        doc: Json = json.load(f)
        return doc


def pairs(doc: Json) -> List[Json]:
    """Per pair: receiver min/avg/max (us), sender samples, timeouts."""
    out = []
    for key in sorted(doc["thread"], key=int):
        t = doc["thread"][key]
        rcv, snd = t["receiver"], t["sender"]
        out.append({
            "pair": int(key),
            "min": rcv["min"],
            "avg": rcv["avg"],
            "max": rcv["max"],
            "samples": snd["samples"],
            "timeouts": rcv["timeoutcount"],
            "interval": snd["interval"],
        })
    return out


def weighted_avg(doc: Json) -> float:
    """Mean latency over all pairs, weighted by each pair's samples."""
    ps = pairs(doc)
    n = sum(p["samples"] for p in ps)
    return float(sum(p["avg"] * p["samples"] for p in ps) / n) if n \
        else float("nan")


def type_name(v: object) -> str:
    # JSON numbers: an int and a float are different types to a parser
    # that does int(...) or isinstance checks.
    return type(v).__name__


def schema_diff(ref: object, other: object, path: str = "$") -> List[str]:
    """Keys of @ref missing from @other or with another JSON type."""
    problems: List[str] = []
    if isinstance(ref, dict):
        if not isinstance(other, dict):
            return [f"{path}: object expected, got {type_name(other)}"]
        for k, v in ref.items():
            if k not in other:
                problems.append(f"{path}.{k}: missing")
            else:
                problems += schema_diff(v, other[k], f"{path}.{k}")
    elif type_name(ref) != type_name(other):
        problems.append(f"{path}: {type_name(ref)} expected, got {type_name(other)}")
    return problems


def generalise(doc: Json) -> Json:
    """Compare thread objects by shape: only thread "0" of each."""
    d = dict(doc)
    if "thread" in d and d["thread"]:
        d["thread"] = {"0": d["thread"]["0"]}
    return d


def pair_medians(docs: Sequence[Json], i: int) -> Tuple[float, ...]:
    """Json @i's min, avg, max and samples: the median over the rounds."""
    ps = [pairs(d)[i] for d in docs]
    return tuple(statistics.median(p[k] for p in ps)
                 for k in ("min", "avg", "max", "samples"))


def compare_config(theirs: Sequence[Json], ours: Sequence[Json], cfg: str,
                   rounds: int, max_ratio: float, out: TextIO = sys.stdout
                   ) -> int:
    """Print one configuration's table. Returns 0, or 1 on a ratio above
    @max_ratio, a layout difference or a file without kbench rows."""
    print(f"\n## pmqtest {cfg}  (median of {rounds} round(s), us)", file=out)
    print(f"{'pair':<6}{'rt-tests Min/Avg/Max':>24}{'kbench Min/Avg/Max':>24}"
          f"{'Avg ratio':>11}{'samples (rt/kb)':>18}", file=out)
    for i in range(len(pairs(theirs[0]))):
        t, o = pair_medians(theirs, i), pair_medians(ours, i)
        ratio = o[1] / t[1] if t[1] else float("nan")
        print(f"{i:<6}{t[0]:>8.0f}{t[1]:>8.2f}{t[2]:>8.0f}"
              f"{o[0]:>8.0f}{o[1]:>8.2f}{o[2]:>8.0f}{ratio:>11.3f}"
              f"{t[3]:>9.0f}/{o[3]:<8.0f}", file=out)
    wt = statistics.median(weighted_avg(d) for d in theirs)
    wo = statistics.median(weighted_avg(d) for d in ours)
    ratio = wo / wt
    status = 0 if ratio <= max_ratio else 1
    verdict = "ok" if not status else f"FAIL: above {max_ratio}"
    print(f"{'all':<6}{'':>8}{wt:>8.2f}{'':>8}{'':>8}{wo:>8.2f}{'':>8}"
          f"{ratio:>11.3f}   {verdict}", file=out)
    # Our file read by the same code, and laid out like theirs.
    problems = schema_diff(generalise(theirs[0]), generalise(ours[0]))
    for p in problems:
        print(f"# JSON difference: {p}", file=out)
    print("# JSON: both files read by rt_tests_json.pairs(); rt-tests keys "
          "and types in ours: "
          + ("same" if not problems else f"{len(problems)} difference(s)"),
          file=out)
    rows = ours[0].get("rows", [])
    print(f"# JSON: kbench rows in ours: {', '.join(r['name'] for r in rows)}",
          file=out)
    return 1 if status or problems or not rows else 0


def compare_dir(tmp: str, nconf: int, rounds: int, max_ratio: float) -> int:
    status = 0
    for c in range(nconf):
        with open(f"{tmp}/c{c}.cfg", encoding="utf-8") as f:
            cfg = f.read().strip()
        docs = {w: [rt_load(f"{tmp}/c{c}_r{r}_{w}.json")
                    for r in range(1, rounds + 1)]
                for w in ("theirs", "ours")}
        status |= compare_config(docs["theirs"], docs["ours"], cfg, rounds,
                                 max_ratio)
    print("\nAvg ratio = kbench / rt-tests (lower is better). Both stop every "
          "pair when the first one reaches -l; 'all' is the sample-weighted "
          "mean.")
    return status


# ---- fork_vs_size -----------------------------------------------------------

FORK_METHODS = ["fork", "vfork", "posix_spawn"]
# A JSON row by (method, size).
ForkCells = Dict[Tuple[str, str], Json]


def measured_cells(doc: Json) -> Tuple[ForkCells, List[str]]:
    """The measured METHOD@SIZE rows by (method, size), sizes in order."""
    cells: ForkCells = {}
    sizes: List[str] = []
    for row in doc["rows"]:
        if "@" not in row["name"] or row.get("status") != "ok":
            continue
        method, size = row["name"].split("@", 1)
        cells[(method, size)] = row
        if size not in sizes:
            sizes.append(size)
    return cells, sizes


def size_line(cells: ForkCells, size: str, base: str) -> str:
    """One size's line: VmSize, VmRSS, each method, fork ns per page."""
    ref = cells[("fork", size)]
    ext = ref["extra"]
    line = "%-9s %11.2f %11.2f" % (size, ext["vmsize_kib"] / 1024.0,
                                   ext["vmrss_kib"] / 1024.0)
    for m in FORK_METHODS:
        c, b = cells.get((m, size)), cells.get((m, base))
        if c is None or b is None:
            line += " %24s" % "-"
        else:
            cp, bp = c["extra"]["p10"], b["extra"]["p10"]
            line += " %8.1f %7.1f %6.1fx" % (c["median"], cp, cp / bp)
    b = cells.get(("fork", base))
    pages = (ext["vmrss_kib"] - b["extra"]["vmrss_kib"]) / 4.0 if b else 0
    if b and pages > 1000:
        line += " %14.1f" % ((ext["p10"] - b["extra"]["p10"]) *
                             1000.0 / pages)
    else:
        line += " %14s" % "-"
    return line


def fork_table(doc: Json) -> List[str]:
    """The lines to print; ValueError when nothing was measured."""
    cells, sizes = measured_cells(doc)
    if not sizes:
        raise ValueError("no measured cells in the JSON")
    base = sizes[0]
    out = ["",
           "us per creation (create + exit + wait): median, 10th percentile (p10),",
           "x = p10 relative to its p10 at %s (p10 resists the load of a "
           "shared machine)" % base]
    head = "%-9s %11s %11s" % ("size", "VmSize MB", "VmRSS MB")
    for m in FORK_METHODS:
        head += " %24s" % (m + " med/p10/x")
    out.append(head + " %14s" % "fork ns/page")
    out += [size_line(cells, s, base) for s in sizes if ("fork", s) in cells]
    for row in doc["rows"]:
        if row["name"].endswith(("_flat", "_grows")):
            ext = row.get("extra", {})
            out.append("%-17s %-4s ratio=%s bound=%s" % (
                row["name"], row["status"], ext.get("ratio", "-"),
                ext.get("bound", "-")))
    return out


# ---- proc_create_vs_book ----------------------------------------------------

# Table 28-3: elapsed s, parent CPU s, rate per size.
BOOK = {
    "fork": [(22.27, 7.99, 4544), (26.38, 8.98, 4135), (126.93, 52.55, 1276)],
    "vfork": [(3.52, 2.49, 28955), (3.55, 2.50, 28621), (3.53, 2.51, 28810)],
    "clone": [(2.97, 2.14, 34333), (2.98, 2.13, 34217), (2.93, 2.10, 34688)],
    "fork_exec": [(135.72, 12.39, 764), (146.15, 16.69, 719),
                  (260.34, 61.86, 435)],
    "vfork_exec": [(107.36, 6.27, 969), (107.81, 6.35, 964),
                   (107.97, 6.38, 960)],
}
BOOK_SIZES = ["1.70MB", "2.70MB", "11.70MB"]
BOOK_ORDER = ["fork", "vfork", "clone", "fork_exec", "vfork_exec",
              "posix_spawn", "posix_spawn_exec", "clone3_vfork"]
BOOK_N = 100000


def cell_line(method: str, i: int, size: str, row: Json) -> str:
    """One cell beside the book's, scaled to BOOK_N creations."""
    e = row["extra"]
    k = BOOK_N / e["creations"]
    here = "%8.2f (%6.2f) %7.0f/s" % (e["elapsed_s"] * k,
                                      e["parent_cpu_s"] * k, e["rate_per_s"])
    book = BOOK.get(method)
    if not book:
        return "%-17s %-8s %27s %27s %8s" % (method, size, here, "-", "-")
    b = book[i]
    return "%-17s %-8s %27s %8.2f (%6.2f) %7d/s %7.1fx" % (
        method, size, here, b[0], b[1], b[2], b[0] / (e["elapsed_s"] * k))


def book_table(doc: Json) -> List[str]:
    """The lines to print."""
    rows = {r["name"]: r for r in doc["rows"]}
    out = ["proc_create: %s, kernel %s, %s CPUs; book: x86-32, Linux 2.6.27" % (
               doc.get("cmdline", "?"), doc["kernel"]["release"],
               doc["machine"]["cpus"]),
           "seconds for %d creations: elapsed (parent CPU); rate = creations "
           "per elapsed second; x = book elapsed / ours" % BOOK_N,
           "%-17s %-8s %27s %27s %8s" % ("method", "size", "here", "book", "x")]
    for m in BOOK_ORDER:
        for i, size in enumerate(BOOK_SIZES):
            r = rows.get("%s@%s" % (m, size))
            if r is not None and r.get("status") == "ok":
                out.append(cell_line(m, i, size, r))
    return out
