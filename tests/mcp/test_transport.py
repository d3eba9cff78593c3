"""Malformed JSON-RPC on `manage.py mcp`'s standard input is answered, never met with silence.

The SDK's stdio transport drops a line it cannot validate (the client would
wait forever); resolver.mcp.server checks each line first and answers with
the JSON-RPC error its fault calls for.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading

import mcp_types as types
import pytest

from resolver.mcp.server import check_line
from tests.mcp.conftest import ROOT

MALFORMED = [
    (b"not json", None, types.PARSE_ERROR),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"', None, types.PARSE_ERROR),
    (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', None, types.INVALID_REQUEST),
    (b'"a string"', None, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":2}', 2, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":"three","method":5}', "three", types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"\\ud800"}}', 4, types.INVALID_REQUEST),
    (b'{"jsonrpc":"1.0","id":5,"method":"ping"}', 5, types.INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, types.INVALID_REQUEST),
    (b'\xff\xfe{}', None, types.PARSE_ERROR),
]


@pytest.mark.parametrize("line, request_id, code", MALFORMED)
def test_check_line__each_fault_has_its_error(line, request_id, code):
    error = check_line(line.decode("utf-8", errors="replace"))
    assert error is not None and (error.id, error.error.code) == (request_id, code)


def test_check_line__a_valid_message_passes():
    assert check_line('{"jsonrpc":"2.0","id":1,"method":"tools/list"}') is None
    assert check_line('{"jsonrpc":"2.0","method":"notifications/initialized"}') is None


def _read_lines(stream, count: int, *, timeout: float = 60.0) -> list[dict]:
    """Up to `count` JSON lines, or fewer when the server stays silent for `timeout` seconds."""
    lines: list[dict] = []

    def read() -> None:
        for _ in range(count):
            line = stream.readline()
            if not line:
                return
            lines.append(json.loads(line))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    return lines


@pytest.mark.slow
def test_stdio__every_malformed_line_is_answered_and_the_server_keeps_serving(mcp_env):
    process = subprocess.Popen([sys.executable, "manage.py", "mcp"], cwd=ROOT, env=mcp_env.env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        for line, _, _ in MALFORMED:
            process.stdin.write(line + b"\n")
        process.stdin.write(b'{"jsonrpc":"2.0","id":99,"method":"ping"}\n')
        process.stdin.flush()
        answers = _read_lines(process.stdout, len(MALFORMED) + 1)
    finally:
        process.kill()
        process.wait()
    # The errors are answered from the transport, the ping by the session: their order may differ.
    errors = [(str(a["id"]), a["error"]["code"]) for a in answers if "error" in a]
    assert sorted(errors) == sorted((str(i), c) for _, i, c in MALFORMED)
    assert {"jsonrpc": "2.0", "id": 99, "result": {}} in answers


@pytest.mark.slow
@pytest.mark.parametrize("depth", [40, 30_000])
def test_stdio__deep_tool_arguments_are_invalid_request_with_their_id(mcp_env, depth):
    # 40: the SDK could decode it; 30,000: no recursive decoder could (resolver/jsonbound.py).
    arguments = '{"text": ' + "[" * depth + "]" * depth + ', "kind": "task"}'
    call = ('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"resolve_reference","arguments":'
            + arguments + "}}")
    process = subprocess.Popen([sys.executable, "manage.py", "mcp"], cwd=ROOT, env=mcp_env.env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "deep-test", "version": "1"}}}).encode() + b"\n")
        process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        process.stdin.write(call.encode() + b"\n")
        process.stdin.write(b'{"jsonrpc":"2.0","id":99,"method":"ping"}\n')
        process.stdin.flush()
        answers = {a.get("id"): a for a in _read_lines(process.stdout, 3)}
    finally:
        process.kill()
        process.wait()
    result = answers[7]["result"]
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert (error["code"], error["details"]) == ("invalid_request", {"field": "body", "max_depth": 32})
    assert answers[99] == {"jsonrpc": "2.0", "id": 99, "result": {}}  # and the server keeps serving
