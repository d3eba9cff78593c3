"""Asking the judge every pending case, a few at a time, storing each answer as it arrives."""
from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from tqdm import tqdm

from resolver.domain.judgment import JudgmentUnavailable, Question
from resolver.domain.ports import Judge
from resolver.evaluation.answers import AnswerKey, StoredAnswer
from resolver.evaluation.cases import Case


@dataclass(frozen=True)
class Unanswered:
    case_id: str
    reason: str  # the judge's fixed-vocabulary reason, e.g. "http_429", "timeout"


def ask(judge: Judge, case: Case, question: Question, key: AnswerKey) -> StoredAnswer | Unanswered:
    # The case ID in the request ID lets a Jev-side log be matched to a case.
    judgment = judge.judge(question, request_id=f"eval-{case.id}")
    if isinstance(judgment, JudgmentUnavailable):
        return Unanswered(case_id=case.id, reason=judgment.reason)
    return StoredAnswer(
        key=key,
        model=judgment.model,
        choice=judgment.choice,
        probabilities=dict(judgment.probabilities),
        server_request_id=judgment.server_request_id,
        latency_ms=judgment.latency_ms,
        attempts=judgment.attempts,
        answered_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        backend=judgment.backend,
        probability_source=judgment.probability_source.value,
    )


def ask_all(
    judge: Judge,
    pending: Sequence[tuple[Case, Question, AnswerKey]],
    *,
    answers_path: Path,
    concurrency: int,
    progress: TextIO | None,
) -> tuple[dict[str, StoredAnswer], list[Unanswered]]:
    obtained: dict[str, StoredAnswer] = {}
    unanswered: list[Unanswered] = []
    if not pending:
        return obtained, unanswered
    bar = tqdm(
        total=len(pending),
        file=progress,
        disable=progress is None,
        unit="case",
        desc="asking the judge",
        mininterval=0.5,
    )
    executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="evaluate")
    try:
        with answers_path.open("a", encoding="utf-8") as out:
            futures: set[Future[StoredAnswer | Unanswered]] = {
                executor.submit(ask, judge, case, question, key) for case, question, key in pending
            }
            while futures:
                done, futures = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    result = future.result()
                    if isinstance(result, Unanswered):
                        unanswered.append(result)
                    else:
                        # Written and flushed one by one from this thread only:
                        # whatever was answered before an interruption is kept.
                        out.write(result.to_json() + "\n")
                        out.flush()
                        obtained[result.key.case_id] = result
                    bar.update(1)
    finally:
        # On Ctrl-C, drop the questions not yet sent instead of waiting for all of them.
        executor.shutdown(wait=False, cancel_futures=True)
        bar.close()
    return obtained, unanswered
