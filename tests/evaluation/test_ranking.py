"""resolver/evaluation/ranking.py: the built-in ranker scoring cases through the pipeline, and its calendars."""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from resolver import rankers, services
from resolver.domain.judgment import NO_MATCH
from resolver.evaluation import ranking
from resolver.evaluation.cases import load_calendar_set, parse_case
from resolver.evaluation.options import RunOptions
from resolver.evaluation.runner import run_scorer_evaluation
from tests.evaluation.calendar_set import YOGA_TOMORROW, write_calendar_set

MODEL = {"name": "eval-ranker", "variants": {"words": {
    "features": ["lex_score"], "weights": [6.0], "temperature": 1.0, "floor": 0.3,
    "none": {"features": ["best_lex"], "weights": [-6.0], "bias": 3.0}}}}


@pytest.fixture
def scorer(settings, tmp_path: Path) -> ranking.RankerScorer:
    path = tmp_path / "model.json"
    path.write_text(json.dumps(MODEL), encoding="utf-8")
    settings.RESOLVER = {**settings.RESOLVER, "RELEVANCE_MODEL": str(path), "SEMANTIC": False}
    return ranking.build_scorer()


@pytest.fixture
def cases(tmp_path: Path):
    calendar, found = load_calendar_set(write_calendar_set(tmp_path / "set", references=[
        {"id": "toner", "text": "the toner order", "kind": "task", "category": "partial", "expected": ["t-toner"]},
        {"id": "exact", "text": "Order toner for the printer", "kind": "task", "category": "exact",
         "expected": ["t-toner"]},
        {"id": "yoga", "text": "yoga class tomorrow", "kind": "event", "category": "time_expression",
         "expected": ["e-yoga"], "expected_occurrence_start": YOGA_TOMORROW},
        {"id": "mum", "text": "ring mum", "kind": "task", "category": "duplicates",
         "expected": ["t-mum-1", "t-mum-2"]},
        {"id": "kayak", "text": "buy a kayak paddle", "kind": "task", "category": "absent", "expected": []},
        {"id": "thursday", "text": "what's due on Thursday", "kind": "task", "category": "date_alone",
         "expected": ["t-toner"]},
    ]))
    return {case.id: case for case in found}


def settings_margin() -> float:
    from resolver.conf import resolver_settings

    return float(resolver_settings.THRESHOLD_MARGIN)


def test_scorer__names_the_deployed_model_and_its_fingerprint(scorer):
    model = services.relevance_model()
    assert (scorer.model, scorer.fingerprint) == (model.scorer_name(None), model.fingerprint(None))
    assert rankers.current_fingerprint() == scorer.fingerprint
    assert scorer.backend == "ranker" and scorer.margin == pytest.approx(settings_margin())


def test_scorer__a_clear_reference_is_the_item_with_its_probability(scorer, cases):
    outcome = scorer.score(cases["toner"])
    assert outcome.top_option == "t-toner" and 0.5 < outcome.top_probability <= 1.0
    assert outcome.runner_up_probability < outcome.top_probability


def test_scorer__the_occurrence_meant_is_reported(scorer, cases):
    """'yoga class tomorrow' is the title plus a time: deterministic, so never the ranker's to accept."""
    assert scorer.score(cases["yoga"]).top_option == NO_MATCH


def test_scorer__what_the_pipeline_answers_otherwise_is_never_accepted(scorer, cases):
    """An exact title (deterministic), a tie between duplicates, a reference to nothing: no_match at 0."""
    for name in ("exact", "mum", "kayak"):
        outcome = scorer.score(cases[name])
        assert (outcome.top_option, outcome.top_probability) == (NO_MATCH, 0.0), name


def test_scorer__what_the_pipeline_answers_before_the_model_is_settled(scorer, cases):
    """An exact title, a title plus a time and a question by date alone never reach the model: settled, so the
    report counts them apart. A tie the model weighed and a reference to nothing it weighed are its own."""
    assert {name: scorer.score(case).settled for name, case in cases.items()} == {
        "exact": True, "yoga": True, "thursday": True, "toner": False, "mum": False, "kayak": False}


def test_report__the_rankers_exact_cases_are_answered_first_not_wrong(scorer, tmp_path):
    root = write_calendar_set(tmp_path / "set", references=[
        {"id": "exact", "text": "Order toner for the printer", "kind": "task", "category": "exact",
         "expected": ["t-toner"]},
        {"id": "toner", "text": "the toner order", "kind": "task", "category": "partial", "expected": ["t-toner"]},
        {"id": "kayak", "text": "buy a kayak paddle", "kind": "task", "category": "absent", "expected": []},
    ])
    result = run_scorer_evaluation(cases_path=root, scorer=scorer, out_dir=tmp_path / "out",
                                   options=RunOptions(margin=0.1, alpha=0.01, delta=0.05))
    by_tag = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["by_tag"]
    assert by_tag["exact"] == {"cases": 1, "correct": 0, "accuracy": None, "settled": 1}
    assert by_tag["all"] == {"cases": 3, "correct": 2, "accuracy": 1.0, "settled": 1}
    assert "| tag | cases | answered first | correct | accuracy |" in result.summary
    assert "| exact | 1 | 1 | 0 | – |" in result.summary


def test_scorer__a_jsonl_case_answers_by_candidate_number(scorer):
    case = parse_case({"id": "c1", "reference": "plumber", "kind": "task", "expected": 2, "tags": [],
                       "candidates": [{"title": "Buy groceries", "collection": "home", "status": "NEEDS-ACTION",
                                       "due": None},
                                      {"title": "Call the plumber", "collection": "home",
                                       "status": "NEEDS-ACTION", "due": "2027-01-14"}]})
    outcome = scorer.score(case)
    assert outcome.top_option == "2" and outcome.top_probability > 0.5


def test_calendar_items__not_live_and_series(cases):
    calendar = cases["toner"].calendar
    raw = list(calendar.items) + [{"uid": "t-done", "collection": "work", "kind": "task", "title": "Old",
                                   "status": "COMPLETED"}]
    items = {item.uid: item for item in ranking.calendar_items(raw, calendar.meta)}
    assert "t-done" not in items and "t-toner" in items
    yoga = items["e-yoga"]
    starts = [o.start for o in yoga.occurrences]
    assert starts[0] == datetime.fromisoformat(YOGA_TOMORROW)
    assert datetime.fromisoformat("2027-01-20T19:00:00+01:00") in starts  # the moved one
    assert datetime.fromisoformat("2027-02-16T18:30:00+01:00") not in starts  # the excluded one
