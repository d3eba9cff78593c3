"""A judge for Acme's scoring service (an example: Acme is imaginary)."""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from resolver.domain.judgment import Judgment, JudgmentUnavailable, Question, question_fingerprint, validate_answer
from resolver.domain.ports import Fingerprint
from resolver.judges import http

# Trusted text sent with every question besides it: part of the fingerprint.
INSTRUCTIONS = "Choose the candidate the user means, or no_match."


def acme_fingerprint() -> str:
    material = {"backend": "acme", "question": question_fingerprint(), "instructions": INSTRUCTIONS}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode("utf-8")).hexdigest()


@dataclass(frozen=True, kw_only=True)
class AcmeJudge:
    base_url: str
    api_key: str = field(repr=False)  # never in a repr, a log or an error page
    model: str
    budget_seconds: float
    # What it keeps between requests: not part of its configuration (compare=False).
    connections: http.JudgeConnections = field(default_factory=http.JudgeConnections, repr=False, compare=False)

    backend = "acme"
    fingerprint = Fingerprint(acme_fingerprint)

    @classmethod
    def from_settings(cls, settings: Any) -> AcmeJudge:
        options = settings.JUDGE_OPTIONS
        return cls(base_url=options["base_url"], api_key=options.get("api_key", ""), model=options["model"],
                   budget_seconds=float(settings.JUDGMENT_BUDGET_SECONDS))

    def judge(self, question: Question, *, request_id: str) -> Judgment | JudgmentUnavailable:
        try:
            return self._judge(question, request_id=request_id)
        except Exception as exc:  # the contract: never raise
            return JudgmentUnavailable(reason="internal_error", detail=type(exc).__name__)

    def close(self) -> None:
        self.connections.close()

    def _judge(self, question: Question, *, request_id: str) -> Judgment | JudgmentUnavailable:
        start = time.monotonic()
        headers = {"Content-Type": "application/json", "X-Request-Id": http.header_safe(request_id)}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        payload = {**question.request_payload(self.model), "instructions": INSTRUCTIONS}
        exchange = http.post_json(
            session=self.connections.session(), url=self.base_url.rstrip("/") + "/v1/judge",
            payload=json.dumps(payload).encode("utf-8"), headers=headers, connect_timeout=3.05, read_timeout=6.0,
            deadline=start + http.capped_budget(self.budget_seconds), clock=time.monotonic, sleep=time.sleep,
            request_id_header="x-acme-request-id", label="acme", read=partial(validate_answer, question=question),
        )
        latency_ms = int((time.monotonic() - start) * 1000)
        if exchange.reason != "ok":
            return JudgmentUnavailable(reason=exchange.reason, attempts=exchange.attempts, latency_ms=latency_ms,
                                       detail=exchange.detail)
        choice, probabilities, model = exchange.body
        return Judgment(model=model, choice=choice, probabilities=probabilities,
                        server_request_id=exchange.server_request_id, latency_ms=latency_ms,
                        attempts=exchange.attempts, backend=self.backend, fingerprint=self.fingerprint)
