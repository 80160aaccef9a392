# SPDX-License-Identifier: GPL-2.0
"""An HTML page opened in headless Chromium and checked as a reader sees
it (make check's report_in_browser step, kbench docs screenshot):

    browser_check.py [--plots N] [--text TEXT]... [--screenshot PNG]
                     [--width PX] [--fits] [--clip HEIGHT] [--scale F]
                     REPORT.html

Chromium is driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: no port, no network), so the checks see what the
browser did, not what a file holds:
  - the page loaded, and the browser logged no console message, script
    exception or log entry of level error (a broken resource, bad markup
    Chromium complains about);
  - every <svg> plot is laid out with a non-empty box and holds drawing
    elements, and there are exactly N of them (--plots);
  - each --text is in the page's rendered text;
  - with --fits, the page is no wider than the window (--width): it does
    not scroll sideways;
  - --screenshot writes a PNG of the whole page (or of its top HEIGHT
    pixels with --clip, scaled by --scale: docs/reports.md's picture).
Exit status: 0 checks passed, 1 a check failed, 2 bad usage, 4 no chromium
(the message names the package).
"""

import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from kbtools import cli

# A DevTools message, or a part of one, as JSON decodes it.
Event = Dict[str, Any]
TIMEOUT_S = 90
BROWSERS = ("chromium", "chromium-browser", "google-chrome")

# What the page looks like to the browser, as one JSON value.
PAGE_PROBE = """
(() => {
  const svgs = Array.from(document.querySelectorAll('svg'));
  return JSON.stringify({
    ready: document.readyState,
    text: document.body ? document.body.innerText : '',
    svgs: svgs.map(s => {
      const r = s.getBoundingClientRect();
      return {w: r.width, h: r.height,
              drawn: s.querySelectorAll('path, use, rect, line').length,
              labels: s.querySelectorAll('text').length};
    }),
    height: Math.ceil(document.documentElement.scrollHeight),
    scroll_width: Math.ceil(document.documentElement.scrollWidth),
    view_width: window.innerWidth,
  });
})()
"""


