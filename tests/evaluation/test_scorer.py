"""The scorer path: a local scorer answers every case, the runner checks its answers and certifies.

The calendar set below (318 references) and its certificate at alpha 0.01,
delta 0.05, margin 0.1:

   references                          scorer's answer (p)            right?
   300 "order toner N" -> t-toner      t-toner (0.99)                 yes
   10 "yoga tomorrow N" -> e-yoga @12  e-yoga, the 12th (0.99)        yes
   4 "kayak N" -> nothing              t-toner (0.98)                 NO: a reference to nothing resolved
   2 "paddle N" -> nothing             no_match (0.90)                yes, never accepted
   1 "yoga on the 20th" -> e-yoga @20  e-yoga, the 12th (0.97)        NO: wrong occurrence
   1 "call mum" -> t-mum-1, t-mum-2    t-mum-1 (0.50)                 NO: several items named

   1.00: nothing accepted, passed over; 0.99: 310 accepted, no error,
   p = 0.99^310 = 0.0444 <= 0.05, rejected; 0.98: 314 accepted, 4 errors,
   p = 0.792 > 0.05: the sequence stops. Certified: 0.99, n 310, k 0,
   coverage 310/318.
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from resolver.evaluation import ranking
from resolver.evaluation.cases import CalendarCase, Case
from resolver.evaluation.errors import InvalidEvaluation
from resolver.evaluation.metrics import CaseOutcome
from resolver.evaluation.options import RunOptions
from resolver.evaluation.runner import run_evaluation, run_scorer_evaluation
from resolver.models import ApprovedThreshold
from tests.evaluation.calendar_set import ITEMS, META, YOGA_TOMORROW, write_calendar_set
from tests.evaluation.scripted import HAND_SET, read_report, write_hand_set

YOGA_20TH = "2027-01-20T19:00:00+01:00"
FINGERPRINT = "b" * 64


def reference(case_id: str, text: str, kind: str, expected: list[str], category: str,
              occurrence: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"id": case_id, "text": text, "kind": kind, "category": category, "expected": expected}
    if occurrence:
        record["expected_occurrence_start"] = occurrence
    return record


def designed_set(root: Path) -> tuple[Path, dict[str, tuple[str, float, float, str | None]]]:
    """The set in the module docstring, and the scorer's answer per reference ID."""
    references, answers = [], {}
    for i in range(300):
        references.append(reference(f"toner{i}", f"order toner {i}", "task", ["t-toner"], "partial"))
        answers[f"toner{i}"] = ("t-toner", 0.99, 0.0, None)
    for i in range(10):
        references.append(reference(f"yoga{i}", f"yoga tomorrow {i}", "event", ["e-yoga"], "time_expression",
                                    YOGA_TOMORROW))
        answers[f"yoga{i}"] = ("e-yoga", 0.99, 0.0, YOGA_TOMORROW)
    for i in range(4):
        references.append(reference(f"kayak{i}", f"kayak {i}", "task", [], "absent"))
        answers[f"kayak{i}"] = ("t-toner", 0.98, 0.0, None)
    for i in range(2):
        references.append(reference(f"paddle{i}", f"paddle {i}", "task", [], "absent"))
        answers[f"paddle{i}"] = ("no_match", 0.90, 0.05, None)
    references.append(reference("yoga20", "yoga on the 20th", "event", ["e-yoga"], "time_expression", YOGA_20TH))
    answers["yoga20"] = ("e-yoga", 0.97, 0.0, YOGA_TOMORROW)
    references.append(reference("mum", "call mum", "task", ["t-mum-1", "t-mum-2"], "duplicates"))
    answers["mum"] = ("t-mum-1", 0.50, 0.0, None)
    return write_calendar_set(root, meta=META, items=ITEMS, references=references), answers


@dataclass
class TableScorer:
    """Answers each case from a table keyed by case ID."""

    answers: dict[str, tuple[str, float, float, str | None]]
    name: str = "table scorer"
    model: str = "table-ranker-1"
    fingerprint: str = FINGERPRINT
    backend: str = "ranker"
    seen: list[Any] = field(default_factory=list)

    def score(self, case: Case | CalendarCase) -> CaseOutcome:
        self.seen.append(case)
        top, p, runner_up, occurrence = self.answers[case.id]
        return CaseOutcome(case_id=case.id, expected=case.expected, top_option=top, top_probability=p,
                           runner_up_probability=runner_up, occurrence_start=occurrence)


