"""A scripted Jev-compatible server on loopback, for tests, benchmarks and evaluations.

Standard library only. It speaks the public wire format (`POST /v1/systemone`,
`GET /v1/models`), checks requests the way the service documents them (422 for
a malformed one), records every request, and answers from a queue of scripted
behaviours, one per request, falling back to a default:

    from tests.support.jev_contract_server import JevContractServer, decisive, status

    with JevContractServer() as jev:                 # default: decisive(1)
        jev.push(status(429, {"retry-after-ms": "10"}), decisive(2, p=0.97))
        ...  # point the judge at jev.url
        assert jev.requests[0].headers["x-request-id"] == "req-1"

A behaviour is a callable `(request_json, model) -> Reply`; the factories
below make the common ones, and `responder(fn)` wraps `fn(request_json) ->
(status, headers, body_dict)` for runs that answer per case.
"""
from __future__ import annotations

import collections
import itertools
import json
import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_MODEL = "jev-contract-1.0"
NO_MATCH = "no_match"
MAX_CHOICE_OPTIONS = 255
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    content_type: str = "application/json"
    # Seconds to wait before answering (the client may have given up by then).
    delay: float = 0.0


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes
    json: Any  # None when the body was not JSON


# (request JSON, the model name to report) -> the reply.
Behaviour = Callable[[Any, str], Reply]


def _json_reply(status_code: int, body: Any, headers: Mapping[str, str] | None = None) -> Reply:
    return Reply(status=status_code, headers=dict(headers or {}), body=json.dumps(body).encode("utf-8"))


def _error(status_code: int, message: str, field_name: str | None = None,
           headers: Mapping[str, str] | None = None) -> Reply:
    return _json_reply(status_code, {"error": {"message": message, "field": field_name}}, headers)


def _choice_questions(request_json: Any) -> dict[str, list[str]]:
    """Question name -> option keys, for every choice question in the request."""
    questions = request_json.get("questions", {}) if isinstance(request_json, dict) else {}
    return {
        name: list(q.get("criteria", {}))
        for name, q in questions.items()
        if isinstance(q, dict) and q.get("type") == "choice"
    }


def _confidence(probabilities: Mapping[str, float]) -> float:
    """1 - normalised entropy: 1 when all mass is on one option, 0 when uniform."""
    n = len(probabilities)
    if n < 2:
        return 1.0
    entropy = -sum(p * math.log(p) for p in probabilities.values() if p > 0)
    return max(0.0, min(1.0, 1.0 - entropy / math.log(n)))


def _spread(options: list[str], fixed: Mapping[str, float]) -> dict[str, float]:
    """Give `fixed` options their probability and share the rest evenly."""
    rest = [o for o in options if o not in fixed]
    leftover = max(0.0, 1.0 - sum(fixed.values()))
    share = leftover / len(rest) if rest else 0.0
    return {o: float(fixed[o]) if o in fixed else share for o in options}


