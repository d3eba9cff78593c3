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
from typing import Any

import requests

from resolver.domain.codes import http_reason
from resolver.domain.judgment import (
    DefectiveAnswer,
    Judgment,
    JudgmentUnavailable,
    Question,
    question_fingerprint,
    validate_answer,
)
from resolver.judges import http
from resolver.judges.base import Judge
from resolver.judges.disabled import DisabledJudge

logger = logging.getLogger("resolver.judges")

DEFAULT_BASE_URL = "https://api.typesafe.ai"
DEFAULT_MODEL = "jev-latest"
ENDPOINT_PATH = "/v1/systemone"
JEV_REQUEST_ID_HEADER = "x-typesafe-request-id"
# Shared with the OpenAI-compatible judge (resolver/judges/http.py); the old
# private names stay importable here.
_is_retryable_status = http.is_retryable_status
_header_safe = http.header_safe
retry_after_seconds = http.retry_after_seconds
INITIAL_BACKOFF_SECONDS = http.INITIAL_BACKOFF_SECONDS


@dataclass(frozen=True)
class _Attempt:
    """What one HTTP attempt came to."""

    reason: str  # "ok" or an unavailability reason
    retry: bool = False
    retry_after: float | None = None
    status: int | None = None
    detail: str = ""
    answer: tuple[str, dict[str, float], str] | None = None
    jev_request_id: str | None = None


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

    @property
    def fingerprint(self) -> str:
        # Jev is sent the question and nothing else: its fingerprint is the question's.
        return question_fingerprint()

    def _headers(self, request_id: str) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "X-Request-Id": _header_safe(request_id)}
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
                         _header_safe(request_id), type(exc).__name__)
            return JudgmentUnavailable(
                reason="internal_error",
                latency_ms=self._elapsed_ms(start),
                detail=type(exc).__name__,
            )

    def _elapsed_ms(self, start: float) -> int:
        return max(0, int(round((self.clock() - start) * 1000)))

    def _judge(self, question: Question, *, request_id: str, start: float) -> Judgment | JudgmentUnavailable:
        payload = json.dumps(question.request_payload(self.model), ensure_ascii=False).encode("utf-8")
        headers = self._headers(request_id)
        attempts = 0
        last_reason = "budget_exhausted"
        backoff = INITIAL_BACKOFF_SECONDS
        budget = http.capped_budget(self.budget_seconds)  # never past the request's deadline
        while True:
            remaining = budget - (self.clock() - start)
            if remaining <= 0:
                break
            attempts += 1
            attempt = self._attempt(payload, headers, question, remaining=remaining,
                                    request_id=headers["X-Request-Id"], number=attempts)
            if attempt.answer is not None:
                choice, probabilities, model = attempt.answer
                return Judgment(
                    model=model,
                    choice=choice,
                    probabilities=probabilities,
                    jev_request_id=attempt.jev_request_id,
                    latency_ms=self._elapsed_ms(start),
                    attempts=attempts,
                )
            last_reason = attempt.reason
            if not attempt.retry:
                return JudgmentUnavailable(
                    reason=attempt.reason,
                    attempts=attempts,
                    latency_ms=self._elapsed_ms(start),
                    detail=attempt.detail,
                )
            delay = attempt.retry_after if attempt.retry_after is not None else backoff
            backoff *= 2
            # Never sleep past the budget: if the wait would use it up, stop now
            # rather than wake up with no time left for the call itself.
            if delay >= budget - (self.clock() - start):
                break
            self.sleep(delay)
        return JudgmentUnavailable(
            reason=last_reason,
            attempts=attempts,
            latency_ms=self._elapsed_ms(start),
            detail="judgment budget exhausted",
        )

    def _attempt(
        self,
        payload: bytes,
        headers: dict[str, str],
        question: Question,
        *,
        remaining: float,
        request_id: str,
        number: int,
    ) -> _Attempt:
        timeout = (min(self.connect_timeout, remaining), min(self.read_timeout, remaining))
        began = self.clock()
        try:
            response = self.connections.session().post(self.url, data=payload, headers=headers, timeout=timeout)
        except requests.Timeout:
            attempt = _Attempt(reason="timeout", retry=True)
        except requests.ConnectionError:
            attempt = _Attempt(reason="connection_error", retry=True)
        except requests.RequestException as exc:
            attempt = _Attempt(reason="request_error", detail=type(exc).__name__)
        else:
            attempt = self._read(response, question)
        logger.log(
            logging.INFO if attempt.reason == "ok" else logging.WARNING,
            "jev attempt=%d request_id=%s status=%s outcome=%s latency_ms=%d jev_request_id=%s",
            number,
            request_id,
            attempt.status if attempt.status is not None else "-",
            attempt.reason,
            max(0, int(round((self.clock() - began) * 1000))),
            attempt.jev_request_id or "-",
        )
        return attempt

    def _read(self, response: requests.Response, question: Question) -> _Attempt:
        status = response.status_code
        jev_request_id = response.headers.get(JEV_REQUEST_ID_HEADER)
        if jev_request_id is not None:
            jev_request_id = _header_safe(jev_request_id) or None
        if status != 200:
            retry = _is_retryable_status(status)
            return _Attempt(
                reason=http_reason(status),
                retry=retry,
                retry_after=retry_after_seconds(response.headers) if retry else None,
                status=status,
                jev_request_id=jev_request_id,
            )
        try:
            body = json.loads(response.content)
        except ValueError:
            # A 200 that is not JSON is a proxy or gateway page: transient.
            return _Attempt(reason="not_json", retry=True, status=status, jev_request_id=jev_request_id)
        try:
            answer = validate_answer(body, question)
        except DefectiveAnswer as defect:
            # Not retried: the same question would get the same broken answer.
            return _Attempt(
                reason="defective_response",
                status=status,
                detail=defect.reason,
                jev_request_id=jev_request_id,
            )
        return _Attempt(reason="ok", status=status, answer=answer, jev_request_id=jev_request_id)

