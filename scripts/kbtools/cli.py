# SPDX-License-Identifier: GPL-2.0
"""How kbench's Python command lines end: one home for the tail of main().

    @cli.command("compare.py", errors=(results.ResultError,))
    def main(argv=None):
        ...
        with cli.writing(args.output):
            results.write_json(args.output, doc)
        return 0

- An error of the kinds given (and cli.Error) is one line on stderr,
  "PROG: message" with line breaks escaped, and exit status 2 (bad input:
  principle 5 of the developer guide).
- A reader of stdout that goes away (| head) ends the command quietly with
  status 0; stdout then points at /dev/null, so that the interpreter's own
  flush at exit stays quiet too. write_stdout() does the same for a
  command that has more to do after its output (compare.py's
  --fail-above verdict).
- writing(PATH) and reading(PATH) turn an OSError into
  "cannot write PATH: reason" or "cannot read PATH: reason".
- json_table_main() is the whole main() of a bench script that prints the
  lines a function makes from one kbench JSON file.
"""

import contextlib
import functools
import io
import json
import os
import sys

from kbtools import results


class Error(Exception):
    """A command's failure, its message one line: exit status 2."""


def error(prog, message):
    """Print "PROG: message" on stderr as one line; 2, the exit status."""
    print(f"{prog}: {results.one_line(str(message))}", file=sys.stderr)
    return 2


def stdout_gone():
    """The reader went away: point stdout at /dev/null for the rest."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, io.UnsupportedOperation):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def write_stdout(text):
    """Write text to stdout now; False when the reader has gone."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_gone()
        return False
    return True


@contextlib.contextmanager
def _file_errors(verb, path):
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as e:
        raise Error(f"cannot {verb} {path}: {e.strerror}") from e


def writing(path):
    """Context: an OSError is Error("cannot write PATH: reason")."""
    return _file_errors("write", path)


def reading(path):
    """Context: an OSError is Error("cannot read PATH: reason")."""
    return _file_errors("read", path)


def command(prog, errors=()):
    """Decorator of main(argv=None): the shared endings above."""
    kinds = (Error,) + tuple(errors)

    def wrap(main):
        @functools.wraps(main)
        def run(argv=None):
            try:
                return main(argv)
            except BrokenPipeError:
                stdout_gone()
                return 0
            except kinds as e:
                return error(prog, e)
        return run
    return wrap


def json_table_main(prog, table, argv):
    """main(sys.argv) of a bench script: print table(doc) of the JSON file
    argv[1], one line per item. 2 on bad usage, 1 when the file cannot be
    read or holds no table (table raises ValueError or KeyError)."""
    if len(argv) != 2 or argv[1].startswith("-"):
        print(f"usage: {prog} JSON", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            doc = json.load(f)
        lines = table(doc)
    except (OSError, ValueError, KeyError) as e:
        print(f"{prog}: {argv[1]}: {e}", file=sys.stderr)
        return 1
    write_stdout("\n".join(lines) + "\n")
    return 0
