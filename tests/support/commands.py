"""Running `manage.py resolve` in-process, as its tests and the hostile-input tests do."""
from __future__ import annotations

import io
import sys

from django.core.management import call_command


def run_resolve(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `manage.py resolve ARGS` with `stdin` as standard input."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(stdin or "")
    try:
        call_command("resolve", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code)
    finally:
        sys.stdin = saved
    return code, out.getvalue(), err.getvalue()
