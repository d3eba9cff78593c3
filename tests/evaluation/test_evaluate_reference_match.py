"""manage.py evaluate_reference_match against the loopback Jev contract server.

The case set and the numbers it must produce are worked out by hand in
tests/evaluation/scripted.py.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from resolver.domain import judgment
from resolver.domain.judgment import QUESTION_ID, question_fingerprint
from resolver.evaluation.cases import load_cases
from resolver.evaluation.runner import (
    ANSWERS_FILE,
    EXIT_INCOMPLETE,
    EXIT_INVALID,
    EXIT_JUDGE_DISABLED,
    EXIT_MIXED_MODELS,
    question_for,
)
from resolver.thresholds import current_fingerprint
from tests.evaluation.scripted import (
    ALPHA,
    CERTIFIED,
    DELTA,
    EXPECTED_BY_TAG,
    EXPECTED_POINTS,
    HAND_SET,
    case_line,
    fresh_jev_session,
    hand_set_responder,
    point,
    read_report,
    run_command,
    write_hand_set,
)
from tests.support.jev_contract_server import DEFAULT_MODEL, JevContractServer


@pytest.fixture
def jev(settings, monkeypatch) -> Iterator[JevContractServer]:
    fresh_jev_session(monkeypatch)
    with JevContractServer(default=hand_set_responder()) as server:
        settings.RESOLVER = {"TYPESAFE_BASE_URL": server.url, "JUDGMENT_BUDGET_SECONDS": 2.0,
                             "JEV_READ_TIMEOUT": 1.0}
        yield server


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    return write_hand_set(tmp_path / "hand.jsonl")


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "out"


def evaluate(cases: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return run_command("--cases", str(cases), "--out", str(out), "--alpha", ALPHA,
                       "--delta", DELTA, *extra)


def answer_lines(out: Path) -> list[dict]:
    """The readable answer records (a line cut short by a kill is not one)."""
    records = []
    for line in (out / ANSWERS_FILE).read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


# -- metrics and certificate -----------------------------------------------------------

def test_command__metrics_match_the_hand_computation(jev, cases, out) -> None:
    code, stdout, stderr = evaluate(cases, out)
    assert code == 0, stderr
    report = read_report(out)
    for threshold, (admitted, errors, no_match_resolved, upper) in EXPECTED_POINTS.items():
        p = point(report, threshold)
        assert (p["total"], p["admitted"], p["errors"], p["no_match_resolved"]) == (
            12, admitted, errors, no_match_resolved), threshold
        assert p["coverage"] == pytest.approx(admitted / 12)
        if upper is None:
            assert p["risk"] is None and p["risk_upper"] is None
        else:
            assert p["risk"] == pytest.approx(errors / admitted)
            assert p["risk_upper"] == pytest.approx(upper, abs=1e-4)
    assert {tag: (a["cases"], a["correct"]) for tag, a in report["by_tag"].items()} == EXPECTED_BY_TAG


def test_command__certifies_the_hand_computed_threshold(jev, cases, out) -> None:
    code, stdout, _ = evaluate(cases, out)
    report = read_report(out)
    assert code == 0
    certificate = report["certificate"]
    assert certificate["threshold"] == CERTIFIED
    assert (certificate["alpha"], certificate["delta"], certificate["n"], certificate["k"]) == (0.46, 0.025, 6, 0)
    assert certificate["p_value"] == pytest.approx(0.54 ** 6, rel=1e-9)
    assert [(s["threshold"], s["outcome"]) for s in certificate["sequence"][-7:]] == [
        (0.84, "passed_over"), (0.83, "rejected"), (0.82, "rejected"), (0.81, "rejected"), (0.8, "rejected"),
        (0.79, "rejected"), (0.78, "not_rejected")]
    assert certificate["sequence"][-1]["p_value"] == pytest.approx(0.54 ** 7 + 7 * 0.46 * 0.54 ** 6, rel=1e-9)
    # The summary is printed on stdout, and is the summary.md written to --out.
    assert stdout == (out / "summary.md").read_text(encoding="utf-8")
    assert "**Certified threshold 0.79.**" in stdout
    assert "| 0.79 (certified) | 50.0% | 6 | 0 | 0.0% | 45.9% | 0 |" in stdout
    assert "| 0.78 (first failure) | 58.3% | 7 | 1 | 14.3% | 57.9% | 0 |" in stdout
    assert sorted(p.name for p in out.iterdir()) == [
        ANSWERS_FILE, "report.json", "risk_coverage.png", "summary.md"]
    assert (out / "risk_coverage.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_command__report_meta_ties_the_numbers_to_question_model_wording_and_cases(jev, cases, out) -> None:
    evaluate(cases, out, "--model", "jev-latest")
    meta = read_report(out)["meta"]
    assert meta["question"] == QUESTION_ID
    # The model the responses named, not the alias that was asked for.
    assert (meta["model"], meta["model_requested"]) == (DEFAULT_MODEL, "jev-latest")
    assert meta["fingerprint"] == current_fingerprint("jev")  # the prompt, joined with the deployed ranker
    assert meta["cases_digest"] == hashlib.sha256(cases.read_bytes()).hexdigest()
    assert (meta["case_count"], meta["answered"], meta["unanswered"], meta["margin"]) == (12, 12, 0, 0.1)
    assert meta["cases_file"] == "hand.jsonl"  # the name only: a report travels


def test_command__nothing_certified_is_still_a_complete_run(jev, cases, out) -> None:
    code, stdout, _ = run_command("--cases", str(cases), "--out", str(out), "--alpha", "0.45", "--delta", DELTA)
    assert code == 0
    assert read_report(out)["certificate"]["threshold"] is None
    assert "**Not certified.** The first threshold tested, 0.78, accepted 7 cases with 1 error(s): p-value 0.102" \
        in stdout


def test_command__margin_defaults_to_the_setting_and_can_be_overridden(jev, cases, out, settings) -> None:
    settings.RESOLVER = {**settings.RESOLVER, "THRESHOLD_MARGIN": 0.0}
    evaluate(cases, out)
    report = read_report(out)
    # With no margin, k (lead 0.05) and l (lead 0.05, wrong) are admitted at 0.40.
    assert report["meta"]["margin"] == 0.0
    assert (point(report, 0.4)["admitted"], point(report, 0.4)["errors"]) == (11, 3)
    evaluate(cases, out, "--margin", "0.1")
    assert point(read_report(out), 0.4)["admitted"] == 9


# -- the questions are the production questions ----------------------------------------

def test_command__asks_the_production_question_for_each_case(jev, cases, out) -> None:
    code, _, _ = evaluate(cases, out, "--model", "jev-pinned-2.0", "--concurrency", "3")
    assert code == 0
    sent = {r.json["state"]["user_reference"]: r for r in jev.systemone_requests}
    assert len(sent) == len(HAND_SET) == len(jev.systemone_requests)
    for case in load_cases(cases):
        request = sent[case.reference]
        assert request.json == question_for(case).request_payload("jev-pinned-2.0")
        assert request.headers["x-request-id"] == f"eval-{case.id}"
    assert {line["fingerprint"] for line in answer_lines(out)} == {question_fingerprint()}


def test_command__shows_progress_on_stderr(jev, cases, out) -> None:
    _, _, stderr = evaluate(cases, out)
    assert "12/12" in stderr
    assert "12 cases: 0 answers reused from answers.jsonl, 12 asked now, 0 unanswered." in stderr


# -- resuming ----------------------------------------------------------------------------

def test_command__unavailable_judgments_are_retried_on_the_next_run(jev, cases, out) -> None:
    failing = {"teeth appointment", "pasport", "travel papers"}  # c, g, k
    jev.default = hand_set_responder(failing=failing)

    code, stdout, stderr = evaluate(cases, out)
    assert code == EXIT_INCOMPLETE
    assert len(jev.systemone_requests) == 12
    report = read_report(out)
    assert (report["meta"]["answered"], report["meta"]["unanswered"]) == (9, 3)
    assert report["certificate"]["threshold"] is None
    assert "3 of 12 cases are unanswered" in report["certificate"]["refusal"]
    assert "**Not certified: the run is incomplete.**" in stdout
    assert "Answered: 9 of 12; unanswered: 3" in stdout
    for case_id in ("c", "g", "k"):
        assert f"unanswered: {case_id} (http_429)" in stderr
    assert sorted(line["case_id"] for line in answer_lines(out)) == list("abdefhijl")

    failing.clear()
    code, stdout, stderr = evaluate(cases, out)
    assert code == 0
    second_run = jev.systemone_requests[12:]
    assert sorted(r.json["state"]["user_reference"] for r in second_run) == [
        "pasport", "teeth appointment", "travel papers"]
    assert "9 answers reused from answers.jsonl, 3 asked now, 0 unanswered." in stderr
    assert read_report(out)["certificate"]["threshold"] == CERTIFIED
    assert len(answer_lines(out)) == 12


def test_command__a_complete_run_asks_nothing_again(jev, cases, out) -> None:
    evaluate(cases, out)
    first = read_report(out)
    code, _, _ = evaluate(cases, out)
    assert code == 0
    assert len(jev.systemone_requests) == 12
    second = read_report(out)
    assert second["points"] == first["points"] and second["certificate"] == first["certificate"]


def test_command__another_model_or_wording_is_asked_again(jev, cases, out, monkeypatch) -> None:
    evaluate(cases, out, "--model", "jev-a")
    evaluate(cases, out, "--model", "jev-b")
    assert len(jev.systemone_requests) == 24
    evaluate(cases, out, "--model", "jev-a")
    assert len(jev.systemone_requests) == 24
    monkeypatch.setattr(judgment, "INSTRUCTIONS", judgment.INSTRUCTIONS + " Be careful.")
    evaluate(cases, out, "--model", "jev-a")
    assert len(jev.systemone_requests) == 36
    assert read_report(out)["meta"]["fingerprint"] == current_fingerprint("jev")


def test_command__a_relabelled_case_keeps_its_answer_a_changed_one_is_asked_again(jev, cases, out) -> None:
    evaluate(cases, out)
    lines = cases.read_text(encoding="utf-8").splitlines()
    # g's label corrected from 2 to 1 (what was asked is unchanged); a's reference edited.
    lines[6] = case_line("g", "pasport", 1, ["typo"])
    lines[0] = case_line("a", "dentistt", 1, ["typo"])
    cases.write_text("\n".join(lines) + "\n", encoding="utf-8")
    jev.default = hand_set_responder(extra={"dentistt": ("1", 0.97)})
    code, _, _ = evaluate(cases, out)
    assert code == 0
    assert [r.json["state"]["user_reference"] for r in jev.systemone_requests[12:]] == ["dentistt"]
    # g is now right: 0.75 - 0.78 admits 7 with no error.
    assert (point(read_report(out), 0.78)["admitted"], point(read_report(out), 0.78)["errors"]) == (7, 0)


def test_command__a_tampered_answer_is_asked_again(jev, cases, out) -> None:
    evaluate(cases, out)
    lines = (out / ANSWERS_FILE).read_text(encoding="utf-8").splitlines()
    by_case = {json.loads(line)["case_id"]: i for i, line in enumerate(lines)}
    tampered = json.loads(lines[by_case["g"]])
    tampered["choice"] = "2"  # no longer the most probable option
    lines[by_case["g"]] = json.dumps(tampered)
    (out / ANSWERS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")

    code, _, stderr = evaluate(cases, out)
    assert code == 0
    assert [r.json["state"]["user_reference"] for r in jev.systemone_requests[12:]] == ["pasport"]
    assert "1 stored answer(s) failed the answer checks and were asked again." in stderr
    assert read_report(out)["certificate"]["threshold"] == CERTIFIED


def test_command__a_last_line_cut_short_is_asked_again_and_does_not_swallow_the_next(jev, cases, out) -> None:
    evaluate(cases, out)
    lines = (out / ANSWERS_FILE).read_text(encoding="utf-8").splitlines()
    cut = json.loads(lines[-1])["case_id"]
    # A kill in the middle of the last write: no newline at the end.
    (out / ANSWERS_FILE).write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40], encoding="utf-8")

    code, _, stderr = evaluate(cases, out)
    assert code == 0 and len(jev.systemone_requests) == 13
    assert "ignored 1 unreadable line(s)" in stderr
    assert [line["case_id"] for line in answer_lines(out)[-1:]] == [cut]
    # The third run reads the re-asked answer back: nothing is asked.
    evaluate(cases, out)
    assert len(jev.systemone_requests) == 13


# -- refusals ------------------------------------------------------------------------------

def test_command__answers_from_two_models_stop_the_run(jev, cases, out) -> None:
    jev.default = hand_set_responder(models={"plants": "jev-1.14.0"})
    code, stdout, stderr = evaluate(cases, out)
    assert code == EXIT_MIXED_MODELS
    assert "2 models (jev-1.14.0, jev-contract-1.0)" in stderr
    assert stdout == "" and not (out / "report.json").exists()


def test_command__refuses_to_run_with_the_judge_off(settings, cases, out) -> None:
    settings.RESOLVER = {"TYPESAFE_BASE_URL": "", "TYPESAFE_API_KEY": ""}
    code, stdout, stderr = evaluate(cases, out)
    assert code == EXIT_JUDGE_DISABLED
    assert "the judge is off" in stderr and "TYPESAFE_BASE_URL" in stderr
    assert not out.exists()


def test_command__a_bad_case_file_names_the_line(jev, tmp_path, out) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(case_line("a", "x", 1, []) + "\n" + case_line("b", "y", 7, []) + "\n", encoding="utf-8")
    code, _, stderr = evaluate(bad, out)
    assert code == EXIT_INVALID
    assert "bad.jsonl line 2: expected must be a candidate number 1..3" in stderr
    assert jev.systemone_requests == []


def test_command__a_missing_case_file_is_invalid(jev, tmp_path, out) -> None:
    code, _, stderr = evaluate(tmp_path / "nowhere.jsonl", out)
    assert code == EXIT_INVALID
    assert "nowhere.jsonl: no such file" in stderr


@pytest.mark.parametrize("args, message", [
    (("--alpha", "0"), "--alpha must be between 0 and 1"),
    (("--delta", "1.5"), "--delta must be between 0 and 1"),
    (("--margin", "-0.1"), "--margin must be at least 0"),
    (("--concurrency", "0"), "--concurrency must be 1 to 32"),
    (("--model", " "), "--model must not be empty"),
])
def test_command__invalid_arguments(jev, cases, out, args, message) -> None:
    code, _, stderr = evaluate(cases, out, *args)
    assert code == EXIT_INVALID
    assert message in stderr
    assert jev.systemone_requests == []