def _answer_with(
    distribution: Callable[[list[str]], tuple[str, dict[str, float]]],
    *,
    mutate: Callable[[dict[str, Any], list[str]], None] | None = None,
) -> Behaviour:
    """A 200 answering every choice question with `distribution(options)`."""

    def behaviour(request_json: Any, model: str) -> Reply:
        answers: dict[str, Any] = {}
        for name, options in _choice_questions(request_json).items():
            choice, probabilities = distribution(options)
            answer = {
                "type": "choice",
                "choice": choice,
                "confidence": round(_confidence(probabilities), 6),
                "probabilities": probabilities,
            }
            if mutate is not None:
                mutate(answer, options)
            answers[name] = answer
        body = {
            "model": model,
            "answers": answers,
            "usage": {"input_tokens": len(json.dumps(request_json)) // 4, "output_tokens": 1},
        }
        return _json_reply(200, body)

    return behaviour


def decisive(number: int | str, p: float = 0.94) -> Behaviour:
    """Option `number` gets probability `p`; the others share the rest."""
    key = str(number)
    return _answer_with(lambda options: (key, _spread(options, {key: p})))


def no_match(p: float = 0.9) -> Behaviour:
    return _answer_with(lambda options: (NO_MATCH, _spread(options, {NO_MATCH: p})))


def tie(a: int | str, b: int | str, p: float = 0.45) -> Behaviour:
    """Options `a` and `b` equally likely (and the most likely); `a` is the choice."""
    ka, kb = str(a), str(b)

    def distribution(options: list[str]) -> tuple[str, dict[str, float]]:
        each = 0.5 if len(options) == 2 else p
        return ka, _spread(options, {ka: each, kb: each})

    return _answer_with(distribution)


def uniform() -> Behaviour:
    """Every option equally likely, the first one chosen (what laya-serve's fake backend does)."""
    return _answer_with(lambda options: (options[0], {o: 1.0 / len(options) for o in options}))


DEFECT_KINDS = (
    "missing_answer",
    "unknown_choice",
    "bad_sum",
    "out_of_range",
    "unknown_key",
    "wrong_type",
    "missing_model",
)


def defective(kind: str, number: int | str = 1) -> Behaviour:
    """A 200 that breaks the answer contract in one way (see DEFECT_KINDS)."""
    if kind not in DEFECT_KINDS:
        raise ValueError(f"unknown defect {kind!r}; expected one of {DEFECT_KINDS}")
    key = str(number)
    good = decisive(key)

    def unknown_choice(answer: dict[str, Any], options: list[str]) -> None:
        answer["choice"] = str(len(options) + 100)

    def bad_sum(answer: dict[str, Any], options: list[str]) -> None:
        answer["probabilities"] = {o: 0.9 for o in options}

    def out_of_range(answer: dict[str, Any], options: list[str]) -> None:
        # Still sums to 1, so only the range check can catch it.
        probs = {o: 0.0 for o in options}
        probs[key] = 1.3
        probs[next(o for o in options if o != key)] = -0.3
        answer["probabilities"] = probs

    def unknown_key(answer: dict[str, Any], options: list[str]) -> None:
        answer["probabilities"] = {**answer["probabilities"], "0": 0.0}

    def wrong_type(answer: dict[str, Any], options: list[str]) -> None:
        answer["type"] = "score"

    mutations = {
        "unknown_choice": unknown_choice,
        "bad_sum": bad_sum,
        "out_of_range": out_of_range,
        "unknown_key": unknown_key,
        "wrong_type": wrong_type,
    }

    def behaviour(request_json: Any, model: str) -> Reply:
        if kind in ("missing_answer", "missing_model"):
            body = json.loads(good(request_json, model).body)
            if kind == "missing_answer":
                body["answers"] = {}
            else:
                del body["model"]
            return _json_reply(200, body)
        mutated = _answer_with(lambda options: (key, _spread(options, {key: 0.94})), mutate=mutations[kind])
        return mutated(request_json, model)

    return behaviour


def status(code: int, headers: Mapping[str, str] | None = None, body: Any = None) -> Behaviour:
    """Answer with `code`; `body` a dict (sent as JSON), bytes/str (sent raw) or None (a Jev error)."""

    def behaviour(request_json: Any, model: str) -> Reply:
        if body is None:
            return _error(code, f"scripted status {code}", headers=headers)
        if isinstance(body, (bytes, str)):
            raw = body.encode("utf-8") if isinstance(body, str) else body
            return Reply(status=code, headers=dict(headers or {}), body=raw, content_type="text/plain")
        return _json_reply(code, body, headers)

    return behaviour


def not_json() -> Behaviour:
    """A 200 with an HTML page, as a misconfigured proxy would send."""
    return lambda request_json, model: Reply(
        status=200, body=b"<html><body>upstream says hello</body></html>", content_type="text/html"
    )


def slow(seconds: float, then: Behaviour | None = None) -> Behaviour:
    """Wait `seconds`, then behave like `then` (default: decisive(1))."""
    follow = then or decisive(1)

    def behaviour(request_json: Any, model: str) -> Reply:
        reply = follow(request_json, model)
        return Reply(
            status=reply.status,
            headers=reply.headers,
            body=reply.body,
            content_type=reply.content_type,
            delay=reply.delay + seconds,
        )

    return behaviour


def responder(fn: Callable[[Any], tuple[int, Mapping[str, str], Any]]) -> Behaviour:
    """`fn(request_json) -> (status, headers, body_dict)`; `model` is filled in when missing."""

    def behaviour(request_json: Any, model: str) -> Reply:
        code, headers, body = fn(request_json)
        if code == 200 and isinstance(body, dict):
            body = {"model": model, **body}
        return _json_reply(code, body, headers)

    return behaviour


def validate_request(body: Any) -> tuple[str, str | None] | None:
    """The documented request rules; (message, field) for the first broken one."""
    if not isinstance(body, dict):
        return "request body must be a JSON object", None
    unknown = set(body) - {"model", "state", "questions"}
    if unknown:
        return f"unknown field(s) {sorted(unknown)}", sorted(unknown)[0]
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model must be a non-empty string", "model"
    if not isinstance(body.get("state"), (dict, list, str)):
        return "state must be an object, a list or a string", "state"
    questions = body.get("questions")
    if not isinstance(questions, dict) or not questions:
        return "questions must be a non-empty object", "questions"
    for name, question in questions.items():
        where = f"questions.{name}"
        if not isinstance(question, dict):
            return "a question must be an object", where
        if question.get("type") not in ("choice", "noul", "score"):
            return "unknown question type", f"{where}.type"
        if set(question) - {"type", "instructions", "criteria"}:
            return "unknown question field", where
        if not isinstance(question.get("instructions"), (str, dict, list)):
            return "instructions are required", f"{where}.instructions"
        if question["type"] != "choice":
            continue
        criteria = question.get("criteria")
        if not isinstance(criteria, dict) or not 2 <= len(criteria) <= MAX_CHOICE_OPTIONS:
            return f"a choice needs 2 to {MAX_CHOICE_OPTIONS} options", f"{where}.criteria"
        for key in criteria:
            if not key or key != key.strip() or any(ord(ch) < 32 or ord(ch) == 127 for ch in key):
                return "option keys must be non-empty, trimmed, without control characters", f"{where}.criteria"
    return None


class JevContractServer:
    """`with JevContractServer(model=..., default=..., api_key=...) as jev:`; `jev.url` is the base URL."""

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        default: Behaviour | None = None,
        api_key: str | None = None,
    ) -> None:
        self.model = model
        self.default: Behaviour = default or decisive(1)
        # When set, POST /v1/systemone demands `Authorization: Bearer <api_key>`.
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self._queue: collections.deque[Behaviour] = collections.deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------
    def push(self, *behaviours: Behaviour) -> None:
        """Queue behaviours; each answers one POST /v1/systemone, in order."""
        with self._lock:
            self._queue.extend(behaviours)

    def script(self, behaviours: Iterable[Behaviour]) -> None:
        self.push(*behaviours)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    @property
    def systemone_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == "/v1/systemone"]

    def _next_behaviour(self) -> Behaviour:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default

    # -- lifecycle ---------------------------------------------------------
    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the server is not running")
        return f"http://{LOOPBACK}:{self._server.server_address[1]}"

    def start(self) -> JevContractServer:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer((LOOPBACK, 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="jev-contract", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        # Wake handlers sleeping in a slow() reply so shutdown is quick.
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> JevContractServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling --------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _systemone(self, recorded: RecordedRequest) -> Reply:
        if self.api_key is not None and recorded.headers.get("authorization") != f"Bearer {self.api_key}":
            return _error(401, "Missing or invalid API key.")
        if recorded.json is None:
            return _error(422, "request body is not JSON", None)
        problem = validate_request(recorded.json)
        if problem is not None:
            return _error(422, problem[0], problem[1])
        return self._next_behaviour()(recorded.json, self.model)

    def _models(self) -> Reply:
        return _json_reply(
            200,
            {"models": [{"name": self.model, "description": "Scripted contract server.", "release_date": "unknown"}]},
        )

    def _respond(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.delay > 0 and self._stopping.wait(reply.delay):
            return
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", reply.content_type)
            handler.send_header("Content-Length", str(len(reply.body)))
            handler.send_header("x-typesafe-request-id", f"req_contract_{next(self._ids):06d}")
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(reply.body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (a timeout test): nothing to answer.
            pass


def _make_handler(server: JevContractServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # keep test output clean

        def _read(self, method: str) -> RecordedRequest:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            recorded = RecordedRequest(
                method=method,
                path=self.path.split("?", 1)[0],
                headers={k.lower(): v for k, v in self.headers.items()},
                body=raw,
                json=parsed,
            )
            server._record(recorded)
            return recorded

        def do_POST(self) -> None:  # noqa: N802
            recorded = self._read("POST")
            if recorded.path == "/v1/systemone":
                reply = server._systemone(recorded)
            else:
                reply = _error(404, "Not Found")
            server._respond(self, reply)

        def do_GET(self) -> None:  # noqa: N802
            recorded = self._read("GET")
            reply = server._models() if recorded.path == "/v1/models" else _error(404, "Not Found")
            server._respond(self, reply)

    return Handler