@pytest.fixture
def designed(tmp_path: Path) -> tuple[Path, TableScorer]:
    root, answers = designed_set(tmp_path / "calendar")
    return root, TableScorer(answers)


def options(**overrides: Any) -> RunOptions:
    return RunOptions(**{"margin": 0.1, "alpha": 0.01, "delta": 0.05, **overrides})


def test_scorer__known_outcomes_give_the_known_certificate(designed, tmp_path: Path) -> None:
    root, scorer = designed
    result = run_scorer_evaluation(cases_path=root, scorer=scorer, out_dir=tmp_path / "out", options=options())
    certificate = result.certificate
    assert (certificate.threshold, certificate.n, certificate.k, certificate.total) == (0.99, 310, 0, 318)
    assert certificate.coverage == 310 / 318
    assert certificate.p_value == pytest.approx(0.99 ** 310, rel=1e-9)
    assert [(s.threshold, s.n, s.k, s.outcome) for s in certificate.steps] == [
        (1.0, 0, 0, "passed_over"), (0.99, 310, 0, "rejected"), (0.98, 314, 4, "not_rejected")]
    assert (certificate.model, certificate.fingerprint) == ("table-ranker-1", FINGERPRINT)
    report = read_report(tmp_path / "out")
    assert report["certificate"]["cases_digest"] == report["meta"]["cases_digest"] == certificate.cases_digest
    assert (report["meta"]["backend"], report["meta"]["scorer"], report["meta"]["cases_format"]) == (
        "ranker", "table scorer", "calendar")
    at = {p["threshold"]: p for p in report["points"]}
    assert (at[0.97]["admitted"], at[0.97]["errors"], at[0.97]["no_match_resolved"]) == (315, 5, 4)
    assert (at[0.5]["admitted"], at[0.5]["errors"]) == (316, 6)
    assert report["by_tag"]["absent"] == {"cases": 6, "correct": 2, "accuracy": 2 / 6, "settled": 0}
    assert report["by_tag"]["duplicates"]["correct"] == 0
    assert "**Certified threshold 0.99.**" in result.summary
    # Every case reached the scorer once, as loaded, with its calendar.
    assert len(scorer.seen) == 318 and all(isinstance(case, CalendarCase) for case in scorer.seen)
    assert {id(case.calendar) for case in scorer.seen} == {id(scorer.seen[0].calendar)}


def test_scorer__the_verdict_is_the_runners_not_the_scorers(designed, tmp_path: Path) -> None:
    """A scorer claiming its wrong answers are right, or relabelling the case, changes nothing."""
    root, honest = designed

    class Boastful(TableScorer):
        def score(self, case: Any) -> CaseOutcome:
            outcome = super().score(case)
            return dataclasses.replace(outcome, verdict=True, expected=(outcome.top_option,), tags=("partial",))

    result = run_scorer_evaluation(cases_path=root, scorer=Boastful(honest.answers), out_dir=tmp_path / "out",
                                   options=options())
    assert (result.certificate.threshold, result.certificate.n, result.certificate.k) == (0.99, 310, 0)
    assert result.certificate.steps[-1].k == 4
    assert result.report["by_tag"]["absent"]["cases"] == 6


def test_scorer__a_jsonl_set_matches_the_judge_path(tmp_path: Path) -> None:
    """The hand set answered by a scorer certifies 0.79 at alpha 0.46, delta 0.025, as the judges' run does."""
    answers = {}
    for case_id, _, _, _, answer in HAND_SET:
        runner_up = answer[2] if len(answer) > 2 else round(0.6 * (1 - answer[1]), 6)
        answers[case_id] = (answer[0], answer[1], runner_up, None)
    result = run_scorer_evaluation(cases_path=write_hand_set(tmp_path / "hand.jsonl"), scorer=TableScorer(answers),
                                   out_dir=tmp_path / "out", options=options(alpha=0.46, delta=0.025))
    assert (result.certificate.threshold, result.certificate.n, result.certificate.k) == (0.79, 6, 0)
    assert result.report["meta"]["cases_format"] == "jsonl"


