"""Raw 2026-07-28 requests to /mcp, for what the SDK's client will not send.

A client declaring URL-mode elicitation only, a sealed requestState replayed
under another person's token, and requests spread over two servers each on a
fresh connection. Every request carries its version and capabilities, as the
revision requires (no session).
"""
from __future__ import annotations

from typing import Any

import requests

VERSION = "2026-07-28"
FORM = {"form": {}}
URL_ONLY = {"url": {}}


def call(mcp_url: str, token: str | None, name: str, arguments: dict[str, Any], *,
         elicitation: dict[str, Any] | None = None, input_responses: dict[str, Any] | None = None,
         request_state: str | None = None, request_id: int = 1) -> requests.Response:
    capabilities: dict[str, Any] = {}
    if elicitation is not None:
        capabilities["elicitation"] = elicitation
    params: dict[str, Any] = {
        "name": name, "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
    }
    if input_responses is not None:
        params["inputResponses"] = input_responses
    if request_state is not None:
        params["requestState"] = request_state
    headers = {"MCP-Protocol-Version": VERSION, "Mcp-Method": "tools/call", "Mcp-Name": name,
               "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    # No session object: every request on a connection of its own.
    return requests.post(mcp_url, json=body, headers=headers, timeout=60)
