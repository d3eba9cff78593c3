"""The OpenAI-compatible judge: `reference_match.v1` asked of any chat model.

`POST {base}/chat/completions` with `requests` (OpenAI, Ollama, llama.cpp's
server, vLLM, LM Studio all speak it). Transport, timeouts, retries and the
total budget are every HTTP judge's (resolver/judges/http.py). What differs is
the answer: a chat model writes text, so every answer is checked
(resolver/domain/chat.py); a defective one gets up to `corrections` corrective
turns inside the same budget, then the judgment is unavailable
(`defective_response`). Probabilities come only from token log-probabilities;
without them the answer is advice: it marks a suggestion and can never meet a
threshold.

Every failure becomes a `JudgmentUnavailable`; nothing escapes `judge()`.
"""
from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from resolver.domain import chat
from resolver.domain.judgment import (
    NO_MATCH,
    DefectiveAnswer,
    Judgment,
    JudgmentUnavailable,
    ProbabilitySource,
    Question,
    advice_probabilities,
)
from resolver.domain.ports import Fingerprint, Judge
from resolver.judges import http
from resolver.judges.disabled import DisabledJudge

logger = logging.getLogger("resolver.judges")

ENDPOINT_PATH = "/chat/completions"
REQUEST_ID_HEADER = "x-request-id"
# OpenAI's maximum; servers that allow fewer return fewer.
TOP_LOGPROBS = 20
MAX_ANSWER_TOKENS = 40
# Statuses with which a server refuses a request field it does not support.
_REFUSED_FIELD_STATUSES = frozenset({400, 422})
_VALUE_START = re.compile(r'"candidate_number"\s*:\s*')
_OPTION_TOKEN = re.compile(r"\s*([0-9]+|null)[\s,}]*")

@dataclass(frozen=True, kw_only=True)
class OpenAIJudge:
    base_url: str
    # repr=False: the key must never show up in a repr, a log or an error page.
    api_key: str = field(repr=False)
    model: str
    connect_timeout: float
    read_timeout: float
    budget_seconds: float
    corrections: int = 1
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    # Its Session, and the response_format mode its server accepted: learnt on the
    # first refusal of json_schema and kept while this judge is (asking again on
    # every request would cost a round trip each time).
    connections: http.JudgeConnections = field(default_factory=http.JudgeConnections, repr=False, compare=False)

    backend = chat.BACKEND
    # Everything trusted a chat model is told besides the question (resolver.domain.chat).
    fingerprint = Fingerprint(chat.chat_fingerprint)

    @classmethod
    def from_settings(cls, settings: Any) -> Judge:
        """The judge RESOLVER['OPENAI_*'] describe, or the disabled one without a base URL or model."""
        base_url = (settings.OPENAI_BASE_URL or "").strip()
        model = (settings.OPENAI_MODEL or "").strip()
        if not base_url or not model:
            return DisabledJudge()
        return cls(
            base_url=base_url,
            api_key=settings.OPENAI_API_KEY or "",
            model=model,
            connect_timeout=float(settings.JEV_CONNECT_TIMEOUT),
            read_timeout=float(settings.JEV_READ_TIMEOUT),
            budget_seconds=float(settings.JUDGMENT_BUDGET_SECONDS),
            corrections=max(0, int(settings.JUDGE_CORRECTIONS)),
        )

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + ENDPOINT_PATH

    def response_mode(self) -> str:
        return self.connections.learnt("response_mode", "json_schema")

    def _headers(self, request_id: str) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "X-Request-Id": http.header_safe(request_id)}
        # Local servers run without auth: send no empty bearer.
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _payload(self, messages: Sequence[Mapping[str, str]], mode: str) -> bytes:
        body = {
            "model": self.model,
            "messages": list(messages),
            "response_format": chat.response_format(mode),
            "temperature": 0,
            "max_tokens": MAX_ANSWER_TOKENS,
            "logprobs": True,
            "top_logprobs": TOP_LOGPROBS,
        }
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def judge(self, question: Question, *, request_id: str) -> Judgment | JudgmentUnavailable:
        start = self.clock()
        try:
            return self._judge(question, request_id=request_id, start=start)
        except Exception as exc:  # noqa: BLE001  (the Judge contract: never raise)
            # The type only: a message could quote a URL, a header or an answer.
            logger.error("openai judge failed internally request_id=%s error=%s",
                         http.header_safe(request_id), type(exc).__name__)
            return JudgmentUnavailable(reason="internal_error", latency_ms=self._elapsed_ms(start),
                                       detail=type(exc).__name__)

    def _elapsed_ms(self, start: float) -> int:
        return max(0, int(round((self.clock() - start) * 1000)))

    def close(self) -> None:
        self.connections.close()

    def _judge(self, question: Question, *, request_id: str, start: float) -> Judgment | JudgmentUnavailable:
        deadline = start + http.capped_budget(self.budget_seconds)  # never past the request's deadline
        headers = self._headers(request_id)
        messages = chat.messages(question)
        corrections_left = self.corrections
        attempts = 0
        validity: list[str] = []
        mode = self.response_mode()

        def unavailable(reason: str, detail: str = "") -> JudgmentUnavailable:
            return JudgmentUnavailable(reason=reason, attempts=attempts, latency_ms=self._elapsed_ms(start),
                                       detail=detail)

        while True:
            exchange = http.post_json(
                session=self.connections.session(), url=self.url, payload=self._payload(messages, mode), headers=headers,
                connect_timeout=self.connect_timeout, read_timeout=self.read_timeout,
                deadline=deadline, clock=self.clock, sleep=self.sleep,
                request_id_header=REQUEST_ID_HEADER, label="openai",
            )
            attempts += exchange.attempts
            if exchange.reason != "ok":
                if mode == "json_schema" and exchange.status in _REFUSED_FIELD_STATUSES:
                    # Many servers accept json_object but not json_schema; try
                    # once without the schema, and remember if that works.
                    mode = "json_object"
                    continue
                return unavailable(exchange.reason, exchange.detail)
            if mode != self.response_mode():
                self.connections.learn("response_mode", mode)
            try:
                content, model, logprobs = _read_completion(exchange.body)
            except DefectiveAnswer as defect:
                # The server's envelope, not the model's answer: a correction cannot help.
                validity.append(defect.reason)
                return unavailable("defective_response", defect.reason)
            try:
                choice = chat.parse_answer(content, question)
            except DefectiveAnswer as defect:
                validity.append(defect.reason)
                if corrections_left <= 0 or deadline - self.clock() <= 0:
                    return unavailable("defective_response", defect.reason)
                corrections_left -= 1
                # The answer verbatim as the assistant's turn, then the correction.
                messages = [*messages, {"role": "assistant", "content": content},
                            {"role": "user", "content": chat.correction(question)}]
                continue
            validity.append("valid")
            return self._judgment(question, choice, content=content, model=model, logprobs=logprobs,
                                  server_request_id=exchange.server_request_id, attempts=attempts, start=start,
                                  validity=tuple(validity))

    def _judgment(self, question: Question, choice: str, *, content: Any, model: str, logprobs: object,
                  server_request_id: str | None, attempts: int, start: float,
                  validity: tuple[str, ...]) -> Judgment:
        """A valid answer, with the probabilities its log-probabilities give, or as advice without them."""
        distribution = number_distribution(logprobs, content, question)
        source = ProbabilitySource.LOGPROBS
        if distribution is None or _top(distribution, choice) != choice:
            # No usable log-probabilities, or ones that disagree with the
            # answer given: the answer stands, as advice.
            distribution, source = advice_probabilities(choice, question), ProbabilitySource.NONE
        return Judgment(
            model=model,
            choice=choice,
            probabilities=distribution,
            server_request_id=server_request_id,
            latency_ms=self._elapsed_ms(start),
            attempts=attempts,
            backend=self.backend,
            probability_source=source,
            fingerprint=self.fingerprint,
            attempt_validity=validity,
        )


