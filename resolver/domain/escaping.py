"""Untrusted text (a server's calendar names, a title, a person's input) made safe to show.

One rule for every door, so no output can be driven by the data:

- `for_terminal`: a line of human output (every management command). C0
  controls (tab and newline are the caller's to write, never the data's),
  DEL, C1 controls (ESC's 8-bit forms, U+009B CSI among them), the line and
  paragraph separators and the bidirectional embeddings, overrides and
  isolates become visible `\\xNN` / `\\uNNNN` escapes: a server cannot end a
  line early, print a forged line under the real one, drive the terminal or
  reorder what a person reads.
- `quoted`: untrusted text inside an error message, between backticks and
  escaped the same way (the API, the pages, MCP and the commands show it).
- `json_text` / `escape_json`: JSON for a terminal or a client. json.dumps
  with ensure_ascii=False escapes only U+0000-U+001F; these escape DEL, C1,
  U+2028/U+2029 and the bidi controls as `\\uNNNN` too. Outside strings JSON
  text is ASCII, so replacing them anywhere changes no value, and JSON
  without them is byte for byte what json.dumps wrote.
"""
from __future__ import annotations

import json
import re
from typing import Any

_BIDI = "\u202a-\u202e\u2066-\u2069"
# Characters a terminal acts on or that reorder a line (module docstring).
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
# The same, less the C0 controls: json.dumps escapes those itself.
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f\u2028\u2029{_BIDI}]")
# The UTF-8 forms of _JSON_UNSAFE, for JSON already encoded (a renderer's bytes).
_JSON_UNSAFE_BYTES = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xa8\xa9\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: Any) -> str:
    """`text` for a terminal: every control, C1 and bidi character as a visible `\\xNN`/`\\uNNNN` escape."""
    return _UNSAFE.sub(_escape, str(text))


def quoted(text: Any) -> str:
    """Untrusted text inside a message: `text` between backticks, escaped as for a terminal."""
    return f"`{for_terminal(text)}`"


def escape_json(text: str) -> str:
    """JSON text with DEL, C1, U+2028/U+2029 and the bidi controls as `\\uNNNN` (the value unchanged)."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def escape_json_bytes(data: bytes) -> bytes:
    """`escape_json` for UTF-8 JSON already encoded."""
    return _JSON_UNSAFE_BYTES.sub(lambda m: f"\\u{ord(m.group().decode('utf-8')):04x}".encode("ascii"), data)


def json_text(value: Any, **dumps: Any) -> str:
    """`value` as JSON: non-ASCII kept, no raw control, C1 or bidi character (`escape_json`)."""
    return escape_json(json.dumps(value, ensure_ascii=False, **dumps))
