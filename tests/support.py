# SPDX-License-Identifier: GPL-2.0
"""What the unit tests share:

- present(x): a value that may be None by its type but must not be
  there (the test fails when it is), as its type without None;
- quiet(fn, *args, **kw): fn's return value (or the status a SystemExit
  carries), stdout and stderr, both captured (stdout's bytes too:
  sys.stdout.buffer);
- prior_with_steady_modes(test): for the test, the shipped prior of
  every architecture with each mode it keeps (kbtools.exact.prior_modes)
  made exact, so that a test of the mode rule does not hang on what the
  shipped prior's boots saw of one row's mode.
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


def prior_with_steady_modes(test: unittest.TestCase) -> str:
    """The path of a copy of the shipped prior whose 'TEST:ROW#mode'
    rows are exact (no range across its boots), in place of the shipped
    one until test ends."""
    from kbtools import exact
    with open(exact.CLASSES_FILE, encoding="utf-8") as f:
        doc = json.load(f)
    for setup in doc["setups"].values():
        for key, row in setup["rows"].items():
            if key.endswith(exact.MODE_KEY_SUFFIX):
                row.update({"class": "exact", "boot_range_insn": 0.0,
                            "range_insn": 0.0})
    tmp = tempfile.TemporaryDirectory()
    test.addCleanup(tmp.cleanup)
    path = os.path.join(tmp.name, "icount_classes.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    patch = mock.patch.object(exact, "CLASSES_FILE", path)
    patch.start()
    test.addCleanup(patch.stop)
    return path