class Browser:
    """Chromium with the DevTools protocol on fds 3 (to it) and 4 (from
    it), messages separated by NUL bytes."""

    def __init__(self, exe: str, width: int):
        self.profile = tempfile.mkdtemp(prefix="kbench-chromium.")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()
        # The child gets them as fds 3 and 4, which it may already hold
        # (in a process that has other files open): copied out of the
        # way first, then into place. dup2 makes them inheritable; every
        # other descriptor is close-on-exec, as Python opens them.
        fds = (to_r, from_w)

        def child_fds() -> None:
            away = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in fds]
            os.dup2(away[0], 3)
            os.dup2(away[1], 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions",
             "--hide-scrollbars", f"--user-data-dir={self.profile}",
             f"--window-size={width},900", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("KBENCH_DEBUG")
            else subprocess.DEVNULL, preexec_fn=child_fds, close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.events: List[Event] = []
        self.deadline = time.monotonic() + TIMEOUT_S

    def _read_message(self) -> Event:
        while b"\0" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self.from_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        message: Event = json.loads(msg)
        return message

    def call(self, method: str, params: Optional[Event] = None,
             session: Optional[str] = None) -> Any:
        self.next_id += 1
        msg: Event = {"id": self.next_id, "method": method,
                      "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str) -> Event:
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        while True:
            ev = self._read_message()
            if ev.get("method") == method:
                return ev
            self.events.append(ev)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)
        shutil.rmtree(self.profile, ignore_errors=True)


def errors_in(events: Sequence[Event]) -> List[str]:
    """Console errors, exceptions and error log entries among the events."""
    out = []
    for ev in events:
        m, p = ev.get("method"), ev.get("params", {})
        if m == "Runtime.exceptionThrown":
            out.append("exception: " + json.dumps(p.get("exceptionDetails"))
                       [:300])
        elif m == "Runtime.consoleAPICalled" and p.get("type") in (
                "error", "assert"):
            out.append("console: " + " ".join(
                str(a.get("value", a.get("description", "")))
                for a in p.get("args", [])))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in (
                "error",):
            e = p["entry"]
            out.append(f"log ({e.get('source')}): {e.get('text')} "
                       f"{e.get('url', '')}")
    return out


def inspect(exe: str, path: str, width: int, screenshot: Optional[str],
            clip: Optional[int] = None, scale: float = 1.0
            ) -> Tuple[List[str], Event]:
    """Load the page; return (problems logged, page probe)."""
    b = Browser(exe, width)
    try:
        target = next(t for t in b.call("Target.getTargets")["targetInfos"]
                      if t["type"] == "page")
        session = b.call("Target.attachToTarget", {
            "targetId": target["targetId"], "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            b.call(f"{domain}.enable", session=session)
        b.call("Page.navigate", {"url": "file://" + os.path.abspath(path)},
               session=session)
        b.wait_event("Page.loadEventFired")
        probe: Event = json.loads(b.call("Runtime.evaluate", {
            "expression": PAGE_PROBE, "returnByValue": True},
            session=session)["result"]["value"])
        if screenshot:
            b.call("Emulation.setDeviceMetricsOverride", {
                "width": width, "height": probe["height"],
                "deviceScaleFactor": 1, "mobile": False}, session=session)
            shot_args: Event = {"format": "png"}
            if clip or scale != 1.0:
                shot_args["clip"] = {"x": 0, "y": 0, "width": width,
                                     "height": min(clip or probe["height"],
                                                   probe["height"]),
                                     "scale": scale}
            shot = b.call("Page.captureScreenshot", shot_args,
                          session=session)
            with open(screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        # Let late messages (layout, image decoding) arrive.
        b.call("Runtime.evaluate", {"expression": "1"}, session=session)
        return errors_in(b.events), probe
    finally:
        b.close()


def check(probe: Event, problems: Sequence[str], plots: Optional[int],
          texts: Sequence[str], fits: bool = False) -> List[str]:
    """The list of failed checks."""
    failed = [f"browser reported: {p}" for p in problems]
    if probe["ready"] != "complete":
        failed.append(f"page not loaded (readyState {probe['ready']})")
    svgs = probe["svgs"]
    if plots is not None and len(svgs) != plots:
        failed.append(f"{len(svgs)} plots rendered, expected {plots}")
    for i, s in enumerate(svgs, 1):
        if s["w"] < 50 or s["h"] < 50 or s["drawn"] < 5 or s["labels"] < 2:
            failed.append(f"plot {i} is empty: {s['w']:.0f}x{s['h']:.0f} "
                          f"px, {s['drawn']} shapes, {s['labels']} labels")
    for t in texts:
        if t not in probe["text"]:
            failed.append(f"text '{t}' is not on the page")
    if fits and probe["scroll_width"] > probe["view_width"]:
        failed.append(f"the page is {probe['scroll_width']} px wide in a "
                      f"window of {probe['view_width']} px: it scrolls "
                      f"sideways")
    return failed


@cli.task()
def main(argv: Sequence[str], prog: str) -> int:
    """0 checks passed, 1 a check failed, 2 bad usage, 4 no chromium."""
    ap = argparse.ArgumentParser(prog=prog, description=(
        "Open an HTML report in headless Chromium and check it as a "
        "reader sees it."))
    ap.add_argument("report", help="HTML file to open")
    ap.add_argument("--plots", type=int, metavar="N",
                    help="the page must show exactly N plots")
    ap.add_argument("--text", action="append", default=[],
                    help="text that must be on the page (repeatable)")
    ap.add_argument("--screenshot", metavar="PNG", help="full-page PNG")
    ap.add_argument("--width", type=int, default=1200, metavar="PX",
                    help="window width (default %(default)s)")
    ap.add_argument("--fits", action="store_true",
                    help="the page must not scroll sideways at --width")
    ap.add_argument("--clip", type=int, metavar="HEIGHT",
                    help="screenshot only the top HEIGHT pixels")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="scale of the screenshot (default 1)")
    args = ap.parse_args(list(argv))
    if args.width < 200 or (args.clip is not None and args.clip < 50) \
            or not 0.1 <= args.scale <= 4:
        ap.error("--width, --clip or --scale out of range")
    if not os.path.isfile(args.report):
        print(f"{prog}: {args.report}: no such file", file=sys.stderr)
        return 2
    try:
        page = check_page(args.report, args.plots, args.text,
                          args.screenshot, args.width, args.clip,
                          args.scale, args.fits)
    except cli.Failure as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return e.status
    for f in page.failed:
        print(f"FAIL: {args.report}: {f}")
    if not page.failed:
        print(f"ok: {args.report}: loaded without errors, "
              f"{page.plots} plots rendered, {len(args.text)} texts found"
              + (f", screenshot {args.screenshot}" if args.screenshot
                 else ""))
    return 1 if page.failed else 0


@dataclass(frozen=True)
class Page:
    """What the browser showed of a page: the checks that failed (none:
    it passed) and how many plots it drew."""
    failed: List[str]
    plots: int


def check_page(path: str, plots: Optional[int] = None,
               texts: Sequence[str] = (), screenshot: Optional[str] = None,
               width: int = 1200, clip: Optional[int] = None,
               scale: float = 1.0, fits: bool = False) -> Page:
    """The page at path checked, its screenshot taken when asked; cli.Failure (4) without chromium, (1)
    when chromium failed."""
    exe = next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if exe is None:
        raise cli.Failure("no chromium: apt-get install chromium",
                          cli.EXIT_SKIP)
    try:
        problems, probe = inspect(exe, path, width, screenshot, clip, scale)
    except (RuntimeError, TimeoutError, OSError, StopIteration) as e:
        raise cli.Failure(f"chromium failed: {e}") from e
    return Page(check(probe, problems, plots, texts, fits),
                len(probe["svgs"]))
