# SPDX-License-Identifier: GPL-2.0
"""README.md and the guides of docs/: what they link to and the commands
they show, checked without booting anything.

- every relative link resolves, and so does its #anchor (GitHub's
  heading ids);
- every command of a ```sh or ```bash block that starts with a path of
  the repository (./run_all.sh, ./kbench, scripts/..., bench/...,
  testkernel/..., make TARGET, ...) names a file or Makefile target
  that exists, and each long option written after it appears in that
  command's --help (run once per command, with a timeout; skipped,
  saying why, for a script without --help or a --help that fails here);
- every page of docs/ starts with its commands and README.md links it;
- every old name README.md keeps working is a link to its new name
  (the same with '_' for '-'), whose messages and help give the new name
  whichever name runs it, and every link of the clone is such a name.

Each check is shown to fail on a broken sample (Samples)."""

import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile
import unittest
from typing import Dict, Iterator, List, Optional, Set, Tuple

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kbtools.__main__ import GROUPS, TASKS  # noqa: E402

HELP_TIMEOUT = 30
FENCE = re.compile(r"^```(\S*)\s*$")
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
SHELL_OPERATORS = {"|", "||", "&", "&&", ";", "<", ">", ">>", "2>", "<<"}
URL = re.compile(r"^[a-z][a-z0-9+.-]*:")


def doc_files(top: str = TOP) -> List[str]:
    """README.md and docs/*.md, relative to TOP."""
    pages = sorted(glob.glob(os.path.join(top, "docs", "*.md")))
    return ["README.md"] + [os.path.relpath(p, top) for p in pages]


def read(top: str, rel: str) -> str:
    with open(os.path.join(top, rel), encoding="utf-8") as f:
        return f.read()


# ---- Markdown ----------------------------------------------------------------

def code_blocks(text: str) -> Iterator[Tuple[str, List[str]]]:
    """(language, lines) of every fenced code block."""
    lang: Optional[str] = None
    lines: List[str] = []
    for line in text.splitlines():
        m = FENCE.match(line)
        if lang is None:
            if m:
                lang, lines = m.group(1), []
        elif line.strip() == "```":
            yield lang, lines
            lang = None
        else:
            lines.append(line)


def prose_lines(text: str) -> Iterator[str]:
    """The lines outside fenced code blocks."""
    inside = False
    for line in text.splitlines():
        if not inside and FENCE.match(line):
            inside = True
        elif inside and line.strip() == "```":
            inside = False
        elif not inside:
            yield line


