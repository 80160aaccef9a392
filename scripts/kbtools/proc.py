# SPDX-License-Identifier: GPL-2.0
"""Running the host's programs: one home for how kbench starts, logs,
times out and stops a child.

- run(cmd, log=...): a child in a process group of its own, its output in
  a log file (or inherited), an optional timeout; a signal that reaches
  kbench (SIGINT, SIGTERM, SIGHUP, while stop_on_signals() is in force)
  stops the whole group before kbench goes on to put things back
  (deferred_signals(): held until a block that must not stop halfway
  is done).
- capture(cmd): a short command's standard output; Failed when it fails
  (capture_bytes: the same as bytes, a file's content from git).
- tee(cmd, out, err): stdout and stderr each kept in a file and shown
  (or, merged, in one).
- each_line(cmd, on_line): a child's joined output a line at a time, as
  it comes (the collection's programs: kbtools.runner).
- locked(path): flock(2) on a lock file, the same lock as flock(1) takes
  on it, so that bash and Python users of a cache exclude each other.
- CpuLoad(): stress-ng --cpu N in the background, for measurements
  beside a loaded host (bench/bisect_boots.py, bench/guest_modes.py).

Every child goes through subprocess.Popen here: the unit tests mock that
one name (on kunit_tool_test's model) and see every command line.
"""

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from types import FrameType
from typing import (IO, Any, Callable, Iterator, List, Mapping, Optional,
                    Sequence, Tuple)

# Seconds a stopped group gets between SIGTERM and SIGKILL.
GRACE_S = 10.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Failed(Exception):
    """A command that exited non-zero (or could not start)."""

    def __init__(self, cmd: Sequence[str], status: int, detail: str = ""):
        self.cmd = list(cmd)
        self.status = status
        self.detail = detail
        super().__init__(f"{cmd[0]} exited {status}"
                         + (f": {detail}" if detail else ""))


class Interrupted(Exception):
    """A signal asked kbench to stop; exit status 130 once cleaned up."""

    def __init__(self, signum: int):
        self.signum = signum
        self.said = False  # True once the message is out
        super().__init__(f"interrupted by signal {signum}")


class TimedOut(Exception):
    """A child ran past its timeout and was stopped."""

    def __init__(self, cmd: Sequence[str], timeout: float):
        self.cmd = list(cmd)
        self.timeout = timeout
        super().__init__(f"{cmd[0]} ran past {timeout:g} s and was stopped")


def _raise_interrupted(signum: int, frame: Optional[FrameType]) -> None:
    raise Interrupted(signum)


SignalHandler = Callable[[int, Optional[FrameType]], None]


@contextlib.contextmanager
def _stop_signals_to(handler: SignalHandler) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP go to handler while in force."""
    old = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, previous in old.items():
            signal.signal(s, previous)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While in force, SIGINT, SIGTERM and SIGHUP raise Interrupted in the
    main thread, so that run() stops its child and finally: blocks put
    things back before the exit."""
    with _stop_signals_to(_raise_interrupted):
        yield


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """While in force, SIGINT, SIGTERM and SIGHUP are held, not acted on:
    for work that must not stop halfway (removing what a task set up).
    The first one held raises Interrupted once the block is done."""
    held: List[int] = []
    with _stop_signals_to(lambda signum, frame: held.append(signum)):
        yield
    if held:
        raise Interrupted(held[0])


def stop_group(child: "subprocess.Popen[Any]",
               grace: float = GRACE_S) -> None:
    """SIGTERM the child's process group, SIGKILL it after grace seconds,
    and reap the child."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(child.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            child.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
    child.wait()


def _usable(stream: Optional[IO[str]]) -> Optional[IO[str]]:
    """stream when a child can write to it (it has a file descriptor),
    else None: the child then writes to kbench's own stdout."""
    try:
        if stream is not None:
            stream.fileno()
            return stream
    except (AttributeError, OSError, ValueError):
        pass
    return None


