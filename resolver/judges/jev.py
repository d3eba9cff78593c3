"""The Jev judge: one `choice` question over HTTP with `requests`.

Every failure becomes a `JudgmentUnavailable` with a short reason; nothing
escapes `judge()`. Transient failures are retried inside one total time budget,
so a resolution never waits longer than `budget_seconds` for its judgment, nor past
the request's deadline (the budget is capped by what is left of it).
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from resolver.domain.judgment import (
    Judgment,
    JudgmentUnavailable,
    Question,
    question_fingerprint,
    validate_answer,
)
from resolver.domain.ports import Fingerprint, Judge
from resolver.judges import http
from resolver.judges.disabled import DisabledJudge

logger = logging.getLogger("resolver.judges")

DEFAULT_BASE_URL = "https://api.typesafe.ai"
DEFAULT_MODEL = "jev-latest"
ENDPOINT_PATH = "/v1/systemone"
JEV_REQUEST_ID_HEADER = "x-typesafe-request-id"


@dataclass(frozen=True, kw_only=True)
class JevJudge:
    base_url: str
    # repr=False: the key must never show up in a repr, a log or an error page.
    api_key: str = field(repr=False)
    model: str
    connect_timeout: float
    read_timeout: float
    budget_seconds: float
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    # Its Session (keep-alive connections reused across requests); not part of its identity.
    connections: http.JudgeConnections = field(default_factory=http.JudgeConnections, repr=False, compare=False)

    backend = "jev"
    # Jev is sent the question and nothing else: its fingerprint is the question's.
    fingerprint = Fingerprint(question_fingerprint)

    @classmethod
    def from_settings(cls, settings: Any) -> Judge:
        """Jev when RESOLVER['TYPESAFE_*'] name a key or a base URL, else the disabled judge."""
        api_key = settings.TYPESAFE_API_KEY or ""
        base_url = settings.TYPESAFE_BASE_URL or ""
        if not api_key and not base_url:
            return DisabledJudge()
        return cls(
            base_url=base_url or DEFAULT_BASE_URL,
            api_key=api_key,
            model=settings.TYPESAFE_DEFAULT_MODEL or DEFAULT_MODEL,
            connect_timeout=float(settings.JEV_CONNECT_TIMEOUT),
            read_timeout=float(settings.JEV_READ_TIMEOUT),
            budget_seconds=float(settings.JUDGMENT_BUDGET_SECONDS),
        )

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + ENDPOINT_PATH

    def _headers(self, request_id: str) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "X-Request-Id": http.header_safe(request_id)}
        # Local Jev-compatible servers may run without auth: send no empty bearer.
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def judge(self, question: Question, *, request_id: str) -> Judgment | JudgmentUnavailable:
        start = self.clock()
        try:
            return self._judge(question, request_id=request_id, start=start)
        except Exception as exc:  # noqa: BLE001  (the Judge contract: never raise)
            # The type only: a message could quote a URL or a header.
            logger.error("jev judge failed internally request_id=%s error=%s",
                         http.header_safe(request_id), type(exc).__name__)
            return JudgmentUnavailable(
                reason="internal_error",
                latency_ms=self._elapsed_ms(start),
                detail=type(exc).__name__,
            )

    def _elapsed_ms(self, start: float) -> int:
        return max(0, int(round((self.clock() - start) * 1000)))

    def close(self) -> None:
        self.connections.close()

    def _judge(self, question: Question, *, request_id: str, start: float) -> Judgment | JudgmentUnavailable:
        headers = self._headers(request_id)
        exchange = http.post_json(
            session=self.connections.session(), url=self.url,
            payload=json.dumps(question.request_payload(self.model), ensure_ascii=False).encode("utf-8"),
            headers=headers, connect_timeout=self.connect_timeout, read_timeout=self.read_timeout,
            deadline=start + http.capped_budget(self.budget_seconds),  # never past the request's deadline
            clock=self.clock, sleep=self.sleep, request_id_header=JEV_REQUEST_ID_HEADER, label="jev",
            # Jev answers the question itself: its answer is checked as it arrives.
            read=partial(validate_answer, question=question),
        )
        if exchange.reason != "ok":
            return JudgmentUnavailable(reason=exchange.reason, attempts=exchange.attempts,
                                       latency_ms=self._elapsed_ms(start), detail=exchange.detail)
        choice, probabilities, model = exchange.body
        return Judgment(
            model=model,
            choice=choice,
            probabilities=probabilities,
            server_request_id=exchange.server_request_id,
            latency_ms=self._elapsed_ms(start),
            attempts=exchange.attempts,
            backend=self.backend,
        )
