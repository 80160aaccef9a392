# SPDX-License-Identifier: GPL-2.0
"""Decisions and state of scripts/bisect.sh: which commit made a figure
slower (or a check fail).

The state directory holds:
  settings.json         the bisection's parameters (for --resume)
  bisect.log            the `git bisect log`, after every step
  boots/HASH/K/         the JSON results of the K-th usable boot of HASH
  boots/HASH/K.ktap     its KTAP stream
  signal.json           the rows on which good and bad differ
  steps.tsv             one line per step (see STEP_KEYS)

A commit's figures are its usable boots, one repetition per boot (the
boot is the unit of replication, as with run_all.sh --vs-kernel).
Endpoint boots of every step join the endpoints' figures, so each step is
judged against endpoints measured around it.

    python3 -m kbtools.bisect COMMAND STATE ...   (see main())
"""

import json
import os
import sys

from kbtools import compare, ktap, results, stats

SETTINGS = "settings.json"
SIGNAL = "signal.json"
STEPS = "steps.tsv"
STEP_KEYS = ("commit", "subject", "ratio", "ci_low", "ci_high", "verdict",
             "boots", "note")
# A step's class, as git bisect names it.
CLASSES = ("good", "bad", "skip")
# cmd_endpoints: not different yet, before the last look.
EXIT_MORE = 10
# The 'no culprit' line of endpoints that were measured and do not differ
# (more boots may still tell them apart), before 'ROW (figure, verdict)'.
NO_DIFFERENCE = "no culprit: good and bad do not differ on "
OPPOSITE = {"slower": "faster", "faster": "slower"}


class BisectError(Exception):
    """Unusable state or input; the message says which."""


# ---- settings and state ---------------------------------------------------

def parse_target(text):
    """TEST[:ROW] -> (test, row or None)."""
    test, _, row = text.partition(":")
    if not test or (":" in text and not row) or ":" in row:
        raise BisectError(f"'{text}' is not TEST or TEST:ROW")
    return test, row or None


def make_settings(tree, good, bad, direction, max_repeat, alpha, threshold,
                  check, targets):
    """The settings of a new bisection, checked."""
    if direction not in OPPOSITE:
        raise BisectError(f"direction '{direction}' is not slower or faster")
    for t in targets:
        parse_target(t)
    try:
        alpha, threshold = float(alpha), float(threshold)
        max_repeat = int(max_repeat)
    except ValueError as e:
        raise BisectError(f"not a number: {e}")
    if not 0 < alpha < 1:
        raise BisectError(f"alpha {alpha:g} is not between 0 and 1")
    least = stats.min_reps(alpha)
    if max_repeat < least:
        raise BisectError(f"--max-repeat {max_repeat}: a verdict at alpha "
                          f"{alpha:g} needs at least {least} boots per "
                          f"side")
    return {"tree": tree, "good": good, "bad": bad, "direction": direction,
            "max_repeat": max_repeat, "min_boots": least, "alpha": alpha,
            "threshold": threshold, "check": check or None,
            "targets": list(targets)}


def load_settings(state):
    path = os.path.join(state, SETTINGS)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise BisectError(f"no bisection state in {state} ({e.strerror})")
    except ValueError as e:
        raise BisectError(f"{path} is not valid JSON: {e}")


def boots_dir(state, commit):
    return os.path.join(state, "boots", commit)


def usable_boots(state, commit):
    """The numbers of the commit's usable boots (directories with JSON)."""
    d = boots_dir(state, commit)
    if not os.path.isdir(d):
        return []
    return sorted(int(n) for n in os.listdir(d)
                  if n.isdigit() and os.path.isdir(os.path.join(d, n)))


def load_run(state, commit, label):
    """The commit's usable boots as one Run (a repetition per boot)."""
    if not usable_boots(state, commit):
        return results.Run(label)
    return results.load(boots_dir(state, commit), label)