def run(cmd: Sequence[str], *, log: Optional[str] = None,
        cwd: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
        timeout: Optional[float] = None, stdout: Optional[IO[str]] = None,
        append: bool = False, err_log: Optional[str] = None) -> int:
    """Run cmd in a process group of its own and return its exit status.
    Its stdout and stderr go to log (a file, truncated unless append),
    else to stdout (a file) or kbench's own; its stderr to err_log
    instead when given (a file apart, truncated). A timeout or an
    Interrupted stops the whole group; TimedOut or Interrupted is raised
    after."""
    with contextlib.ExitStack() as files:
        out = (files.enter_context(open(log, "a" if append else "w",
                                        encoding="utf-8"))
               if log is not None else None)
        err = (files.enter_context(open(err_log, "w", encoding="utf-8"))
               if err_log is not None else None)
        sink = out if out is not None else _usable(stdout)
        joined = subprocess.STDOUT if sink is not None else None
        try:
            child = subprocess.Popen(
                list(cmd), cwd=cwd, env=None if env is None else dict(env),
                stdin=subprocess.DEVNULL, stdout=sink,
                stderr=err if err is not None else joined,
                start_new_session=True)
        except OSError as e:
            raise Failed(cmd, 127, e.strerror or str(e)) from e
        try:
            status = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(child)
            raise TimedOut(cmd, timeout or 0.0) from None
        except BaseException:
            stop_group(child)
            raise
    return status


def each_line(cmd: Sequence[str], on_line: Callable[[bytes], None], *,
              cwd: Optional[str] = None) -> int:
    """Run cmd in a process group of its own, its stdout and stderr
    joined and handed to on_line a line at a time as they come (bytes,
    the newline kept; the last line may lack it); its exit status. An
    Interrupted stops the whole group."""
    child = spawn(cmd, cwd=cwd, joined=True)
    assert child.stdout is not None
    try:
        for line in child.stdout:
            on_line(line)
        return child.wait()
    except BaseException:
        stop_group(child)
        raise
    finally:
        child.stdout.close()


def spawn(cmd: Sequence[str], env: Optional[Mapping[str, str]] = None, *,
          cwd: Optional[str] = None,
          joined: bool = False) -> "subprocess.Popen[bytes]":
    """A child in a process group of its own, its stdout and stderr
    through pipes for the caller to read (a guest: kbtools.guest), or
    joined in one (each_line, tee's merge)."""
    try:
        return subprocess.Popen(
            list(cmd), env=None if env is None else dict(env), cwd=cwd,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if joined else subprocess.PIPE,
            start_new_session=True)
    except OSError as e:
        raise Failed(cmd, 127, e.strerror or str(e)) from e


def capture(cmd: Sequence[str], *, cwd: Optional[str] = None,
            env: Optional[Mapping[str, str]] = None,
            stdin: Optional[str] = None) -> str:
    """The standard output of a short command; Failed (with its stderr's
    first line) when it exits non-zero or cannot start."""
    out: str = _capture(cmd, cwd, env, stdin, text=True)
    return out


def capture_bytes(cmd: Sequence[str], *, cwd: Optional[str] = None,
                  env: Optional[Mapping[str, str]] = None,
                  stdin: Optional[bytes] = None) -> bytes:
    """capture() of a file's bytes going in or out as they are (git
    cat-file, hash-object): no decoding, no newline translation."""
    out: bytes = _capture(cmd, cwd, env, stdin, text=False)
    return out


def _capture(cmd: Sequence[str], cwd: Optional[str],
             env: Optional[Mapping[str, str]], stdin: Any, text: bool) -> Any:
    try:
        child = subprocess.Popen(
            list(cmd), cwd=cwd, env=None if env is None else dict(env),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=text)
    except OSError as e:
        raise Failed(cmd, 127, e.strerror or str(e)) from e
    try:
        out, err = child.communicate(stdin)
    except BaseException:
        child.kill()
        child.wait()
        raise
    if child.returncode != 0:
        if isinstance(err, bytes):
            err = err.decode("utf-8", "replace")
        first = (err or "").strip().splitlines()
        raise Failed(cmd, child.returncode, first[0] if first else "")
    return out or ("" if text else b"")