BAD_OUTCOMES = [
    (lambda o: {"top": 1}, "dict, not a CaseOutcome"),
    (lambda o: dataclasses.replace(o, case_id="elsewhere"), "the outcome of case 'elsewhere'"),
    (lambda o: dataclasses.replace(o, top_probability=1.5), "a probability outside [0, 1]: 1.5"),
    (lambda o: dataclasses.replace(o, top_probability=math.nan), "a probability outside [0, 1]: nan"),
    (lambda o: dataclasses.replace(o, runner_up_probability=0.995), "a runner-up (0.995) more probable"),
    (lambda o: dataclasses.replace(o, top_option=""), "no top option"),
]


@pytest.mark.parametrize(("spoil", "problem"), BAD_OUTCOMES, ids=[b[1][:24] for b in BAD_OUTCOMES])
def test_scorer__an_unsound_answer_stops_the_run(designed, tmp_path: Path, spoil: Any, problem: str) -> None:
    root, honest = designed

    class Spoiled(TableScorer):
        def score(self, case: Any) -> Any:
            return spoil(super().score(case))

    with pytest.raises(InvalidEvaluation) as caught:
        run_scorer_evaluation(cases_path=root, scorer=Spoiled(honest.answers), out_dir=tmp_path / "out",
                              options=options())
    assert "the scorer 'table scorer' answered case 'toner0' with" in str(caught.value)
    assert problem in str(caught.value)
    assert not (tmp_path / "out" / "report.json").exists()


@pytest.mark.parametrize(("attribute", "value"), [("fingerprint", "f" * 65), ("model", ""), ("backend", "x" * 21),
                                                  ("fingerprint", None)])
def test_scorer__an_identity_that_cannot_be_stored_is_refused(designed, tmp_path: Path, attribute: str,
                                                               value: Any) -> None:
    root, honest = designed
    scorer = dataclasses.replace(honest, **{attribute: value})
    with pytest.raises(InvalidEvaluation, match=f"the scorer's {attribute} must be a non-empty string"):
        run_scorer_evaluation(cases_path=root, scorer=scorer, out_dir=tmp_path / "out", options=options())
    assert honest.seen == []


def test_judge__a_calendar_set_is_for_the_ranker_only(designed, tmp_path: Path) -> None:
    root, _ = designed

    class NeverAsked:
        model = "jev-latest"

        def judge(self, question: Any, *, request_id: str) -> Any:
            raise AssertionError("no question may be asked")

    with pytest.raises(InvalidEvaluation, match="a calendar set has no candidate lists .* --judge ranker"):
        run_evaluation(cases_path=root, judge=NeverAsked(), out_dir=tmp_path / "out", options=options())


# -- the command ------------------------------------------------------------------------------------

