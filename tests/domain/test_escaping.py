"""resolver/domain/escaping.py: untrusted text made safe for a terminal, a message and JSON, its value unchanged.

What the doors show of hostile names and titles is in tests/accounts/test_hostile_names.py,
tests/hostile/test_prompt_injection.py and tests/commands/test_contract.py.
"""
from __future__ import annotations

import json

import pytest

from resolver.domain.escaping import escape_json, escape_json_bytes, for_terminal, json_text, quoted

# One of each kind the module escapes: C0, ESC, DEL, C1 (8-bit CSI), line and paragraph separators,
# a bidi override and a bidi isolate.
UNSAFE = "\x00\n\t\x1b\x7f\x9b\u2028\u2029\u202e\u2066"


@pytest.mark.parametrize(("text", "shown"), [
    ("Pay the rent", "Pay the rent"),
    ("Führerschein verlängern 🚲", "Führerschein verlängern 🚲"),
    ("a\nforged line", "a\\x0aforged line"),
    ("\x1b[2J", "\\x1b[2J"),
    ("\x9b31m", "\\x9b31m"),
    ("\x7f", "\\x7f"),
    ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
    ("\u2066x\u2069 \u2028", "\\u2066x\\u2069 \\u2028"),
])
def test_for_terminal__controls_become_visible_escapes(text, shown):
    assert for_terminal(text) == shown


def test_for_terminal__no_unsafe_character_survives_and_anything_is_shown_as_text():
    assert not set(for_terminal(UNSAFE)) & set(UNSAFE)
    assert for_terminal(42) == "42" and for_terminal(None) == "None"


def test_quoted__between_backticks_escaped_as_for_a_terminal():
    assert quoted("work\n") == "`work\\x0a`"
    assert quoted("") == "``"


def test_json_text__the_same_value_with_no_raw_unsafe_character():
    value = {"title": "Führerschein " + UNSAFE, "n": [1, "\u202e"]}
    text = json_text(value)
    assert json.loads(text) == value
    assert not set(text) & set(UNSAFE) and "Führerschein" in text  # non-ASCII text kept as it is


def test_json_text__without_unsafe_characters_it_is_what_json_dumps_writes():
    value = {"title": "Pay the rent", "ü": ["é", 1.5, None]}
    assert json_text(value, indent=2) == json.dumps(value, ensure_ascii=False, indent=2)


def test_escape_json__leaves_c0_to_json_dumps():
    """json.dumps escapes C0 itself; escape_json adds DEL, C1, the separators and the bidi controls."""
    assert escape_json('"\x7f\x9b\u2028\u202e"') == '"\\u007f\\u009b\\u2028\\u202e"'
    assert escape_json('"\\n"') == '"\\n"'


def test_escape_json_bytes__the_same_as_on_text():
    text = json.dumps({"t": "ü" + UNSAFE}, ensure_ascii=False)
    assert escape_json_bytes(text.encode("utf-8")) == escape_json(text).encode("utf-8")
    assert escape_json_bytes(b'{"a": 1}') == b'{"a": 1}'
