"""The app's settings module (resolver/conf.py)."""
from __future__ import annotations

import ast
from pathlib import Path

from resolver.conf import DEFAULTS


def test_defaults__each_key_once():
    """A key written twice in the DEFAULTS literal silently keeps only the later value."""
    tree = ast.parse((Path(__file__).resolve().parents[1] / "resolver" / "conf.py").read_text())
    literal = next(node.value for node in tree.body if isinstance(node, ast.AnnAssign)
                   and getattr(node.target, "id", "") == "DEFAULTS")
    keys = [key.value for key in literal.keys if isinstance(key, ast.Constant)]
    assert len(keys) == len(set(keys)) == len(DEFAULTS)


def test_defaults__judge_backend_is_jev():
    """The value the duplicate used to leave in force: Jev, which is off unless TYPESAFE_* is set."""
    assert DEFAULTS["JUDGE_BACKEND"] == "resolver.judges.jev.JevJudge"
