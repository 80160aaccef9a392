# SPDX-License-Identifier: GPL-2.0
"""How kbench's Python command lines end: one home for the tail of main().
Every task is a main(argv, prog) -> exit status (Task), prog the name
its messages give (kbench TASK, or the script that runs it):

    @cli.task(errors=(results.ResultError,))
    def main(argv: Sequence[str], prog: str) -> int:
        ...
        with cli.writing(args.output):
            results.write_json(args.output, doc)
        return 0

- An error of the kinds given (and cli.Error) is one line on stderr,
  "PROG: message" with line breaks escaped, and exit status 2 (bad input:
  principle 5 of the developer guide).
- A reader of stdout that goes away (| head) ends the command quietly with
  status 0; stdout then points at /dev/null, so that the interpreter's own
  flush at exit stays quiet too. kbtools.output.write_stdout() does the
  same for a command that has more to do after its output (compare's
  --fail-above verdict).
- writing(PATH) and reading(PATH) turn an OSError into
  "cannot write PATH: reason" or "cannot read PATH: reason".
"""

import argparse
import contextlib
import functools
import re
import shutil
import sys
from typing import (Any, Callable, Iterator, List, NoReturn, Optional,
                    Protocol, Sequence, Tuple, Type)

from kbtools import output, proc
from kbtools.output import msg, one_line, stdout_gone

# For the tools that take it from here (bench/guest_modes.py).
write_stdout = output.write_stdout


# The exit statuses of every task (the bash scripts' before them).
EXIT_FAILED, EXIT_USAGE, EXIT_SETUP, EXIT_SKIP = 1, 2, 3, 4
EXIT_TIMEOUT, EXIT_INTERRUPTED = 124, 130


class Main(Protocol):
    """A command's main(argv=None): its exit status."""

    def __call__(self, argv: Optional[List[str]] = None) -> int: ...


class Task(Protocol):
    """A task's main(argv, prog): its exit status. prog is the name its
    messages and help give (kbench TASK, or the script that runs it)."""

    def __call__(self, argv: Sequence[str], prog: str) -> int: ...


class Error(Exception):
    """A command's failure, its message one line: exit status 2."""


def error(prog: str, message: object) -> int:
    """Print "PROG: message" on stderr as one line; 2, the exit status."""
    print(f"{prog}: {one_line(str(message))}", file=sys.stderr)
    return 2


@contextlib.contextmanager
def _file_errors(verb: str, path: str) -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as e:
        raise Error(f"cannot {verb} {path}: {e.strerror}") from e


def writing(path: str) -> "contextlib.AbstractContextManager[None]":
    """Context: an OSError is Error("cannot write PATH: reason")."""
    return _file_errors("write", path)


def reading(path: str) -> "contextlib.AbstractContextManager[None]":
    """Context: an OSError is Error("cannot read PATH: reason")."""
    return _file_errors("read", path)


def _ended(prog: str, kinds: Tuple[Type[BaseException], ...],
           body: Callable[[], int]) -> int:
    """body()'s exit status, or the shared ending of its error."""
    try:
        return body()
    except BrokenPipeError:
        stdout_gone()
        return 0
    except kinds as e:
        return error(prog, e)


def task(errors: Sequence[Type[BaseException]] = ()
         ) -> Callable[[Task], Task]:
    """Decorator of a task's main(argv, prog): the shared endings above,
    the message starting with prog."""
    kinds: Tuple[Type[BaseException], ...] = (Error,) + tuple(errors)

    def wrap(main: Task) -> Task:
        @functools.wraps(main)
        def run(argv: Sequence[str], prog: str) -> int:
            return _ended(prog, kinds, lambda: main(argv, prog))
        return run
    return wrap


def command(prog: str, errors: Sequence[Type[BaseException]] = ()
            ) -> Callable[[Main], Main]:
    """Decorator of a main(argv=None) that knows its own prog (kbtools.lava
    and bench/guest_modes.py, until they are tasks too): task()'s
    endings."""
    kinds: Tuple[Type[BaseException], ...] = (Error,) + tuple(errors)

    def wrap(main: Main) -> Main:
        @functools.wraps(main)
        def run(argv: Optional[List[str]] = None) -> int:
            return _ended(prog, kinds, lambda: main(argv))
        return run
    return wrap


