# SPDX-License-Identifier: GPL-2.0
"""Writing to the terminal: the leaf every other kbtools module may use.

It imports nothing of kbtools, so that results, cli and the orchestration
modules share it without importing each other.

- one_line(text): a value quoted in an error message stays one line.
- write_stdout(text): write now; False when the reader went away (| head),
  stdout then points at /dev/null so that the interpreter's own flush at
  exit stays quiet too.
- Messages(prog): "PROG: message" lines on stderr, as lib.bash's msg().
- Tee(*streams): text or bytes written to several streams at once.
"""

import io
import os
import sys
from typing import AnyStr, Generic, Protocol, Tuple, TypeVar

W = TypeVar("W", str, bytes, contravariant=True)


class Writer(Protocol[W]):
    """Where text or bytes go (a file, stdout, a Tee)."""

    def write(self, data: W, /) -> object: ...

    def flush(self) -> None: ...


class Tee(Generic[AnyStr]):
    """A stream that writes to each of its streams (a file and stdout;
    text or bytes alike)."""

    def __init__(self, *streams: Writer[AnyStr]):
        self.streams: Tuple[Writer[AnyStr], ...] = streams

    def write(self, data: AnyStr, /) -> int:
        for s in self.streams:
            s.write(data)
        return len(data)

    def flush(self) -> None:
        for s in self.streams:
            s.flush()


def one_line(text: str) -> str:
    """text with line breaks and other unprintable characters escaped, so
    that an error quoting a value from a file stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def stdout_gone() -> None:
    """The reader went away: point stdout at /dev/null for the rest."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, io.UnsupportedOperation):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def write_stdout(text: str) -> bool:
    """Write text to stdout now; False when the reader has gone."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_gone()
        return False
    return True


def msg(prog: str, text: str) -> None:
    """"PROG: text" on stderr, flushed (a log read while a build runs)."""
    print(f"{prog}: {text}", file=sys.stderr, flush=True)