def run(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("evaluate_reference_match", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_command__the_ranker_off_is_a_clear_error(tmp_path: Path, settings) -> None:
    settings.RESOLVER = {**settings.RESOLVER, "RELEVANCE_MODEL": None}
    code, stdout, stderr = run("--judge", "ranker", "--out", str(tmp_path / "out"))
    assert code == 2
    assert "error: the built-in ranker is off (RESOLVER['RELEVANCE_MODEL'] is None)" in stderr
    assert stdout == "" and not (tmp_path / "out").exists()


@pytest.mark.django_db
def test_command__ranker_certifies_and_proposes(designed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, scorer = designed
    monkeypatch.setattr(ranking, "build_scorer", lambda: scorer)
    code, stdout, stderr = run("--judge", "ranker", "--cases", str(root), "--out", str(tmp_path / "out"),
                               "--propose")
    assert code == 0, stderr
    assert "318 cases scored by table scorer." in stderr
    assert "**Certified threshold 0.99.**" in stdout
    row = ApprovedThreshold.objects.get()
    assert (row.backend, row.model, row.fingerprint, row.active) == ("ranker", "table-ranker-1", FINGERPRINT, False)
    assert (row.threshold, row.cases, row.coverage, row.admitted_accuracy) == (0.99, 310, 310 / 318, 1.0)
    assert row.risk_upper_bound is not None and row.risk_upper_bound <= 0.01
    assert row.evidence["certificate"] == read_report(tmp_path / "out")["certificate"]
    assert (row.evidence["n"], row.evidence["k"], row.evidence["alpha"], row.evidence["delta"]) == (
        310, 0, 0.01, 0.05)
    assert f"proposed threshold #{row.pk}: 0.99 for table-ranker-1" in stderr
    assert f"manage.py thresholds approve {row.pk} --by USERNAME" in stderr
    # The same run again stores nothing new.
    code, _, stderr = run("--judge", "ranker", "--cases", str(root), "--out", str(tmp_path / "out"), "--propose")
    assert code == 0 and ApprovedThreshold.objects.count() == 1
    assert "an identical proposal is already stored" in stderr


@dataclass
class NoMatchScorer(TableScorer):
    """Says "no_match" at 0.5 to every case: what each case was, without a model."""

    def score(self, case: Case | CalendarCase) -> CaseOutcome:
        self.seen.append(case)
        return CaseOutcome(case_id=case.id, expected=case.expected, top_option="no_match", top_probability=0.5,
                           runner_up_probability=0.0)


def test_command__the_ranker_reads_the_shipped_cases_without_cases(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37: any host can earn the ranker's certificate without files of its own: with no --cases the
    command reads the calibration set the package ships (resolver/evaluation/data/reference_match/)."""
    from resolver.evaluation.cases import RANKER_CASES_PATH

    shipped = [json.loads(line)["id"] for name in ("a", "b")
               for line in (RANKER_CASES_PATH / name / "references.jsonl").read_text(encoding="utf-8").splitlines()
               if line.strip()]
    assert len(shipped) > 1000
    reports = {}
    for label, extra in (("default", ()), ("named", ("--cases", str(RANKER_CASES_PATH)))):
        scorer = NoMatchScorer({})
        monkeypatch.setattr(ranking, "build_scorer", lambda scorer=scorer: scorer)
        code, _, stderr = run("--judge", "ranker", *extra, "--out", str(tmp_path / label))
        assert code == 0, stderr
        assert sorted(case.id for case in scorer.seen) == sorted(shipped)
        assert f"{len(shipped)} cases scored by table scorer." in stderr
        reports[label] = read_report(tmp_path / label)["meta"]
    assert reports["default"]["cases_digest"] == reports["named"]["cases_digest"]


@pytest.mark.django_db
def test_command__ranker_proposes_nothing_uncertified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, answers = designed_set(tmp_path / "calendar")
    scorer = TableScorer({case_id: ("t-toner", 0.99, 0.0, None) if case_id.startswith("kayak") else answer
                          for case_id, answer in answers.items()})
    monkeypatch.setattr(ranking, "build_scorer", lambda: scorer)
    code, stdout, stderr = run("--judge", "ranker", "--cases", str(root), "--out", str(tmp_path / "out"),
                               "--propose")
    assert code == 0
    assert "**Not certified.** The first threshold tested, 0.99, accepted 314 cases with 4 error(s)" in stdout
    assert "nothing certified: nothing proposed." in stderr
    assert not ApprovedThreshold.objects.exists()


def test_command__ranker_margin_is_its_own_or_none(designed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, scorer = designed
    monkeypatch.setattr(ranking, "build_scorer", lambda: scorer)
    run("--judge", "ranker", "--cases", str(root), "--out", str(tmp_path / "none"))
    assert read_report(tmp_path / "none")["meta"]["margin"] == 0.0
    scorer.margin = 0.2  # type: ignore[attr-defined]
    run("--judge", "ranker", "--cases", str(root), "--out", str(tmp_path / "own"))
    assert read_report(tmp_path / "own")["meta"]["margin"] == 0.2
    run("--judge", "ranker", "--cases", str(root), "--out", str(tmp_path / "given"), "--margin", "0.05")
    assert read_report(tmp_path / "given")["meta"]["margin"] == 0.05
    scorer.margin = "wide"  # type: ignore[attr-defined]
    code, _, stderr = run("--judge", "ranker", "--cases", str(root), "--out", str(tmp_path / "bad"))
    assert code == 2 and "the scorer's margin must be a number, got 'wide'" in stderr


def test_command__ranker_takes_no_model(tmp_path: Path) -> None:
    code, _, stderr = run("--judge", "ranker", "--model", "jev-latest", "--out", str(tmp_path / "out"))
    assert code == 2 and "--model names a judge's model" in stderr


def test_command__a_bad_calendar_set_exits_2(designed, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, scorer = designed
    monkeypatch.setattr(ranking, "build_scorer", lambda: scorer)
    (root / "meta.json").write_text("{}", encoding="utf-8")
    code, _, stderr = run("--judge", "ranker", "--cases", str(root), "--out", str(tmp_path / "out"))
    assert code == 2 and "meta.json: missing fields" in stderr
    assert scorer.seen == []