class UsageParser(argparse.ArgumentParser):
    """argparse as the collection's bash scripts end bad usage: the
    problem on stderr ("PROG: message"), a hint, exit status 2."""

    def __init__(self, *args: Any, help_text: str = "",
                 **kwargs: Any) -> None:
        """help_text: -h/--help prints it as is (the bash scripts' own
        usage text) instead of argparse's."""
        kwargs.setdefault("allow_abbrev", False)
        if help_text:
            kwargs["add_help"] = False
        super().__init__(*args, **kwargs)
        if help_text:
            self.add_argument("-h", "--help", action=_PrintHelp, nargs=0,
                              default=help_text)

    def count(self, value: str, message: str) -> int:
        """value, a whole number above 0; else bad usage saying
        message."""
        if not re.fullmatch(r"[1-9][0-9]*", value):
            self.error(message)
        return int(value)

    def error(self, message: str) -> NoReturn:
        # argparse's words as the bash scripts said them.
        m = re.match(r"unrecognized arguments: (\S+)", message)
        if m:
            message = f"unknown argument '{m.group(1)}'"
        m = re.match(r"argument (-[^/ ]+)(/\S+)?: expected one argument",
                     message)
        if m:
            message = f"option '{m.group(1)}' needs a value"
        print(f"{self.prog}: {one_line(message)}", file=sys.stderr)
        print(f"Try '{self.prog} --help' for more information.",
              file=sys.stderr)
        sys.exit(2)


class _PrintHelp(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser,
                 namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        print(self.default, end="")
        parser.exit(0)


class Failure(Exception):
    """A step of a host task that failed: its message, and the exit
    status (1 failed, 3 a missing host package or download)."""

    def __init__(self, message: str, status: int = EXIT_FAILED):
        self.status = status
        super().__init__(message)


def os_error_text(e: OSError) -> str:
    """An OSError as one line: "FILE: reason"; shutil's copy errors
    (a list of (source, destination, reason) in one exception) by their
    first, and how many more."""
    if isinstance(e, shutil.Error) and e.args and \
            isinstance(e.args[0], list) and e.args[0]:
        first = e.args[0][0]
        more = len(e.args[0]) - 1
        text = (f"cannot copy {first[0]} to {first[1]}: {first[2]}"
                if isinstance(first, tuple) and len(first) == 3
                else str(first))
        return one_line(text + (f" (and {more} more)" if more else ""))
    where = f"{e.filename}: " if e.filename else ""
    return one_line(f"{where}{e.strerror or e}")


def orchestrate(prog: str, body: Callable[[], int]) -> int:
    """Run a host task's body with signals stopping its children, and
    end it as the bash scripts did: Failure is "PROG: message" and its
    status, a command that could not run 1, Error bad usage (2, with a
    hint), a signal 130 once the body's finally: blocks have run, a
    reader of stdout gone 0."""
    try:
        with proc.stop_on_signals():
            return body()
    except BrokenPipeError:
        stdout_gone()
        return 0
    except Error as e:
        msg(prog, one_line(str(e)))
        print(f"Try '{prog} --help' for more information.", file=sys.stderr)
        return EXIT_USAGE
    except (Failure, proc.Failed, OSError) as e:
        return failed(prog, e)
    except proc.Interrupted as e:
        if not e.said:
            msg(prog, "interrupted")
        return EXIT_INTERRUPTED


def failed(prog: str, e: Exception) -> int:
    """A Failure, a command that could not run or an OSError said as
    orchestrate() ends on it; its exit status."""
    if isinstance(e, Failure):
        msg(prog, str(e))
        return e.status
    msg(prog, os_error_text(e) if isinstance(e, OSError) else str(e))
    return EXIT_FAILED


def step(prog: str, body: Callable[[], int]) -> int:
    """body()'s exit status, or the status orchestrate() would end it
    with (bad usage 2, a failure's, said with prog): for a task that runs
    another task's work as one of its steps and goes on after it fails.
    A signal stops the whole task (orchestrate's)."""
    try:
        return body()
    except Error as e:
        msg(prog, one_line(str(e)))
        return EXIT_USAGE
    except (Failure, proc.Failed, OSError) as e:
        return failed(prog, e)
