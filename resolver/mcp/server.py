"""The MCP server: the resolver's tools over stdio, with the official SDK's low-level Server.

The low-level Server is used (not the decorator API) because the tools'
schemas come from the OpenAPI document verbatim and their annotations must be
exactly what is declared in `tools.py`.
"""
from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

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
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
