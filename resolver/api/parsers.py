"""The API's JSON parser: bounded, strict, and safe to echo.

DRF's own JSONParser reads the whole body (Django caps it at
DATA_UPLOAD_MAX_MEMORY_SIZE, 2.5 MB, and the cap surfaces as an unmapped
exception), lets a deeply nested document raise RecursionError, and accepts
`\\ud800` escapes whose unpaired surrogates later break any response that
echoes them. Each of those used to end in a 500; here each is an
`invalid_request`. A document nested deeper than RESOLVER["MAX_JSON_DEPTH"]
is refused before it is decoded (resolver/jsonbound.py), as at every door.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser
from rest_framework.renderers import JSONRenderer

from resolver import jsonbound
# The one rule for every door's request document (the command's `--input -` too).
from resolver.services import body_too_large, max_body_bytes


_SURROGATE = re.compile("[\ud800-\udfff]")


def _declared_length(parser_context: Mapping[str, Any]) -> int | None:
    request = parser_context.get("request")
    meta = getattr(request, "META", {}) or {}
    try:
        return int(meta.get("CONTENT_LENGTH") or 0)
    except (TypeError, ValueError):
        return None


def _has_unpaired_surrogate(data: Any) -> bool:
    # Iterative: the document's depth is bounded by the decoder, not by us.
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return True
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class BoundedJSONParser(BaseParser):
    """application/json up to RESOLVER["MAX_BODY_BYTES"] bytes.

    Not a JSONParser subclass on purpose: DRF hands JSONParser subclasses the
    fully read body, and the point is to stop reading at the limit.
    """

    media_type = "application/json"
    renderer_class = JSONRenderer

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        context = parser_context or {}
        limit = max_body_bytes()
        declared = _declared_length(context)
        if declared is not None and declared > limit:
            # Refused unread: the declared length alone says it is too big.
            raise body_too_large(limit)
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise body_too_large(limit)
        encoding = context.get("encoding") or "utf-8"
        try:
            # bytes.decode refuses codecs that are not text encodings (rot13, base64).
            text = raw.decode(encoding)
            jsonbound.check_text(text)
            data = json.loads(text, parse_constant=_reject_constant)
        except LookupError:
            raise ParseError(f"Unsupported charset {encoding!r}.") from None
        except ValueError as err:  # JSONDecodeError and UnicodeDecodeError alike
            raise ParseError(f"JSON parse error - {err}") from None
        except RecursionError:
            raise ParseError("JSON parse error - the document is nested too deeply.") from None
        if _has_unpaired_surrogate(data):
            raise ParseError("JSON parse error - a string holds an unpaired surrogate (invalid Unicode).")
        return data