def _read_completion(body: object) -> tuple[object, str, object]:
    """(message content, model as reported, logprobs content or None) from a chat completion."""
    if not isinstance(body, Mapping):
        raise DefectiveAnswer("not_object", "response body is not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise DefectiveAnswer("missing_choices", "no choices")
    message = choices[0].get("message")
    if not isinstance(message, Mapping):
        raise DefectiveAnswer("missing_message", "no message")
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise DefectiveAnswer("missing_model", "no model name")
    logprobs = choices[0].get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    return message.get("content"), model, content


def _top(distribution: Mapping[str, float], choice: str) -> str:
    return max(distribution, key=lambda key: (distribution[key], key == choice))


def _option_for(token: str, question: Question) -> str | None:
    """The option a candidate value token names, if any: a number in range, or null."""
    # A token may carry what follows the value too ("2," or "null}").
    match = _OPTION_TOKEN.fullmatch(token)
    if match is None:
        return None
    if match.group(1) == "null":
        return NO_MATCH
    number = int(match.group(1))
    return str(number) if 1 <= number <= question.candidate_count else None


def number_distribution(logprobs: object, content: object, question: Question) -> dict[str, float] | None:
    """Probabilities over the options from the token that carries the answer's candidate_number value.

    The alternatives the server lists for that token (`top_logprobs`) that name
    an option (a number in range, or `null` for no_match) are exponentiated and
    normalised; options not listed get 0. None when the tokens do not spell the
    answer, the value is not one token (a tokenizer that splits numbers), or no
    alternative names an option: the answer is then advice only.
    """
    if not isinstance(logprobs, list) or not logprobs or not isinstance(content, str):
        return None
    tokens: list[str] = []
    for entry in logprobs:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("token"), str):
            return None
        tokens.append(entry["token"])
    text = "".join(tokens)
    match = _VALUE_START.search(text)
    if text != content or match is None:
        return None
    value_at = match.end()
    offset = 0
    for index, token in enumerate(tokens):
        if offset <= value_at < offset + len(token):
            break
        offset += len(token)
    else:
        return None
    lead = text[offset:value_at]
    value_text = re.match(r"-?\d+|null|true|false", text[value_at:])
    if value_text is None or offset + len(tokens[index]) < value_at + len(value_text.group()):
        return None  # the value runs on into the next token
    alternatives = logprobs[index].get("top_logprobs") or []
    weights: dict[str, float] = {}
    for alternative in alternatives:
        if not isinstance(alternative, Mapping):
            continue
        token, logprob = alternative.get("token"), alternative.get("logprob")
        if not isinstance(token, str) or isinstance(logprob, bool) or not isinstance(logprob, (int, float)):
            continue
        if not math.isfinite(logprob) or not token.startswith(lead):
            continue
        option = _option_for(token[len(lead):], question)
        if option is not None:
            weights[option] = weights.get(option, 0.0) + math.exp(min(0.0, float(logprob)))
    total = math.fsum(weights.values())
    if total <= 0:
        return None
    return {key: weights.get(key, 0.0) / total for key in question.option_keys}