def wanted(settings, test, row):
    """The rows the user named: every row of a test named alone."""
    for target in settings["targets"]:
        t, r = parse_target(target)
        if t == test and (r is None or r == row):
            return True
    return False


# ---- decisions --------------------------------------------------------------

def endpoints(settings, good, bad):
    """(signal rows, message): the wanted rows on which bad differs from
    good in the bisected direction, with compare's verdicts; the message
    is the 'no culprit' line when there are none."""
    direction = settings["direction"]
    entries = compare.compare_one(good, bad, settings["threshold"],
                                  "median", settings["alpha"])
    entries = [e for e in entries if wanted(settings, e["test"], e["name"])]
    signal = [{"test": e["test"], "row": e["name"]} for e in entries
              if e["verdict"] == direction]
    if signal:
        return signal, None
    if not entries:
        return [], ("no culprit: none of the rows "
                    f"{', '.join(settings['targets'])} was measured on both "
                    f"good and bad")
    shown = [x for x in entries if x["ratio"] is not None] or entries
    e = shown[0]
    more = f" and {len(shown) - 1} more rows" if len(shown) > 1 else ""
    return [], (f"{NO_DIFFERENCE}{e['test']}:{e['name']}{more} "
                f"({figure(e)}, {e['verdict']})")


def figure(e):
    """'x1.234, CI 1.100-1.300' of an entry."""
    text = compare.fmt_ratio(e["ratio"])
    if e["ci_low"] is not None:
        text += f", CI {e['ci_low']:.3f}-{e['ci_high']:.3f}"
    return text


def row_values(run, test, row):
    t = run.tests.get(test)
    r = t.rows.get(row) if t else None
    if r is None or r.status != "ok":
        return []
    return r.values("median")


def classify_row(settings, good, bad, step, test, row):
    """(class or None, entry against good) of one signal row: bad when the
    step differs from good as bad does; good when it differs from bad the
    other way and not from good; None while neither holds."""
    direction = settings["direction"]
    vs = row_values(step, test, row)
    vs_good = compare.row_verdict(row_values(good, test, row), vs,
                                  settings["threshold"], settings["alpha"])
    vs_bad = compare.row_verdict(row_values(bad, test, row), vs,
                                 settings["threshold"], settings["alpha"])
    if not vs:
        return None, vs_good
    if vs_good["verdict"] == direction:
        return "bad", vs_good
    if vs_bad["verdict"] == OPPOSITE[direction]:
        return "good", vs_good
    return None, vs_good


def classify(settings, signal, good, bad, step, boots, max_boots):
    """(class, entry of the first signal row): good or bad when every
    signal row says so; 'more' while undecided and boots < max_boots;
    'skip' after that."""
    classes, first = [], None
    for s in signal:
        c, e = classify_row(settings, good, bad, step, s["test"], s["row"])
        classes.append(c)
        first = first or e
    if classes and classes[0] is not None and \
            all(c == classes[0] for c in classes):
        return classes[0], first
    return ("more" if boots < max_boots else "skip"), first


def check_result(stream, name):
    """ok / not ok / skip / missing: the result NAME (TEST:CHECK or CHECK)
    in a KTAP stream, at any nesting depth under TEST's result."""
    test, _, check = name.rpartition(":")
    doc = ktap.parse(stream)

    def walk(d, inside):
        for r in d.results:
            here = inside or not test or test in r.name
            if here and r.name == check:
                if r.directive == "SKIP":
                    return "skip"
                return "ok" if r.ok else "not ok"
            if r.child is not None:
                found = walk(r.child, here)
                if found:
                    return found
        return None

    return walk(doc, False) or "missing"


def stream_problems(stream):
    """Why a KTAP stream is incomplete (empty when it is complete): its
    structure, not its results; a failed row is a result."""
    doc = ktap.parse(stream)
    if doc.version is None or doc.plan is None:
        return ["no KTAP version line or plan: the run did not start"]
    return ktap.check(doc)


