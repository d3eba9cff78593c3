"""A scripted OpenAI-compatible chat server on loopback, for tests and benchmarks.

Standard library only. It speaks `POST /v1/chat/completions` as OpenAI,
vLLM and llama.cpp's server do (choices[0].message.content, and token
`logprobs` with `top_logprobs` when asked), records every request, and answers
from a queue of scripted behaviours, one per request, falling back to a default:

    from tests.support.openai_contract_server import OpenAIContractServer, choose, raw

    with OpenAIContractServer() as server:          # default: choose(1)
        server.push(raw('{"candidate_number": 7, "no_match": false}'), choose(2, p=0.9))
        ...  # point the judge at server.url (ends in /v1)

`json_schema=False` makes it refuse `response_format: json_schema` with a 400
(as servers without structured output do) without using up a behaviour;
`logprobs=False` makes it leave log-probabilities out, as Ollama does.
"""
from __future__ import annotations

import collections
import itertools
import json
import math
import threading
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from tests.support.jev_contract_server import LOOPBACK, RecordedRequest, Reply

__all__ = ["OpenAIContractServer", "choose", "no_match", "raw", "slow", "status", "not_json"]

DEFAULT_MODEL = "scripted-chat-1"
PATH = "/v1/chat/completions"
VALUE_PREFIX = '{"candidate_number": '

# (request JSON, the model name to report, whether log-probabilities may be sent) -> the reply.
Behaviour = Callable[[Any, str, bool], Reply]


