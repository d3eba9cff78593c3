"""resolver/jsonbound.py: the depth scan and the cut, on text and bytes, without a door.

What each door answers to a document too deep is in tests/hostile/test_deep_json.py.
"""
from __future__ import annotations

import json

from resolver import jsonbound


def nested(depth: int, inner: str = "1") -> str:
    """A JSON request whose `text` is `depth - 1` arrays deep, so the document is `depth` deep."""
    return '{"text": ' + "[" * (depth - 1) + inner + "]" * (depth - 1) + ', "kind": "task"}'


# --- the scan -----------------------------------------------------------------------


def test_depth__counts_arrays_and_objects_and_skips_strings():
    assert not jsonbound.depth_exceeds('{"a": [1, {"b": "[[[[{{{{"}]}', 3)
    assert jsonbound.depth_exceeds('{"a": [1, {"b": [2]}]}', 3)
    assert not jsonbound.depth_exceeds('"\\"[[[["', 0)
    assert not jsonbound.depth_exceeds(nested(32), 32) and jsonbound.depth_exceeds(nested(33), 32)
    assert not jsonbound.depth_exceeds(nested(32).encode(), 32) and jsonbound.depth_exceeds(nested(33).encode(), 32)


def test_cut__keeps_text_within_the_bound_and_leaves_a_cut_one_level_too_deep():
    shallow = '{"text": "[not an array]", "kind": "task", "collection_ids": ["a"]}'
    assert jsonbound.cut(shallow, 2) is shallow
    cut = jsonbound.cut('{"a": [[["x", {"y": 1}]]], "b": [2]}', 2)
    assert json.loads(cut) == {"a": [[]], "b": [2]}
    deep = jsonbound.cut(("[" * 30_000 + "]" * 30_000).encode(), 5)
    assert deep == b"[[[[[[]]]]]]"
    assert jsonbound.cut("[[[[", 2) == "[[[]"  # never closed: still not JSON
