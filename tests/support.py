# SPDX-License-Identifier: GPL-2.0
"""What the unit tests share:

- present(x): a value that may be None by its type but must not be
  there (the test fails when it is), as its type without None;
- quiet(fn, *args, **kw): fn's return value (or the status a SystemExit
  carries), stdout and stderr, both captured (stdout's bytes too:
  sys.stdout.buffer);
- prior_with_modes(test, moved): for the test, the shipped prior of
  every architecture with each mode it keeps (kbtools.exact.prior_modes)
  seen to move by `moved` instructions across its boots (0: exact),
  and its boots scheduled as `sched` says, so
  that a test of the mode rule does not hang on what the shipped
  prior's boots saw of one row's mode.
"""

import contextlib
import io
import json
import os
import tempfile
import unittest
from unittest import mock
from typing import Any, Callable, Optional, Tuple, TypeVar

T = TypeVar("T")


def present(x: Optional[T]) -> T:
    if x is None:
        raise AssertionError("None where a value must be")
    return x


def quiet(fn: Callable[..., Any], *args: Any,
          **kw: Any) -> Tuple[Any, str, str]:
    """(fn's return value or SystemExit code, stdout, stderr)."""
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = fn(*args, **kw)
        except SystemExit as e:
            rc = e.code
        out.flush()
    return rc, raw.getvalue().decode("utf-8", "replace"), err.getvalue()


def prior_with_modes(test: unittest.TestCase, moved: float = 0.0,
                     sched: Optional[str] = None,
                     own_rows: bool = True) -> str:
    """The path of a copy of the shipped prior whose 'TEST:ROW#mode'
    rows (of all its kernels, and of each) moved by `moved` instructions
    across its boots (0: exact), its setups' boots scheduled as `sched`
    says when given (that of the runs a test judges, for the prior to
    speak for them), without each kernel's own rows unless own_rows (the
    worst of its kernels then bounds every kernel), in place of the
    shipped one until test ends."""
    from kbtools import exact
    with open(exact.CLASSES_FILE, encoding="utf-8") as f:
        doc = json.load(f)
    for setup in doc["setups"].values():
        if sched is not None:
            setup["sched"] = sched
        if not own_rows:
            setup.pop("kernel_rows", None)
        for rows in [setup["rows"],
                     *(setup.get("kernel_rows") or {}).values()]:
            for key, row in rows.items():
                if key.endswith(exact.MODE_KEY_SUFFIX):
                    row.update({"class": "near" if moved else "exact",
                                "boot_range_insn": moved,
                                "range_insn": moved})
    tmp = tempfile.TemporaryDirectory()
    test.addCleanup(tmp.cleanup)
    path = os.path.join(tmp.name, "icount_classes.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    patch = mock.patch.object(exact, "CLASSES_FILE", path)
    patch.start()
    test.addCleanup(patch.stop)
    return path