def output(cmd: Sequence[str], *, cwd: Optional[str] = None,
           env: Optional[Mapping[str, str]] = None) -> Tuple[int, str]:
    """A command's exit status and standard output, its stderr shown as
    it comes (as `out=$(CMD)` in bash); an Interrupted stops it."""
    try:
        child = subprocess.Popen(
            list(cmd), cwd=cwd, env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
            start_new_session=True)
    except OSError as e:
        raise Failed(cmd, 127, e.strerror or str(e)) from e
    try:
        out, _ = child.communicate()
    except BaseException:
        stop_group(child)
        raise
    return child.returncode, out or ""


def succeeds(cmd: Sequence[str], *, cwd: Optional[str] = None) -> bool:
    """True when cmd exits 0 (its output thrown away)."""
    try:
        capture(cmd, cwd=cwd)
    except Failed:
        return False
    return True


def _copy(src: IO[bytes], sinks: List[IO[bytes]]) -> None:
    fd = src.fileno()
    for chunk in iter(lambda: os.read(fd, 65536), b""):
        for s in sinks:
            s.write(chunk)
            s.flush()


def tee(cmd: Sequence[str], out_path: str, err_path: Optional[str] = None,
        *, env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
        merge: bool = False) -> int:
    """Run cmd with its stdout kept in out_path and shown on stdout, its
    stderr kept in err_path (when given) and shown on stderr (as
    `2> >(tee ERR >&2) | tee OUT`), or with merge joining stdout (as
    `2>&1 | tee OUT`); its exit status. Interrupted stops it."""
    with open(out_path, "wb") as out, \
            open(err_path or os.devnull, "wb") as err:
        child = spawn(cmd, env, cwd=cwd, joined=merge)
        assert child.stdout is not None
        copies = [(child.stdout, [out, sys.stdout.buffer])]
        if child.stderr is not None:
            copies.append((child.stderr, [err, sys.stderr.buffer]))
        threads = [threading.Thread(target=_copy, daemon=True, args=c)
                   for c in copies]
        for t in threads:
            t.start()
        try:
            status = child.wait()
        except BaseException:
            stop_group(child)
            raise
        for t in threads:
            t.join()
        for pipe, _ in copies:
            pipe.close()
        return status


def tail(path: str, lines: int) -> str:
    """The last lines of a text file ("" when it cannot be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


@contextlib.contextmanager
def locked(path: str, wait: bool = True) -> Iterator[None]:
    """Hold an exclusive flock(2) on path (created) while in the block;
    waits for another holder, bash's `exec 9>PATH; flock 9` included
    (wait=False: BlockingIOError instead)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        yield
    finally:
        os.close(fd)


class Clock:
    """Whole seconds since the start, as bash's $SECONDS counts them."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def seconds(self) -> int:
        return int(time.monotonic() - self.start)


class CpuLoad:
    """stress-ng --cpu WORKERS in a process group of its own: set() changes
    the number of workers (0: none), stop() ends it, and so does leaving
    a `with CpuLoad() as load:` block."""

    def __init__(self) -> None:
        self.child: Optional["subprocess.Popen[bytes]"] = None
        self.workers = 0

    def set(self, workers: int) -> None:
        if workers == self.workers:
            return
        self.stop()
        if workers:
            cmd = ["stress-ng", "--cpu", str(workers), "--quiet"]
            try:
                self.child = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, start_new_session=True)
            except OSError as e:
                raise Failed(cmd, 127, e.strerror or str(e)) from e
        self.workers = workers

    def stop(self) -> None:
        if self.child is not None:
            stop_group(self.child)
            self.child = None
        self.workers = 0

    def __enter__(self) -> "CpuLoad":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
