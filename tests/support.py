# SPDX-License-Identifier: GPL-2.0
"""What the unit tests share:

- present(x): a value that may be None by its type but must not be
  there (the test fails when it is), as its type without None;
- quiet(fn, *args, **kw): fn's return value (or the status a SystemExit
  carries), stdout and stderr, both captured (stdout's bytes too:
  sys.stdout.buffer).
"""

import contextlib
import io
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
