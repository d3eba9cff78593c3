"""Input limits and hostile bodies: each ends in a clear `invalid_request`, never a 500.

Limits: a body over RESOLVER["MAX_BODY_BYTES"] (64 KiB), a text over 500
characters, more than 50 collection IDs. Through the API (400) and the
command (exit 2).
"""
from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.exceptions import RequestDataTooBig

from resolver.api.exceptions import envelope_exception_handler
from resolver.api.parsers import BoundedJSONParser
from resolver.conf import resolver_settings
from resolver.domain.errors import InvalidRequest
from tests.support.commands import run_resolve

pytestmark = pytest.mark.django_db

MAX_BODY = 64 * 1024


def post_raw(api, body: bytes | str, content_type: str = "application/json"):
    data = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    return api.generic("POST", "/v1/resolve", data, content_type=content_type)


def error_of(response) -> dict[str, Any]:
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["status"] == "error" and body["data"] is None
    return body["error"]


def padded(body: dict[str, Any], size: int) -> bytes:
    """`body` as JSON, padded with trailing white space to exactly `size` bytes."""
    raw = json.dumps(body).encode("utf-8")
    assert len(raw) <= size
    return raw + b" " * (size - len(raw))


# --- body size ------------------------------------------------------------------


def test_limits__default_body_limit_is_64_kib():
    assert resolver_settings.MAX_BODY_BYTES == MAX_BODY


def test_limits__body_at_the_limit_is_parsed(api, on_radicale):
    response = post_raw(api, padded({"text": "Weekly sync", "kind": "event"}, MAX_BODY))
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_limits__body_one_byte_over_is_invalid_request(api, on_radicale):
    response = post_raw(api, padded({"text": "Weekly sync", "kind": "event"}, MAX_BODY + 1))
    assert response.status_code == 400
    assert error_of(response) == {
        "code": "invalid_request",
        "message": f"The request body must be at most {MAX_BODY} bytes.",
        "details": {"field": "body", "max_bytes": MAX_BODY},
    }


def test_limits__body_over_djangos_own_limit_is_invalid_request_not_500(api, on_radicale):
    """3 MB: beyond DATA_UPLOAD_MAX_MEMORY_SIZE too, which used to surface as a 500."""
    response = post_raw(api, json.dumps({"text": "x" * 3_000_000, "kind": "task"}))
    assert response.status_code == 400
    assert error_of(response)["details"] == {"field": "body", "max_bytes": MAX_BODY}


def test_limits__body_limit_is_configurable(api, on_radicale, settings):
    settings.RESOLVER = {**settings.RESOLVER, "MAX_BODY_BYTES": 100}
    response = post_raw(api, padded({"text": "Weekly sync", "kind": "event"}, 101))
    assert (response.status_code, error_of(response)["details"]["max_bytes"]) == (400, 100)


def test_limits__parser_stops_reading_at_the_limit_whatever_the_declared_length():
    """A Content-Length that understates the body does not get the rest read."""

    class Stream(io.BytesIO):
        def read(self, size: int = -1) -> bytes:
            assert 0 <= size <= MAX_BODY + 1, "the parser asked for more than the limit"
            return super().read(size)

    class Request:
        META = {"CONTENT_LENGTH": "10"}

    with pytest.raises(Exception) as raised:
        BoundedJSONParser().parse(Stream(b"[" + b" " * (10 * MAX_BODY) + b"]"), "application/json",
                                  {"request": Request(), "encoding": "utf-8"})
    assert getattr(raised.value, "code", None) == "invalid_request"


def test_limits__djangos_request_too_big_maps_to_invalid_request():
    response = envelope_exception_handler(RequestDataTooBig("too big"), {"request": None})
    assert response.status_code == 400
    assert response.data["error"]["code"] == "invalid_request"


# --- text length and collection IDs -----------------------------------------------


def test_limits__text_of_500_characters_is_accepted(api, on_radicale):
    # 500 characters of four UTF-8 bytes each: the limit counts characters, not bytes.
    response = api.post("/v1/resolve", {"text": "😀" * 500, "kind": "task"}, format="json")
    assert response.status_code == 200


def test_limits__text_over_500_characters_is_invalid_request(api, on_radicale):
    response = api.post("/v1/resolve", {"text": "x" * 501, "kind": "task"}, format="json")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert error["details"] == {"field": "text", "max_length": 500}


def test_limits__50_collection_ids_are_accepted(api, on_radicale):
    response = api.post("/v1/resolve", {"text": "Weekly sync", "kind": "event",
                                        "collection_ids": ["work"] * 50}, format="json")
    assert (response.status_code, response.json()["status"]) == (200, "ok")


def test_limits__51_collection_ids_is_invalid_request(api, on_radicale):
    response = api.post("/v1/resolve", {"text": "Weekly sync", "kind": "event",
                                        "collection_ids": ["work"] * 51}, format="json")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert error["details"] == {"field": "collection_ids", "max_items": 50}


# --- hostile bodies ---------------------------------------------------------------

