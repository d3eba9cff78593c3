"""The request every door accepts, and its rules: written once, here.

The API body, `manage.py resolve` (flags or `--input -`), the page's form and
the MCP door all end in `parse_request` (fields) or `parse_document` (a JSON
object). Every rule failure is an `InvalidRequest` whose `details` has one
shape: `{"field": NAME, ...facts}`.

The limits come from the caller (the app reads them from `RESOLVER`), so this
module stays free of Django.
"""
from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass
from datetime import timezone, tzinfo
from typing import Any

from resolver.domain.errors import InvalidRequest
from resolver.domain.escaping import quoted
from resolver.domain.items import Kind
from resolver.domain.judgment import MAX_CANDIDATES

FIELDS = ("text", "kind", "collection_ids", "time_zone", "language")
# Short names a request may use for the languages with a time grammar (resolver/data/time/).
LANGUAGE_CODES = {"en": "english", "de": "german", "fr": "french", "es": "spanish"}
# A JSON `\ud800` escape decodes to an unpaired surrogate: a str that cannot be
# encoded as UTF-8, so echoing it (an error's details, Jev's request, stdout) fails.
_SURROGATE = re.compile("[\ud800-\udfff]")
# IANA names are short ("America/Argentina/ComodRivadavia" is 32); anything
# longer is not a zone and is not worth a file-system lookup.
_MAX_ZONE_LENGTH = 64


@dataclass(frozen=True)
class RequestLimits:
    max_text_length: int = 500
    max_collection_ids: int = 50
    # The judge never sees more than MAX_CANDIDATES; a setting may only lower it.
    max_candidates: int = MAX_CANDIDATES
    # Collection IDs are the last segment of a calendar's URL path: short.
    max_collection_id_length: int = 200


@dataclass(frozen=True)
class ResolveRequest:
    text: str
    kind: Kind
    collection_ids: tuple[str, ...] = ()
    # The zone the reference's time expressions and the calendar's floating
    # times and all-day dates are read in: parsed once, here, from an IANA
    # name (parse_time_zone); every layer further in takes this object.
    time_zone: tzinfo = timezone.utc

    def __post_init__(self) -> None:
        # A zone name that slipped past parse_time_zone would otherwise be
        # read as something (UTC) further in; refuse it where it is built.
        if not isinstance(self.time_zone, tzinfo):
            raise TypeError("ResolveRequest.time_zone is a tzinfo; parse a name with parse_time_zone")

    # The Snowball language of the reference's words and time expressions
    # (parse_language); None: the deployment's RESOLVER["LANGUAGE"].
    language: str | None = None


def _invalid(message: str, field: str, **facts: Any) -> InvalidRequest:
    return InvalidRequest(message, details={"field": field, **facts})


def parse_document(document: Any, *, limits: RequestLimits = RequestLimits(),
                   default_time_zone: str | None = None) -> ResolveRequest:
    """A JSON object (the API body, `--input -`, an MCP call) -> a request."""
    if not isinstance(document, dict):
        raise _invalid("The request must be a JSON object.", "body")
    unknown = sorted(str(name) for name in set(document) - set(FIELDS))
    if unknown:
        raise _invalid(f"Unknown field {quoted(unknown[0])}; the fields are {', '.join(FIELDS)}.", unknown[0],
                       unknown_fields=unknown)
    if "text" not in document:
        raise _invalid("`text` is required.", "text")
    if "kind" not in document:
        raise _invalid("`kind` is required.", "kind")
    return parse_request(text=document["text"], kind=document["kind"],
                         collection_ids=document.get("collection_ids"), time_zone=document.get("time_zone"),
                         limits=limits, default_time_zone=default_time_zone, language=document.get("language"))


def parse_request(*, text: Any, kind: Any, collection_ids: Any = None, time_zone: Any = None,
                  limits: RequestLimits = RequestLimits(), default_time_zone: str | None = None,
                  language: Any = None) -> ResolveRequest:
    """Validate the inputs every door accepts; raises InvalidRequest."""
    if not isinstance(text, str) or not text.strip():
        raise _invalid("`text` must be a non-empty string.", "text")
    if len(text) > limits.max_text_length:
        raise _invalid(f"`text` must be at most {limits.max_text_length} characters.", "text",
                       max_length=limits.max_text_length)
    if "\x00" in text:
        raise _invalid("`text` must not contain NUL characters.", "text")
    if _SURROGATE.search(text):
        raise _invalid("`text` must be valid Unicode (no unpaired surrogates).", "text")
    try:
        parsed_kind = Kind(kind)
    except (ValueError, TypeError):
        raise _invalid("`kind` must be `task` or `event`.", "kind") from None
    if collection_ids is None:
        collection_ids = []
    if not isinstance(collection_ids, (list, tuple)) or not all(
        isinstance(cid, str) and cid.strip() for cid in collection_ids
    ):
        raise _invalid("`collection_ids` must be a list of non-empty strings.", "collection_ids")
    if any(len(cid) > limits.max_collection_id_length for cid in collection_ids):
        raise _invalid(f"A collection ID must be at most {limits.max_collection_id_length} characters.",
                       "collection_ids", max_length=limits.max_collection_id_length)
    if any(_SURROGATE.search(cid) for cid in collection_ids):
        raise _invalid("`collection_ids` must be valid Unicode (no unpaired surrogates).", "collection_ids")
    if len(collection_ids) > limits.max_collection_ids:
        raise _invalid(f"At most {limits.max_collection_ids} collection IDs.", "collection_ids",
                       max_items=limits.max_collection_ids)
    return ResolveRequest(text=text, kind=parsed_kind, collection_ids=tuple(collection_ids),
                          time_zone=parse_time_zone(default_time_zone if time_zone is None else time_zone),
                          language=parse_language(language))


def parse_language(value: Any) -> str | None:
    """A Snowball language name ("german") or a short code ("de") -> the name; None stays None (the setting)."""
    if value is None:
        return None
    from resolver.domain.wordforms import languages

    known = languages()
    if isinstance(value, str) and len(value) <= 32:
        name = LANGUAGE_CODES.get(value.strip().lower(), value.strip().lower())
        if name in known:
            return name
    raise _invalid(f"`language` must be a Snowball language name ({', '.join(sorted(LANGUAGE_CODES.values()))}, "
                   f"...) or one of {', '.join(sorted(LANGUAGE_CODES))}.", "language")


def parse_time_zone(value: Any) -> tzinfo:
    """An IANA zone name -> its zone (ZoneInfo); None (no zone named, none configured) is UTC.

    The one place a zone name is read: the doors call it through parse_request
    (and the page's selection through services), so an unknown name is
    `invalid_request` here and never reaches the calendar or the pipeline.
    """
    if value is None:
        return timezone.utc
    if (not isinstance(value, str) or not value or len(value) > _MAX_ZONE_LENGTH
            or _SURROGATE.search(value) or "\x00" in value):
        raise _invalid("`time_zone` must be an IANA time zone name, e.g. Europe/Berlin.", "time_zone")
    try:
        return zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise _invalid(f"Unknown time zone {quoted(value)}; use an IANA name, e.g. Europe/Berlin.",
                       "time_zone") from None
