"""The built-in ranker as a scorer for the certificate (`evaluate_reference_match --judge ranker`).

PLACEHOLDER: the relevance model that fills this module is written with the
pipeline (resolver/domain/); until then nothing here can score a case and
nothing evaluated for the ranker can be approved. What it must provide:

`build_scorer() -> Scorer`
    An object with
      - `name` (str): for people, e.g. "built-in ranker";
      - `model` (str, at most 200 characters): what its thresholds are stored
        and looked up under (ApprovedThreshold.model);
      - `fingerprint` (str, at most 64 characters): changes whenever what the
        scores mean changes (rules, weights, encoder, data);
        `current_fingerprint()` must return the same string;
      - `backend` (str): "ranker" (RANKER_BACKEND);
      - optional `margin` (float, the lead the top option needs over the
        runner-up; without it only ties are refused) and `question` (str, the
        question ID its thresholds are stored under; default QUESTION).
      - `score(case) -> CaseOutcome`: `case` is a `resolver.evaluation.cases.Case`
        (a JSON Lines set: reference, kind, candidate list) or a `CalendarCase`
        (a calendar set: reference, kind, and `case.calendar`, the whole
        `CalendarSet` with `meta` and the raw `items`, the same for every case of
        a set, so build its calendar once per `case.calendar.digest`). Return
        `CaseOutcome(case_id=case.id, expected=case.expected,
        top_option=<the top item's key: a candidate number "1".."N" for a Case,
        the item's UID for a CalendarCase, or "no_match">,
        top_probability=<its score in [0, 1]>, runner_up_probability=<the next
        option's score, <= top>, occurrence_start=<for an event, the ISO
        8601 start of the occurrence meant, or None>)`. The runner replaces
        `expected` and `tags` with the case's own and decides a calendar case's
        `verdict` itself (CalendarCase.is_right).

`current_fingerprint() -> str | None`
    The fingerprint of the ranker as deployed now; approval refuses a row
    whose fingerprint differs. None: nothing for the ranker is approvable.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from resolver.domain.judgment import QUESTION_ID
from resolver.evaluation.errors import InvalidEvaluation

if TYPE_CHECKING:
    from resolver.evaluation.runner import Scorer

RANKER_BACKEND = "ranker"
# The question ID the ranker's thresholds are stored and approved under.
QUESTION = QUESTION_ID


def build_scorer() -> "Scorer":
    """The built-in ranker as a scorer (placeholder: not available yet)."""
    raise InvalidEvaluation("the built-in ranker is not available")


def current_fingerprint() -> str | None:
    """The deployed ranker's fingerprint (placeholder: None, so no ranker threshold is approvable)."""
    return None