def slug(heading: str) -> str:
    """GitHub's id of a heading: lower case, links reduced to their text,
    punctuation dropped but '-' and '_', spaces made '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> Set[str]:
    """The ids of a page's headings, repeated ones numbered as GitHub does."""
    seen: Dict[str, int] = {}
    ids: Set[str] = set()
    for line in prose_lines(text):
        m = re.match(r"^#{1,6} (.+?)\s*#*\s*$", line)
        if not m:
            continue
        base = slug(m.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        ids.add(base if n == 0 else f"{base}-{n}")
    return ids


def link_targets(text: str) -> List[str]:
    """The targets of a page's links, those in code left out."""
    return [m.group(1) for line in prose_lines(text)
            for m in LINK.finditer(INLINE_CODE.sub("", line))]


def link_problems(top: str, rel: str) -> List[str]:
    """The links of page REL that lead nowhere."""
    text = read(top, rel)
    problems = []
    for target in link_targets(text):
        if URL.match(target):
            continue
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
        if dest.startswith(".."):
            problems.append(f"{rel}: link '{target}' leaves the repository")
            continue
        if not os.path.exists(os.path.join(top, dest)):
            problems.append(f"{rel}: link '{target}': no file {dest}")
            continue
        if anchor and dest.endswith(".md") and anchor not in anchors(read(top, dest)):
            problems.append(f"{rel}: link '{target}': {dest} has no heading"
                            f" with the id '{anchor}'")
    return problems


# ---- Commands ----------------------------------------------------------------

def shell_commands(text: str) -> List[str]:
    """The commands of a page's sh and bash blocks, continued lines joined."""
    commands = []
    for lang, lines in code_blocks(text):
        if lang not in ("sh", "bash"):
            continue
        cur = ""
        for line in lines:
            cur += line.strip()
            if cur.endswith("\\"):
                cur = cur[:-1].rstrip() + " "
                continue
            if cur.strip():
                commands.append(cur.strip())
            cur = ""
        if cur.strip():
            commands.append(cur.strip())
    return commands


def words(command: str) -> List[str]:
    """The words of the first simple command: comments, redirections and
    what follows a pipe or a list operator left out; VAR=value first
    dropped."""
    lex = shlex.shlex(command, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    out: List[str] = []
    for w in lex:
        if w in SHELL_OPERATORS:
            break
        out.append(w)
    while out and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", out[0]):
        out.pop(0)
    return out


def long_options(args: List[str]) -> List[str]:
    """The --options among ARGS (placeholder brackets stripped), up to '--'."""
    opts = []
    for a in args:
        a = a.strip("[]").rstrip(".").rstrip("]")
        if a == "--":
            break
        if re.match(r"^--[a-zA-Z][\w-]*", a):
            opts.append(a.split("=", 1)[0])
    return opts


def in_repo(top: str, word: str) -> bool:
    """Whether WORD is a path into the repository: ./X, or a path whose
    first component is a top-level entry of it."""
    if word.startswith("./"):
        return True
    first = word.split("/", 1)[0]
    return "/" in word and bool(first) and os.path.exists(os.path.join(top, first))


def built_by_make(top: str, rel: str) -> bool:
    """Whether REL is a build product (ignored by git; without git: a file
    below a directory other than the top that has a Makefile, as
    fuzz/build/msan/ is below fuzz/)."""
    try:
        r = subprocess.run(["git", "-C", top, "check-ignore", "-q", "--no-index", rel],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=HELP_TIMEOUT)
        if r.returncode in (0, 1):
            return r.returncode == 0
    except OSError:
        pass
    d = os.path.dirname(rel)
    while d:
        if os.path.exists(os.path.join(top, d, "Makefile")):
            return True
        d = os.path.dirname(d)
    return False


def make_targets(makefile: str) -> Set[str]:
    targets: Set[str] = set()
    with open(makefile, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^([A-Za-z0-9_.%$()/ -]+?)\s*::?(?!=)", line)
            if m:
                targets.update(m.group(1).split())
    return targets


def make_problems(top: str, args: List[str]) -> Tuple[List[str], Optional[str]]:
    """`make ARGS`: the targets must be the Makefile's (of -C DIR in the
    repository). Problems, or the reason it is not checked."""
    directory, targets, i = ".", [], 0
    while i < len(args):
        a = args[i]
        if a == "-C" and i + 1 < len(args):
            directory, i = args[i + 1], i + 2
            continue
        if a.startswith("-C"):
            directory = a[2:]
        elif not a.startswith("-") and "=" not in a:
            targets.append(a)
        i += 1
    makefile = os.path.join(top, directory, "Makefile")
    if not os.path.exists(makefile):
        return [], f"make -C {directory}: a directory outside the repository"
    known = make_targets(makefile)
    return [f"make -C {directory}: no target '{t}' in {os.path.relpath(makefile, top)}"
            for t in targets if t not in known], None


def mentions(text: str, word: str) -> bool:
    """Whether TEXT has WORD (an option, a subcommand) as a word of its own."""
    return re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", text) is not None


def front_door_task(argv: List[str]) -> Tuple[str, ...]:
    """`./kbench TASK` or `./kbench GROUP TASK` of ARGV, as far as it names
    one (the front door's help lists tasks, a task's its options)."""
    if len(argv) > 2 and argv[1] in GROUPS and argv[2] in GROUPS[argv[1]]:
        return tuple(argv[:3])
    if len(argv) > 1 and argv[1] in TASKS:
        return tuple(argv[:2])
    return (argv[0],)


def help_argvs(argv: List[str], top_help: Optional[str]) -> List[Tuple[str, ...]]:
    """The --help commands that tell ARGV's options: the script's; for a
    subcommand its top help names (`packages.py readme`), the
    subcommand's too."""
    if os.path.basename(argv[0]) == "kbench":
        return [front_door_task(argv)]
    tries: List[Tuple[str, ...]] = [(argv[0],)]
    if top_help and len(argv) > 1 and re.match(r"^[a-z][a-z0-9-]*$", argv[1]) \
            and mentions(top_help, argv[1]):
        tries.append((argv[0], argv[1]))
    return tries


def has_help(top: str, path: str) -> bool:
    """Whether the script takes --help: it says so, or it is Python (the
    tools' mains use argparse), or it hands over to kbtools."""
    with open(os.path.join(top, path), "rb") as f:
        body = f.read()
    python = body.startswith(b"#!") and b"python" in body.split(b"\n", 1)[0]
    return python or any(w in body for w in (b"--help", b"argparse", b"kbtools"))


class HelpOf:
    """`ARGV --help` run in the repository, once per argv, with a timeout:
    its output, or None when it fails (why() says how)."""
    def __init__(self, top: str):
        self.top = top
        self.cache: Dict[Tuple[str, ...], Tuple[Optional[str], str]] = {}

    def __call__(self, argv: Tuple[str, ...]) -> Optional[str]:
        if argv not in self.cache:
            self.cache[argv] = self.run(argv)
        return self.cache[argv][0]

    def why(self, argv: Tuple[str, ...]) -> str:
        return self.cache[argv][1]

    def run(self, argv: Tuple[str, ...]) -> Tuple[Optional[str], str]:
        env = {k: v for k, v in os.environ.items() if k != "KBENCH_PROG"}
        path = os.path.join(self.top, argv[0])
        try:
            r = subprocess.run([path, *argv[1:], "--help"], cwd=self.top, env=env,
                               stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=HELP_TIMEOUT)
        except subprocess.TimeoutExpired:
            return None, f"no answer in {HELP_TIMEOUT} s"
        except OSError as e:
            return None, e.strerror or str(e)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["no message"])[-1]
            return None, f"exit {r.returncode}: {last}"
        return r.stdout + r.stderr, ""


def command_problems(top: str, command: str,
                     help_of: HelpOf) -> Tuple[List[str], Optional[str]]:
    """What is wrong with one documented command: problems, or the reason
    it is not checked (None: it was)."""
    argv = words(command)
    if not argv:
        return [], "no command"
    if argv[0] == "make":
        return make_problems(top, argv[1:])
    if not in_repo(top, argv[0]):
        return [], f"'{argv[0]}' is not a path of the repository"
    rel = os.path.normpath(argv[0])
    if not os.path.exists(os.path.join(top, rel)):
        if built_by_make(top, rel):
            return [], f"{rel} is built by make"
        return [f"{command}: no file {rel}"], None
    # --help itself is what is run.
    options = [o for o in long_options(argv[1:]) if o != "--help"]
    if not options:
        return [], None
    if not has_help(top, rel):
        return [], f"{rel} has no --help"
    first = help_argvs(argv, None)[0]
    text = help_of(first)
    if text is None:
        return [], f"'{' '.join(first)} --help' fails here: {help_of.why(first)}"
    for more in help_argvs(argv, text)[1:]:
        if not all(mentions(text, o) for o in options):
            text += "\n" + (help_of(more) or "")
    return [f"{command}: {o} is not in '{' '.join(first)} --help'"
            for o in options if not mentions(text, o)], None


# ---- Pages -------------------------------------------------------------------

def page_problems(top: str, rel: str) -> List[str]:
    """A page of docs/ starts with its title, then its commands."""
    lines = [x for x in read(top, rel).splitlines() if x.strip()]
    if not lines or not lines[0].startswith("# "):
        return [f"{rel}: does not start with a '# ' title"]
    if len(lines) < 2 or not re.match(r"^```(sh|bash)$", lines[1].strip()):
        return [f"{rel}: the title is not followed by its commands (a ```sh block)"]
    return []


def orphan_problems(top: str) -> List[str]:
    """Every page of docs/ is linked from README.md."""
    linked = {os.path.normpath(t.partition("#")[0])
              for t in link_targets(read(top, "README.md"))}
    return [f"README.md does not link {rel}" for rel in doc_files(top)[1:]
            if rel not in linked]


# ---- Old names ---------------------------------------------------------------

OLD_NAMES = "Old names, kept working:"
# How a command names itself: a wrapper's KBENCH_PROG, an argparse prog.
OWN_NAME = re.compile(r'^KBENCH_PROG=([\w.]+) exec |\bprog="([\w.]+)"'
                      r'|\.main\(sys\.argv\[1:\], "([\w.]+)"\)', re.M)


def old_names(text: str) -> List[str]:
    """The paths (DIR/NAME) of README.md's paragraph of old names."""
    for paragraph in re.split(r"\n\s*\n", "\n".join(prose_lines(text))):
        if paragraph.startswith(OLD_NAMES):
            return [c.strip("`") for c in INLINE_CODE.findall(paragraph)
                    if "/" in c]
    return []


def new_name(old: str) -> str:
    return os.path.join(os.path.dirname(old),
                        os.path.basename(old).replace("-", "_"))


def alias_problems(top: str, old: str) -> List[str]:
    """OLD is a link to its new name beside it, and the new file gives
    itself its name (not the one it was run by)."""
    path, new = os.path.join(top, old), new_name(old)
    target = os.readlink(path) if os.path.islink(path) else None
    if target != os.path.basename(new):
        return [f"{old}: not a link to {os.path.basename(new)}"]
    if not os.path.isfile(path):
        return [f"{old}: no file {new}"]
    m = OWN_NAME.search(read(top, new))
    own = (m.group(1) or m.group(2) or m.group(3)) if m else ""
    if os.path.splitext(own)[0] != os.path.splitext(os.path.basename(new))[0]:
        return [f"{new} does not name itself (KBENCH_PROG=NAME, prog=\"NAME\" or main(sys.argv[1:], \"NAME\"))"]
    return []


def tracked_links(top: str) -> List[str]:
    """The links git tracks in TOP (none known without git)."""
    try:
        r = subprocess.run(["git", "-C", top, "ls-files", "-s"], text=True,
                           capture_output=True, timeout=HELP_TIMEOUT)
    except OSError:
        return []
    return [line.split("\t", 1)[1] for line in r.stdout.splitlines()
            if line.startswith("120000 ")]


def unlisted_links(links: List[str], listed: List[str]) -> List[str]:
    return [f"{link}: a link, but not among README.md's old names"
            for link in links if link not in listed]


# ---- The tests -----------------------------------------------------------------

class Docs(unittest.TestCase):
    """The documentation of this clone."""
    help_of: HelpOf

    @classmethod
    def setUpClass(cls) -> None:
        cls.help_of = HelpOf(TOP)

    def test_there_are_guides(self) -> None:
        self.assertGreater(len(doc_files()), 10)

    def test_links_and_anchors_resolve(self) -> None:
        for rel in doc_files():
            with self.subTest(page=rel):
                self.assertEqual(link_problems(TOP, rel), [])

    def test_pages_start_with_commands(self) -> None:
        for rel in doc_files()[1:]:
            with self.subTest(page=rel):
                self.assertEqual(page_problems(TOP, rel), [])

    def test_readme_links_every_page(self) -> None:
        self.assertEqual(orphan_problems(TOP), [])

    def test_old_names_lead_to_the_new(self) -> None:
        olds = old_names(read(TOP, "README.md"))
        self.assertIn("scripts/vm-run.sh", olds)
        for old in olds:
            with self.subTest(old=old):
                self.assertEqual(alias_problems(TOP, old), [])
        self.assertEqual(unlisted_links(tracked_links(TOP), olds), [])

    def test_an_old_name_prints_the_new(self) -> None:
        for old in ("scripts/vm-run.sh", "scripts/lava-job.py"):
            with self.subTest(old=old):
                text = self.help_of((old,))
                self.assertIsNotNone(text, self.help_of.why((old,)))
                self.assertEqual(text, self.help_of((new_name(old),)))
                self.assertNotIn(os.path.basename(old), text or "")

    def test_commands_exist_with_their_options(self) -> None:
        for rel in doc_files():
            for command in shell_commands(read(TOP, rel)):
                first = (words(command) or [""])[0]
                if first != "make" and not in_repo(TOP, first):
                    continue
                with self.subTest(page=rel, command=command):
                    problems, skipped = command_problems(TOP, command, self.help_of)
                    self.assertEqual(problems, [])
                    if skipped:
                        self.skipTest(skipped)


class Parsing(unittest.TestCase):
    def test_slug(self) -> None:
        self.assertEqual(slug("Another kernel: `run_all.sh --kernel`"),
                         "another-kernel-run_allsh---kernel")
        self.assertEqual(slug("Quick start (Debian 12)"), "quick-start-debian-12")
        self.assertEqual(slug("The project's own tests"), "the-projects-own-tests")

    def test_repeated_headings_are_numbered(self) -> None:
        self.assertEqual(anchors("# A\n## B\n## B\n```sh\n# not a heading\n```\n"),
                         {"a", "b", "b-1"})

    def test_words(self) -> None:
        self.assertEqual(words('KSRC=/l ./run_all.sh --vs-prefix "a -n 1" -t x  # c'),
                         ["./run_all.sh", "--vs-prefix", "a -n 1", "-t", "x"])
        self.assertEqual(words("kcidb-submit -p P < kcidb.json"),
                         ["kcidb-submit", "-p", "P"])
        self.assertEqual(words("a --x | b --y"), ["a", "--x"])

    def test_long_options(self) -> None:
        self.assertEqual(long_options(["[-t", "x]...", "[--repeat", "N]", "[--full]",
                                       "--stat=p99", "-o", "--", "--not"]),
                         ["--repeat", "--full", "--stat"])

    def test_continued_lines_are_one_command(self) -> None:
        text = "```sh\n./a.sh --x \\\n    --y\n./b.sh\n```\n```\n./c.sh\n```\n"
        self.assertEqual(shell_commands(text), ["./a.sh --x --y", "./b.sh"])

    def test_links_outside_code(self) -> None:
        text = "[a](x.md#b) `[c](d.md)`\n```\n[e](f.md)\n```\n![g](h.png)\n"
        self.assertEqual(link_targets(text), ["x.md#b", "h.png"])


class Samples(unittest.TestCase):
    """A broken sample of each kind, in a repository of its own: each check
    finds it."""
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.top = self.tmp.name
        self.write("docs/good.md", "# Good\n\n```sh\nscripts/tool.sh --known\n```\n\n"
                   "## A part\n")
        self.write("scripts/tool.sh", "#!/bin/sh\n# usage: tool.sh [--known] (--help)\n"
                   "echo 'usage: tool.sh [--known]'\n")
        os.chmod(os.path.join(self.top, "scripts/tool.sh"), 0o755)
        self.write("Makefile", "all:\n\ttrue\ncheck check-all:\n\ttrue\n")
        self.write("README.md", "# R\n\n[good](docs/good.md#a-part)\n")

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def write(self, rel: str, text: str) -> None:
        path = os.path.join(self.top, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)

    def commands(self, text: str) -> Tuple[List[str], List[Optional[str]]]:
        problems: List[str] = []
        skips: List[Optional[str]] = []
        for c in shell_commands(text):
            p, s = command_problems(self.top, c, HelpOf(self.top))
            problems += p
            skips.append(s)
        return problems, skips

    def test_the_good_sample_passes(self) -> None:
        for rel in doc_files(self.top):
            self.assertEqual(link_problems(self.top, rel), [])
        self.assertEqual(page_problems(self.top, "docs/good.md"), [])
        self.assertEqual(orphan_problems(self.top), [])
        self.assertEqual(self.commands(read(self.top, "docs/good.md")), ([], [None]))

    def test_a_missing_file(self) -> None:
        self.write("README.md", "# R\n\n[good](docs/good.md) [x](docs/gone.md)\n")
        self.assertEqual(link_problems(self.top, "README.md"),
                         ["README.md: link 'docs/gone.md': no file docs/gone.md"])

    def test_a_missing_anchor(self) -> None:
        self.write("README.md", "# R\n\n[good](docs/good.md#no-such-part) [r](#r)\n")
        self.assertEqual(link_problems(self.top, "README.md"), [
            "README.md: link 'docs/good.md#no-such-part': docs/good.md has no"
            " heading with the id 'no-such-part'"])

    def test_a_link_out_of_the_repository(self) -> None:
        self.write("docs/good.md", read(self.top, "docs/good.md") + "[up](../../x)\n")
        self.assertEqual(link_problems(self.top, "docs/good.md"),
                         ["docs/good.md: link '../../x' leaves the repository"])

    def test_a_missing_script(self) -> None:
        self.assertEqual(self.commands("```sh\nscripts/gone.sh --x\n```\n"),
                         (["scripts/gone.sh --x: no file scripts/gone.sh"], [None]))

    def test_an_option_not_in_the_help(self) -> None:
        self.assertEqual(self.commands("```bash\nscripts/tool.sh --known --gone\n```\n"),
                         (["scripts/tool.sh --known --gone: --gone is not in"
                           " 'scripts/tool.sh --help'"], [None]))

    def test_a_subcommand_s_options(self) -> None:
        self.write("scripts/sub.sh", '#!/bin/sh\nif [ "$1" = deep ]; then echo "--deeper";'
                   ' else echo "usage: sub.sh deep|flat [--top] (--help)"; fi\n')
        os.chmod(os.path.join(self.top, "scripts/sub.sh"), 0o755)
        self.assertEqual(self.commands("```sh\nscripts/sub.sh deep --top --deeper\n```\n"),
                         ([], [None]))
        self.assertEqual(self.commands("```sh\nscripts/sub.sh flat --deeper\n```\n"),
                         (["scripts/sub.sh flat --deeper: --deeper is not in"
                           " 'scripts/sub.sh --help'"], [None]))

    def test_a_missing_make_target(self) -> None:
        self.assertEqual(self.commands("```sh\nmake check\nmake chekc NO_INSTALL=1\n```\n"),
                         (["make -C .: no target 'chekc' in Makefile"], [None, None]))

    def test_a_page_without_commands_first(self) -> None:
        self.write("docs/good.md", "# Good\n\nWords first.\n\n```sh\nmake\n```\n")
        self.assertEqual(page_problems(self.top, "docs/good.md"), [
            "docs/good.md: the title is not followed by its commands (a ```sh block)"])

    def test_an_orphan_page(self) -> None:
        self.write("docs/orphan.md", "# O\n\n```sh\nmake\n```\n")
        self.assertEqual(orphan_problems(self.top), ["README.md does not link docs/orphan.md"])

    def test_an_old_name_that_is_no_link(self) -> None:
        self.write("scripts/old-tool.sh", "#!/bin/sh\n")
        self.write("scripts/old_tool.sh", "#!/bin/sh\n")
        self.assertEqual(alias_problems(self.top, "scripts/old-tool.sh"),
                         ["scripts/old-tool.sh: not a link to old_tool.sh"])

    def test_an_old_name_to_a_missing_file(self) -> None:
        os.symlink("old_tool.sh", os.path.join(self.top, "scripts/old-tool.sh"))
        self.assertEqual(alias_problems(self.top, "scripts/old-tool.sh"),
                         ["scripts/old-tool.sh: no file scripts/old_tool.sh"])

    def test_an_old_name_that_names_itself(self) -> None:
        os.symlink("tool_x.sh", os.path.join(self.top, "scripts/tool-x.sh"))
        self.write("scripts/tool_x.sh",
                   'KBENCH_PROG=${0##*/} exec kbench x "$@"\n')
        self.assertEqual(alias_problems(self.top, "scripts/tool-x.sh"), [
            "scripts/tool_x.sh does not name itself (KBENCH_PROG=NAME, "
            'prog="NAME" or main(sys.argv[1:], "NAME"))'])
        self.write("scripts/tool_x.sh", 'KBENCH_PROG=tool_x.sh exec kbench x "$@"\n')
        self.assertEqual(alias_problems(self.top, "scripts/tool-x.sh"), [])
        os.symlink("tool_y.py", os.path.join(self.top, "scripts/tool-y.py"))
        self.write("scripts/tool_y.py",
                   'sys.exit(y.main(sys.argv[1:], "tool_y.py"))\n')
        self.assertEqual(alias_problems(self.top, "scripts/tool-y.py"), [])

    def test_old_names_and_links(self) -> None:
        self.assertEqual(old_names("# R\n\nOld names, kept working: `a/b-c.sh`\n"
                                   "and `d/e-f.py`, `_` for `-`.\n\nNot `g/h-i.sh`.\n"),
                         ["a/b-c.sh", "d/e-f.py"])
        self.assertEqual(unlisted_links(["a/b-c.sh", "x/y"], ["a/b-c.sh"]),
                         ["x/y: a link, but not among README.md's old names"])

    def test_skips_say_why(self) -> None:
        self.write("scripts/quiet.sh", "#!/bin/sh\necho run\n")
        os.chmod(os.path.join(self.top, "scripts/quiet.sh"), 0o755)
        self.write("scripts/broken.py", "#!/bin/sh\n# argparse\necho no >&2; exit 4\n")
        os.chmod(os.path.join(self.top, "scripts/broken.py"), 0o755)
        self.assertEqual(self.commands(
            "```sh\nscripts/quiet.sh --x\nscripts/broken.py --x\n"
            "make -C linux/tools TARGETS=kbench run_tests\ncp -r a b\n```\n"),
            ([], ["scripts/quiet.sh has no --help",
                  "'scripts/broken.py --help' fails here: exit 4: no",
                  "make -C linux/tools: a directory outside the repository",
                  "'cp' is not a path of the repository"]))


if __name__ == "__main__":
    unittest.main()
