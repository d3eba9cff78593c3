"""Deeply nested JSON is `invalid_request` at every door, with the bound it broke (resolver/jsonbound.py).

The API body and `resolve --input -` are measured before decoding; MCP
messages are cut at the bound before the transport decodes them, and the
tool refuses what remains. The scan and the cut themselves are in
tests/test_jsonbound.py; the stdio and HTTP transports end to end are in
tests/mcp/test_transport.py and tests/mcp_http/test_limits.py.
"""
from __future__ import annotations

import json

import anyio
import mcp_types as types
import pytest

from resolver import jsonbound
from resolver.mcp.server import check_line
from resolver.mcp.tools import Tools
from tests.support.commands import run_resolve

pytestmark = pytest.mark.django_db

TOO_DEEP = {"field": "body", "max_depth": 32}


def nested(depth: int, inner: str = "1") -> str:
    """A JSON request whose `text` is `depth - 1` arrays deep, so the document is `depth` deep."""
    return '{"text": ' + "[" * (depth - 1) + inner + "]" * (depth - 1) + ', "kind": "task"}'


# --- the API ----------------------------------------------------------------------


@pytest.mark.parametrize("depth", [33, 1000, 30_000])
def test_api__deeper_than_the_bound_is_invalid_request(api, on_radicale, depth):
    response = api.generic("POST", "/v1/resolve", nested(depth), content_type="application/json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["details"]) == ("invalid_request", TOO_DEEP)


def test_api__at_the_bound_the_request_rules_answer(api, on_radicale):
    error = api.generic("POST", "/v1/resolve", nested(32), content_type="application/json").json()["error"]
    assert error["code"] == "invalid_request" and error["details"]["field"] == "text"


def test_api__the_bound_is_a_setting(api, on_radicale, settings):
    settings.RESOLVER = {**settings.RESOLVER, "MAX_JSON_DEPTH": 4}
    error = api.generic("POST", "/v1/resolve", nested(5), content_type="application/json").json()["error"]
    assert error["details"] == {"field": "body", "max_depth": 4}


# --- the command -------------------------------------------------------------------


@pytest.mark.parametrize("depth", [33, 30_000])
def test_command__deep_standard_input_is_invalid_request_exit_2(on_radicale, depth):
    code, out, _ = run_resolve("--input", "-", "--json", stdin=nested(depth))
    assert code == 2
    error = json.loads(out)["error"]
    assert (error["code"], error["details"]) == ("invalid_request", TOO_DEEP)


def test_command__deep_standard_input_human_output(on_radicale):
    code, _, err = run_resolve("--input", "-", stdin=nested(30_000))
    assert code == 2 and err.startswith("error: invalid_request: The request document must nest at most 32")


# --- MCP, in process -----------------------------------------------------------------


def call_tool(arguments):
    params = types.CallToolRequestParams(name="resolve_reference", arguments=arguments)
    return anyio.run(Tools().call, None, params)


def test_mcp__deep_arguments_are_an_invalid_request_envelope(on_radicale):
    result = call_tool(json.loads(nested(33)))
    assert result.is_error is True
    error = result.structured_content["error"]
    assert (error["code"], error["details"]) == ("invalid_request", TOO_DEEP)


def test_mcp__a_line_too_deep_for_any_decoder_is_cut_and_still_refused(on_radicale):
    line = ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "resolve_reference", '
            f'"arguments": {nested(30_000)}}}}}')
    cut = jsonbound.cut(line, jsonbound.max_json_depth() + jsonbound.MCP_WRAPPING)
    assert check_line(cut) is None  # the SDK can take it now, with its id
    message = json.loads(cut)
    assert message["id"] == 7
    result = call_tool(message["params"]["arguments"])
    assert result.structured_content["error"]["details"] == TOO_DEEP