def _completion(content: str, model: str, logprobs: list[dict[str, Any]] | None) -> Reply:
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}
    choice["logprobs"] = {"content": logprobs} if logprobs is not None else None
    body = {"id": "chatcmpl-scripted", "object": "chat.completion", "model": model, "choices": [choice],
            "usage": {"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112}}
    return Reply(status=200, body=json.dumps(body).encode("utf-8"))


def _tokens(content: str, value: str, alternatives: Mapping[str, float]) -> list[dict[str, Any]]:
    """Tokens for an answer starting with VALUE_PREFIX: prefix, the value (with alternatives), the rest."""
    assert content.startswith(VALUE_PREFIX + value)
    rest = content[len(VALUE_PREFIX) + len(value):]

    def token(text: str, p: float, top: Mapping[str, float] | None = None) -> dict[str, Any]:
        entry: dict[str, Any] = {"token": text, "logprob": math.log(p), "bytes": list(text.encode())}
        entry["top_logprobs"] = [{"token": t, "logprob": math.log(q), "bytes": list(t.encode())}
                                 for t, q in (top or {text: p}).items()]
        return entry

    return [token(VALUE_PREFIX, 1.0), token(value, alternatives.get(value, 1.0), alternatives), token(rest, 1.0)]


def choose(number: int | None, p: float = 0.94, *, others: Mapping[str, float] | None = None,
           model: str | None = None) -> Behaviour:
    """A valid answer naming `number` (None: no_match) with probability `p` for its value token.

    The rest of the mass goes to `others` (value token -> probability) or, by
    default, to the next option ("1" or "null").
    """
    value = "null" if number is None else str(number)
    content = f'{VALUE_PREFIX}{value}, "no_match": {"true" if number is None else "false"}}}'
    alternatives = {value: p, **(others if others is not None else {("null" if value != "null" else "1"): 1 - p})}

    def behaviour(request_json: Any, reported: str, logprobs: bool) -> Reply:
        wanted = logprobs and isinstance(request_json, dict) and request_json.get("logprobs") is True
        return _completion(content, model or reported, _tokens(content, value, alternatives) if wanted else None)

    return behaviour


def no_match(p: float = 0.9) -> Behaviour:
    return choose(None, p)


def raw(content: str, *, model: str | None = None) -> Behaviour:
    """Answer with exactly `content` as the message text, without log-probabilities."""
    return lambda request_json, reported, logprobs: _completion(content, model or reported, None)


def body(payload: Any, code: int = 200) -> Behaviour:
    """Answer with `payload` as the whole response body (a broken completion)."""
    return lambda request_json, reported, logprobs: Reply(status=code, body=json.dumps(payload).encode("utf-8"))


def not_json() -> Behaviour:
    return lambda request_json, reported, logprobs: Reply(status=200, body=b"<html>gateway</html>",
                                                          content_type="text/html")


def status(code: int, headers: Mapping[str, str] | None = None) -> Behaviour:
    """An error status with an OpenAI-style error body and the given headers."""
    payload = json.dumps({"error": {"message": f"scripted {code}", "type": "server_error"}}).encode()
    return lambda request_json, reported, logprobs: Reply(status=code, headers=dict(headers or {}), body=payload)


def slow(seconds: float, then: Behaviour | None = None) -> Behaviour:
    """Wait `seconds`, then behave like `then` (default: choose(1))."""
    follow = then or choose(1)

    def behaviour(request_json: Any, reported: str, logprobs: bool) -> Reply:
        reply = follow(request_json, reported, logprobs)
        return Reply(status=reply.status, headers=reply.headers, body=reply.body,
                     content_type=reply.content_type, delay=reply.delay + seconds)

    return behaviour


def validate_request(payload: Any) -> str | None:
    """What an OpenAI-compatible server refuses with a 400, or None."""
    if not isinstance(payload, dict):
        return "body must be a JSON object"
    if not isinstance(payload.get("model"), str) or not payload["model"]:
        return "model is required"
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must be a non-empty list"
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in {"system", "user", "assistant"} \
                or not isinstance(message.get("content"), str):
            return "each message needs a role and string content"
    return None


class OpenAIContractServer:
    """`with OpenAIContractServer(...) as server:`; `server.url` is the base URL (`.../v1`)."""

    def __init__(self, *, model: str = DEFAULT_MODEL, default: Behaviour | None = None,
                 api_key: str | None = None, json_schema: bool = True, logprobs: bool = True) -> None:
        self.model = model
        self.default: Behaviour = default or choose(1)
        self.api_key = api_key
        self.json_schema = json_schema
        self.logprobs = logprobs
        self.requests: list[RecordedRequest] = []
        self._queue: collections.deque[Behaviour] = collections.deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def push(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def script(self, behaviours: Iterable[Behaviour]) -> None:
        self.push(*behaviours)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == PATH]

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the server is not running")
        return f"http://{LOOPBACK}:{self._server.server_address[1]}/v1"

    def start(self) -> OpenAIContractServer:
        self._server = ThreadingHTTPServer((LOOPBACK, 0), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="openai-contract", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> OpenAIContractServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _error(self, code: int, message: str) -> Reply:
        return Reply(status=code, body=json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode())

    def _chat(self, recorded: RecordedRequest) -> Reply:
        if self.api_key is not None and recorded.headers.get("authorization") != f"Bearer {self.api_key}":
            return self._error(401, "Incorrect API key provided.")
        problem = validate_request(recorded.json)
        if problem is not None:
            return self._error(400, problem)
        response_format = recorded.json.get("response_format") or {}
        if not self.json_schema and response_format.get("type") == "json_schema":
            return self._error(400, "response_format type json_schema is not supported")
        with self._lock:
            behaviour = self._queue.popleft() if self._queue else self.default
        return behaviour(recorded.json, self.model, self.logprobs)

    def _respond(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.delay > 0 and self._stopping.wait(reply.delay):
            return
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", reply.content_type)
            handler.send_header("Content-Length", str(len(reply.body)))
            handler.send_header("x-request-id", f"chatreq_{next(self._ids):06d}")
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _make_handler(server: OpenAIContractServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw_body = self.rfile.read(length) if length else b""
            try:
                parsed = json.loads(raw_body) if raw_body else None
            except ValueError:
                parsed = None
            recorded = RecordedRequest(method="POST", path=self.path.split("?", 1)[0],
                                       headers={k.lower(): v for k, v in self.headers.items()},
                                       body=raw_body, json=parsed)
            with server._lock:
                server.requests.append(recorded)
            reply = server._chat(recorded) if recorded.path == PATH else server._error(404, "Not Found")
            server._respond(self, reply)

    return Handler
