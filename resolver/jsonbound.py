"""How deeply a request document may nest: RESOLVER["MAX_JSON_DEPTH"], the same bound at every door.

A valid request is two levels deep (an object holding `collection_ids`, a
list). A document nested tens of thousands of levels deep fits in the body
limit and makes a recursive decoder (Python's json, pydantic's) raise or give
up; each door used to turn that into a different answer (`internal_error`
from `resolve --input -`, a JSON-RPC parse error or a dropped line over
MCP). Here the depth is measured on the text, before it is parsed, by a scan
that recurses into nothing, and a document deeper than the bound is
`invalid_request` (details.field `body`, details.max_depth) everywhere:

- the API body and `resolve --input -`: `check_text` before decoding;
- MCP (stdio and HTTP): the transport decodes the JSON-RPC message before the
  tool sees it, so `cut` first replaces whatever lies deeper than the bound
  allows (arguments are two levels below the message) with `[]`, unread;
  what remains is still one level too deep, and the tool call answers
  `invalid_request` with its own id (`check_value` on the arguments).
"""
from __future__ import annotations

import re
from typing import Any, AnyStr

from resolver.conf import resolver_settings
from resolver.domain.errors import InvalidRequest

# Past this the transports' own decoders refuse the message before the tool sees it
# (pydantic's recursion limit is 200), so a larger setting is not honoured.
HIGHEST = 100
# An MCP tool's arguments sit two levels below the JSON-RPC message: message, params, arguments.
MCP_WRAPPING = 2

# A JSON string (skipped whole: brackets inside it are text) or a bracket. ASCII only,
# so the same pattern works on UTF-8 bytes: no byte of a multibyte sequence is ASCII.
_TOKEN = r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]'
_TOKEN_STR = re.compile(_TOKEN, re.DOTALL)
_TOKEN_BYTES = re.compile(_TOKEN.encode("ascii"), re.DOTALL)
_OPEN = frozenset("[{") | frozenset(b"[{")


def max_json_depth() -> int:
    """RESOLVER["MAX_JSON_DEPTH"], at least 2 (a valid request's depth) and at most HIGHEST."""
    return max(2, min(int(resolver_settings.MAX_JSON_DEPTH), HIGHEST))


def too_deep(limit: int) -> InvalidRequest:
    return InvalidRequest(f"The request document must nest at most {limit} levels deep.",
                          details={"field": "body", "max_depth": limit})


def _tokens(text: AnyStr) -> Any:
    return (_TOKEN_BYTES if isinstance(text, bytes) else _TOKEN_STR).finditer(text)


def depth_exceeds(text: AnyStr, limit: int) -> bool:
    """Whether JSON `text` opens more than `limit` arrays or objects inside one another (strings skipped)."""
    depth = 0
    for match in _tokens(text):
        token = match.group()
        if token[0] in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif len(token) == 1:
            depth -= 1
    return False


def check_text(text: AnyStr) -> None:
    """InvalidRequest when `text` nests deeper than RESOLVER["MAX_JSON_DEPTH"]; call before decoding it."""
    limit = max_json_depth()
    if depth_exceeds(text, limit):
        raise too_deep(limit)


def check_value(value: Any) -> None:
    """InvalidRequest when a decoded document nests deeper than RESOLVER["MAX_JSON_DEPTH"] (iterative)."""
    limit = max_json_depth()
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                raise too_deep(limit)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def cut(text: AnyStr, limit: int) -> AnyStr:
    """`text` with every array or object opened deeper than `limit` replaced by `[]`, unread.

    The result decodes with no deep recursion, and wherever something was cut
    it is still `limit + 1` deep, so a depth check after decoding refuses it.
    Text within the limit comes back as it is (the same object).
    """
    empty: Any = b"[]" if isinstance(text, bytes) else "[]"
    pieces: list[Any] = []
    kept = 0  # where the text not yet copied starts
    depth = 0
    cut_from: int | None = None
    for match in _tokens(text):
        token = match.group()
        if token[0] in _OPEN:
            depth += 1
            if depth == limit + 1 and cut_from is None:
                cut_from = match.start()
        elif len(token) == 1:
            depth -= 1
            if depth == limit and cut_from is not None:
                pieces += [text[kept:cut_from], empty]
                kept, cut_from = match.end(), None
    if cut_from is not None:  # never closed: not JSON, and the decoder will say so
        pieces += [text[kept:cut_from], empty]
        kept = len(text)
    if not pieces:
        return text
    pieces.append(text[kept:])
    return empty[:0].join(pieces)