HOSTILE_BODIES = [
    # Under the size limit, far over the decoder's recursion limit.
    pytest.param("[" * 30_000 + "]" * 30_000, "application/json", id="nested-30000-deep"),
    pytest.param('{"text": "x", "kind": "\\ud800"}', "application/json", id="unpaired-surrogate-value"),
    pytest.param('{"\\udfff": 1, "text": "x", "kind": "task"}', "application/json", id="unpaired-surrogate-key"),
    pytest.param('{"text": "x", "kind": "task", "collection_ids": ["\\ud800"]}', "application/json",
                 id="unpaired-surrogate-collection"),
    pytest.param('{"text": NaN, "kind": "task"}', "application/json", id="nan"),
    pytest.param('{"text": "x", "kind": "task", "n": Infinity}', "application/json", id="infinity"),
    pytest.param('{"text": "x", "kind": "task"}', "application/json; charset=rot13", id="charset-rot13"),
    pytest.param('{"text": "x", "kind": "task"}', "application/json; charset=base64", id="charset-base64"),
    pytest.param(b'{"text": "\xff\xfe", "kind": "task"}', "application/json", id="not-utf8"),
    pytest.param('{"text": "x", "kind": "task"} trailing', "application/json", id="trailing-garbage"),
    pytest.param("", "application/json", id="empty"),
    pytest.param("null", "application/json", id="null"),
    pytest.param('["text", "kind"]', "application/json", id="array"),
    pytest.param('"text"', "application/json", id="string"),
    pytest.param('{"text": ["x"], "kind": "task"}', "application/json", id="text-list"),
    pytest.param('{"text": 1, "kind": "task"}', "application/json", id="text-number"),
    pytest.param('{"text": "a\\u0000b", "kind": "task"}', "application/json", id="nul"),
    pytest.param('{"text": " \\t\\n ", "kind": "task"}', "application/json", id="whitespace-only"),
    pytest.param('{"text": "x", "kind": {"$gt": ""}}', "application/json", id="kind-object"),
    pytest.param('{"text": "x", "kind": "task", "collection_ids": "work"}', "application/json",
                 id="collection-ids-string"),
    pytest.param('{"text": "x", "kind": "task", "collection_ids": [""]}', "application/json",
                 id="collection-id-empty"),
    pytest.param('{"text": "x", "kind": "task", "collection_ids": [{"a": 1}]}', "application/json",
                 id="collection-id-object"),
    pytest.param('{"text": "x", "kind": "task", "collection_ids": ["' + "c" * 201 + '"]}', "application/json",
                 id="collection-id-too-long"),
    pytest.param('{"text": "x", "kind": "task", "__proto__": {}}', "application/json", id="unknown-field"),
]


@pytest.mark.parametrize("body,content_type", HOSTILE_BODIES)
def test_limits__hostile_body_is_invalid_request(api, on_radicale, body, content_type):
    response = post_raw(api, body, content_type)
    assert response.status_code == 400, response.content[:300]
    error = error_of(response)
    assert error["code"] == "invalid_request"
    # Whatever was sent, the answer is valid UTF-8 JSON.
    response.content.decode("utf-8")


def test_limits__utf16_body_with_its_charset_is_read(api, on_radicale):
    body = json.dumps({"text": "Weekly sync", "kind": "event"}).encode("utf-16")
    response = post_raw(api, body, "application/json; charset=utf-16")
    assert (response.status_code, response.json()["status"]) == (200, "ok")


def test_limits__unknown_charset_is_ignored_like_django_does(api, on_radicale):
    response = post_raw(api, '{"text": "Weekly sync", "kind": "event"}', "application/json; charset=nonsense")
    assert (response.status_code, response.json()["status"]) == (200, "ok")


def test_limits__parse_errors_say_what_is_wrong():
    # Refused before it is decoded, with the bound it broke (resolver/jsonbound.py).
    with pytest.raises(InvalidRequest, match="at most 32 levels deep") as caught:
        BoundedJSONParser().parse(io.BytesIO(b"[" * 60_000), "application/json", {"encoding": "utf-8"})
    assert caught.value.details == {"field": "body", "max_depth": 32}


# --- the command ----------------------------------------------------------------------


run_command = run_resolve


def test_limits__command_text_over_500_characters(on_radicale):
    code, out, _ = run_command("--text", "x" * 501, "--kind", "task", "--json")
    assert code == 2
    assert json.loads(out)["error"] == {"code": "invalid_request", "message": "`text` must be at most 500 characters.",
                                        "details": {"field": "text", "max_length": 500}}


def test_limits__command_51_collections(on_radicale):
    args = [a for _ in range(51) for a in ("--collection", "work")]
    code, out, _ = run_command("--text", "Weekly sync", "--kind", "event", *args, "--json")
    assert code == 2
    assert json.loads(out)["error"] == {"code": "invalid_request", "message": "At most 50 collection IDs.",
                                        "details": {"field": "collection_ids", "max_items": 50}}


def test_limits__command_50_collections_are_accepted(on_radicale):
    args = [a for _ in range(50) for a in ("--collection", "work")]
    code, out, _ = run_command("--text", "Weekly sync", "--kind", "event", *args, "--json")
    assert (code, json.loads(out)["status"]) == (0, "ok")


@pytest.mark.parametrize("payload,field", [
    ({"text": "x" * 501, "kind": "task"}, "text"),
    ({"text": "x", "kind": "task", "collection_ids": ["work"] * 51}, "collection_ids"),
    ('{"text": "weekly \\ud800", "kind": "task"}', "text"),
    ('{"text": "weekly", "kind": "task", "collection_ids": ["\\ud800"]}', "collection_ids"),
    ({"text": "a\x00b", "kind": "task"}, "text"),
])
def test_limits__command_input_limits(on_radicale, payload, field):
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    code, out, _ = run_command("--input", "-", "--json", stdin=stdin)
    assert code == 2
    error = json.loads(out)["error"]
    assert (error["code"], error["details"]["field"]) == ("invalid_request", field)
    # The output can be written to a UTF-8 terminal: nothing unencodable is echoed.
    out.encode("utf-8")