# ---- the step table ------------------------------------------------------------

def fmt_step(step):
    """One line: commit, subject, ratio to good with its interval,
    verdict, boots used."""
    if step.get("ratio") in (None, ""):
        fig = "-"
    else:
        fig = f"x{float(step['ratio']):.3f}"
        if step.get("ci_low") not in (None, ""):
            fig += (f" ({float(step['ci_low']):.3f}-"
                    f"{float(step['ci_high']):.3f})")
    subject = step["subject"]
    if len(subject) > 44:
        subject = subject[:43] + "~"
    line = (f"{step['commit'][:12]}  {subject:<44}  {fig:<22}  "
            f"{step['verdict']:<4}  boots {step['boots']}")
    if step.get("note"):
        line += f"  ({step['note']})"
    return line


def append_step(state, step):
    path = os.path.join(state, STEPS)
    with open(path, "a", encoding="utf-8") as f:
        f.write("\t".join(str(step.get(k) if step.get(k) is not None
                              else "").replace("\t", " ")
                          for k in STEP_KEYS) + "\n")


def read_steps(state):
    path = os.path.join(state, STEPS)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [dict(zip(STEP_KEYS, ln.rstrip("\n").split("\t")))
                for ln in f if ln.strip()]


# ---- commands -------------------------------------------------------------------

def _signal(state):
    try:
        with open(os.path.join(state, SIGNAL), encoding="utf-8") as f:
            return json.load(f)
    except OSError:
        raise BisectError(f"{state}: the endpoints were not compared yet")


def cmd_endpoints(state, final="1"):
    """Compare good and bad; exit 0 and keep the signal rows when they
    differ. Else, on the final look (FINAL 1: each has --max-repeat
    boots), print the 'no culprit' line and exit 1; on an earlier one
    print how far it got and exit EXIT_MORE (boot each once more)."""
    st = load_settings(state)
    good = load_run(state, st["good"], "good")
    bad = load_run(state, st["bad"], "bad")
    if not good.tests or not bad.tests:
        raise BisectError("no usable boot of good or bad")
    if final not in ("0", "1"):
        raise BisectError(f"FINAL '{final}' is not 0 or 1")
    signal, message = endpoints(st, good, bad)
    if message and final == "0" and message.startswith(NO_DIFFERENCE):
        print(f"endpoints: no difference yet on "
              f"{message[len(NO_DIFFERENCE):]}: one more boot of each")
        return EXIT_MORE
    for s in signal:
        e = compare.row_verdict(row_values(good, s["test"], s["row"]),
                                row_values(bad, s["test"], s["row"]),
                                st["threshold"], st["alpha"])
        print(f"endpoints: bad is {st['direction']} than good on "
              f"{s['test']}:{s['row']} ({figure(e)}, "
              f"{e['n_base']}+{e['n_candidate']} boots)")
    if message:
        print(message)
        return 1
    results.write_text(os.path.join(state, SIGNAL),
                       json.dumps(signal, indent=1) + "\n")
    return 0


def cmd_classify(state, commit, boots, max_boots, subject, used):
    """Print good, bad, more or skip for the commit; on a final class
    also record and print its step line."""
    st = load_settings(state)
    signal = _signal(state)
    good = load_run(state, st["good"], "good")
    bad = load_run(state, st["bad"], "bad")
    step = load_run(state, commit, commit[:12])
    c, e = classify(st, signal, good, bad, step, int(boots), int(max_boots))
    print(c)
    if c != "more":
        note = "undecided after the last boot" if c == "skip" else None
        record(state, commit, subject, c, used, note, e)
    return 0


def record(state, commit, subject, verdict, used, note=None, e=None):
    step = {"commit": commit, "subject": subject, "verdict": verdict,
            "boots": used, "note": note}
    if e is not None:
        step.update(ratio=e["ratio"], ci_low=e["ci_low"],
                    ci_high=e["ci_high"])
    append_step(state, step)
    print(fmt_step(step))


