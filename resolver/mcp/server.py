"""The MCP server: the resolver's tools over stdio, with the official SDK's low-level Server.

The low-level Server is used (not the decorator API) because the tools'
schemas come from the OpenAPI document verbatim and their annotations must be
exactly what is declared in `tools.py`.
"""
from __future__ import annotations

import io
import json
import re
import sys
from typing import Any, AsyncIterator

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from resolver import jsonbound
from resolver.mcp.tools import Tools, tool_list

NAME = "lifeproject-resolver"
INSTRUCTIONS = (
    "Resolves a person's informal reference to one live task or calendar event (item_id, href, "
    "etag) before you act on it; reads only. When the answer is needs_clarification, the person "
    "chooses, never you."
)


def build_server(tools: Tools) -> Server[Any]:
    listing = tool_list()  # built once: the schemas do not change while the process runs

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        return await tools.call(ctx, params)

    return Server(NAME, version="1", instructions=INSTRUCTIONS,
                  on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def run_stdio(tools: Tools) -> None:
    server = build_server(tools)

    async def main() -> None:
        lines = CheckedLines(anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")))
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            async with anyio.create_task_group() as group:
                group.start_soon(lines.answer_rejected, write_stream)
                await server.run(read_stream, write_stream, server.create_initialization_options())
                group.cancel_scope.cancel()

    anyio.run(main)


# --- malformed JSON-RPC ----------------------------------------------------------------
# The SDK's stdio transport hands a line it cannot validate to the session as an
# exception, and the session drops it: the client waits for an answer forever.
# So every line is checked here first, and a malformed one is answered with the
# JSON-RPC error its fault calls for, through the transport's own writer.

_SURROGATE = re.compile("[\ud800-\udfff]")


def check_line(line: str) -> types.JSONRPCError | None:
    """None for a line the SDK can take; else the error to answer it with."""
    try:
        message = json.loads(line)
    except ValueError:
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON.")
    request_id = message.get("id") if isinstance(message, dict) else None
    if not (isinstance(request_id, str) and not _SURROGATE.search(request_id)) and not (
            isinstance(request_id, int) and not isinstance(request_id, bool)):
        request_id = None
    if isinstance(message, list):
        return _error(None, types.INVALID_REQUEST, "Invalid Request: batches are not supported; send one message.")
    if not isinstance(message, dict):
        return _error(None, types.INVALID_REQUEST, "Invalid Request: a message must be a JSON object.")
    if "id" in message and request_id is None:
        return _error(None, types.INVALID_REQUEST, "Invalid Request: `id` must be a string or an integer.")
    if message.get("jsonrpc") != "2.0":
        return _error(request_id, types.INVALID_REQUEST, 'Invalid Request: `jsonrpc` must be "2.0".')
    if _has_surrogate(message):
        return _error(request_id, types.INVALID_REQUEST,
                      "Invalid Request: a string holds an unpaired surrogate (invalid Unicode).")
    is_response = "result" in message or "error" in message
    if "method" not in message and not is_response:
        return _error(request_id, types.INVALID_REQUEST, "Invalid Request: `method` is missing.")
    if "method" in message and not isinstance(message["method"], str):
        return _error(request_id, types.INVALID_REQUEST, "Invalid Request: `method` must be a string.")
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:
        return _error(request_id, types.INVALID_REQUEST, "Invalid Request: not a valid JSON-RPC message.")
    return None


def _has_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class CheckedLines:
    """Standard input's lines, with the malformed ones held back and queued for an answer."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self._send, self._receive = anyio.create_memory_object_stream[types.JSONRPCError](100)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self.source:
            if not line.strip():
                continue
            # Deeper than any valid message, cut (resolver/jsonbound.py): the decoders below
            # then never recurse past the bound, and the tool answers invalid_request.
            line = jsonbound.cut(line, jsonbound.max_json_depth() + jsonbound.MCP_WRAPPING)
            error = check_line(line)
            if error is None:
                yield line
            else:
                await self._send.send(error)

    async def answer_rejected(self, write_stream: Any) -> None:
        async with self._receive:
            async for error in self._receive:
                try:
                    await write_stream.send(SessionMessage(error))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