def cmd_record(state, commit, subject, verdict, used, note=""):
    """Record a step decided without a comparison (a build failure, a
    boot that did not run, a functional check); with figures of the
    commit and of good, its ratio to good is shown all the same."""
    if verdict not in CLASSES:
        raise BisectError(f"'{verdict}' is not one of {', '.join(CLASSES)}")
    st = load_settings(state)
    e = None
    if not st["check"] and os.path.exists(os.path.join(state, SIGNAL)):
        s = _signal(state)[0]
        vc = row_values(load_run(state, commit, "c"), s["test"], s["row"])
        if vc and commit != st["good"]:
            vg = row_values(load_run(state, st["good"], "good"), s["test"],
                            s["row"])
            e = compare.row_verdict(vg, vc, st["threshold"], st["alpha"])
    record(state, commit, subject, verdict, used, note or None, e)
    return 0


def cmd_init(state, *args):
    """Write the settings of a new bisection into STATE."""
    if len(args) < 9:
        raise BisectError("init needs TREE GOOD BAD DIRECTION MAX_REPEAT "
                          "ALPHA THRESHOLD CHECK TARGET...")
    st = make_settings(*args[:8], args[8:])
    os.makedirs(state, exist_ok=True)
    results.write_text(os.path.join(state, SETTINGS),
                       json.dumps(st, indent=1) + "\n")
    return 0


def cmd_get(state, key):
    """Print one setting (a list one item per line, none as nothing)."""
    st = load_settings(state)
    if key not in st:
        raise BisectError(f"no setting '{key}'")
    v = st[key]
    for item in v if isinstance(v, list) else [v]:
        if item is not None:
            print(item)
    return 0


def cmd_table(state):
    for s in read_steps(state):
        print(fmt_step(s))
    return 0


def cmd_boot_ok(path, check=None):
    """Exit 0 when the KTAP stream at path is complete (with --check:
    print the check's result), 1 with the reason when it is not."""
    with open(path, encoding="utf-8", errors="replace") as f:
        stream = f.read()
    problems = stream_problems(stream)
    if problems:
        print(f"incomplete KTAP stream: {problems[0]}")
        return 1
    if check:
        print(check_result(stream, check))
    return 0


USAGE = """usage: python3 -m kbtools.bisect COMMAND ARGS
  init STATE TREE GOOD BAD slower|faster MAX_REPEAT ALPHA THRESHOLD CHECK
       TARGET...         (CHECK '' for a figure)
  get STATE KEY
  endpoints STATE [FINAL]  (FINAL 0: exit 10 when they do not differ yet)
  classify STATE COMMIT BOOTS MAX_BOOTS SUBJECT USED
  record STATE COMMIT SUBJECT good|bad|skip USED [NOTE]
  table STATE
  boot-ok KTAP [CHECK]
  targets TARGET...      (exit 2 when one is not TEST or TEST:ROW)"""

COMMANDS = {
    "init": (cmd_init, 10, 99),
    "get": (cmd_get, 2, 2),
    "endpoints": (cmd_endpoints, 1, 2),
    "classify": (cmd_classify, 6, 6),
    "record": (cmd_record, 5, 6),
    "table": (cmd_table, 1, 1),
    "boot-ok": (cmd_boot_ok, 1, 2),
    "targets": (lambda *t: [parse_target(x) for x in t] and 0, 1, 99),
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print(USAGE, file=sys.stderr)
        return 2
    fn, least, most = COMMANDS[argv[0]]
    args = argv[1:]
    if not least <= len(args) <= most:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        return fn(*args)
    except BisectError as e:
        print(f"kbtools.bisect: {results.one_line(str(e))}", file=sys.stderr)
        return 2
    except results.ResultError as e:
        print(f"kbtools.bisect: {results.one_line(str(e))}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
