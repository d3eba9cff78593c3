"""manage.py thresholds: list, approve (by the admin's rule) and deactivate, with stable codes and exit codes."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.utils import timezone as django_timezone

from resolver import rankers, thresholds
from resolver.domain.judgment import QUESTION_ID, question_fingerprint
from resolver.models import ApprovedThreshold
from resolver.thresholds import current_fingerprint

pytestmark = pytest.mark.django_db

RANKER_FINGERPRINT = "e" * 64


def make_threshold(**overrides: Any) -> ApprovedThreshold:
    fields: dict[str, Any] = dict(
        question=QUESTION_ID, model="jev-1.13.0", fingerprint=current_fingerprint("jev"), backend="jev", threshold=0.82,
        cases=400, admitted_accuracy=1.0, coverage=0.7, risk_upper_bound=0.0075, evaluated_at=django_timezone.now(),
        evidence={"n": 400, "k": 0, "alpha": 0.01, "delta": 0.05},
    )
    fields.update(overrides)
    return ApprovedThreshold.objects.create(**fields)


def approver(username: str = "reviewer", **flags: Any) -> User:
    user = User.objects.create_user(username=username, is_staff=flags.pop("is_staff", True), **flags)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="resolver",
                                                        codename="change_approvedthreshold"))
    return user


def run(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("thresholds", *args, stdout=out, stderr=err)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


# -- list -----------------------------------------------------------------------------------------

def test_list__nothing_stored() -> None:
    code, stdout, _ = run("list")
    assert code == 0 and "no thresholds stored" in stdout


def test_list__a_table_and_json() -> None:
    user = approver()
    approved_at = datetime(2027, 1, 5, 12, 0, tzinfo=timezone.utc)
    active = make_threshold(active=True, approved_by=user, approved_at=approved_at)
    stale = make_threshold(fingerprint="0" * 64, backend="openai", model="gpt-x", evidence={"cases": 12},
                           threshold=0.79, cases=12, coverage=0.5)
    code, stdout, _ = run("list")
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0].split("\t") == ["id", "question", "backend", "model", "fingerprint", "threshold", "n", "k",
                                    "coverage", "active", "approved_by", "approved_at"]
    # Newest first; a fingerprint that is not current is marked.
    assert lines[1].split("\t") == [str(stale.pk), QUESTION_ID, "openai", "gpt-x", "000000000000 (stale)", "0.79",
                                    "12", "-", "0.500", "no", "-", "-"]
    assert lines[2].split("\t") == [str(active.pk), QUESTION_ID, "jev", "jev-1.13.0", current_fingerprint("jev")[:12],
                                    "0.82", "400", "0", "0.700", "yes", "reviewer", "2027-01-05T12:00:00+00:00"]
    code, stdout, _ = run("list", "--json")
    rows = json.loads(stdout)["thresholds"]
    assert [row["id"] for row in rows] == [stale.pk, active.pk]
    assert rows[1] == {
        "id": active.pk, "question": QUESTION_ID, "backend": "jev", "model": "jev-1.13.0",
        "fingerprint": current_fingerprint("jev"), "fingerprint_current": True, "threshold": 0.82, "n": 400, "k": 0,
        "coverage": 0.7, "alpha": 0.01, "delta": 0.05, "active": True, "approved_by": "reviewer",
        "approved_at": "2027-01-05T12:00:00+00:00",
    }
    assert rows[0]["fingerprint_current"] is False and rows[0]["k"] is None


def test_list__a_row_proposed_before_the_certificate_shows_its_admitted_and_errors() -> None:
    row = make_threshold(cases=426, evidence={"cases": 426, "admitted": 226, "errors": 0})
    listed = json.loads(run("list", "--json")[1])["thresholds"]
    assert [(r["id"], r["n"], r["k"], r["alpha"]) for r in listed] == [(row.pk, 226, 0, None)]


# -- approve -------------------------------------------------------------------------------------------

def test_approve__activates_and_records_who() -> None:
    approver()
    row = make_threshold()
    code, stdout, stderr = run("approve", str(row.pk), "--by", "reviewer")
    assert code == 0, stderr
    assert f"approved and activated threshold #{row.pk}: 0.82 for jev-1.13.0 (jev), by reviewer" in stdout
    row.refresh_from_db()
    assert row.active and row.approved_by.username == "reviewer" and row.approved_at is not None


@pytest.mark.parametrize(("overrides", "reason"), [
    ({"fingerprint": "0" * 64}, "its fingerprint does not match the current question wording"),
    ({"question": "reference_match.v0"}, "it was evaluated for question 'reference_match.v0', not "
                                         "'reference_match.v1'"),
    ({"probability_source": "none"}, "its model gave no log-probabilities (advice only)"),
    # A ranker row evaluated for another model file or encoder.
    ({"backend": "ranker"}, "its fingerprint does not match the current question wording"),
])
def test_approve__refuses_what_the_admin_refuses(overrides: dict[str, Any], reason: str) -> None:
    user = approver()
    row = make_threshold(**overrides)
    code, stdout, stderr = run("approve", str(row.pk), "--by", "reviewer")
    assert code == 4 and stdout == ""
    assert stderr.startswith(f"error: approval_refused: threshold #{row.pk} was not approved: {reason}")
    row.refresh_from_db()
    assert (row.active, row.approved_by, row.approved_at) == (False, None, None)
    # The admin's own rule gives the same reason.
    assert reason in thresholds.approve_thresholds(rows=[row], user=user).refused[row.pk]


def test_approve__a_ranker_row_once_the_ranker_names_its_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    approver()
    row = make_threshold(backend="ranker", fingerprint=RANKER_FINGERPRINT, probability_source="scorer",
                         model="ranker-1")
    monkeypatch.setattr(rankers, "current_fingerprint", lambda: RANKER_FINGERPRINT)
    code, _, stderr = run("approve", str(row.pk), "--by", "reviewer")
    assert code == 0, stderr
    row.refresh_from_db()
    assert row.active
    # Once the deployed ranker changes, the row reads as stale.
    monkeypatch.setattr(rankers, "current_fingerprint", lambda: "f" * 64)
    assert "(stale)" in run("list")[1]


@pytest.mark.parametrize(("row_id", "message"), [("999", "no threshold with ID 999"),
                                                  ("seven", "no threshold with ID 'seven': IDs are numbers")])
def test_approve__an_unknown_id_exits_2(row_id: str, message: str) -> None:
    approver()
    code, _, stderr = run("approve", row_id, "--by", "reviewer")
    assert code == 2
    assert stderr.startswith(f"error: threshold_not_found: {message}")


@pytest.mark.parametrize(("username", "make", "message"), [
    ("nobody", None, "no such user: 'nobody'"),
    ("gone", dict(is_active=False), "no such user: 'gone' is inactive"),
    ("visitor", dict(is_staff=False), "'visitor' may not approve thresholds"),
])
def test_approve__an_unknown_or_unentitled_user_exits_3(username: str, make: dict[str, Any] | None,
                                                        message: str) -> None:
    if make is not None:
        approver(username, **make)
    row = make_threshold()
    code, _, stderr = run("approve", str(row.pk), "--by", username)
    assert code == 3
    assert stderr.startswith(f"error: unknown_user: {message}")
    row.refresh_from_db()
    assert not row.active


def test_approve__a_staff_user_without_the_permission_exits_3() -> None:
    User.objects.create_user(username="onlooker", is_staff=True)
    row = make_threshold()
    code, _, stderr = run("approve", str(row.pk), "--by", "onlooker")
    assert code == 3 and "'onlooker' may not approve thresholds" in stderr


# -- deactivate -------------------------------------------------------------------------------------------

def test_deactivate__turns_an_active_row_off_and_keeps_its_record() -> None:
    user = approver()
    row = make_threshold(active=True, approved_by=user, approved_at=django_timezone.now())
    code, stdout, _ = run("deactivate", str(row.pk))
    assert code == 0 and stdout.strip() == f"deactivated threshold #{row.pk}"
    row.refresh_from_db()
    assert not row.active and row.approved_by == user
    code, stdout, _ = run("deactivate", str(row.pk))
    assert code == 0 and stdout.strip() == f"threshold #{row.pk} was not active: nothing changed"


def test_deactivate__an_unknown_id_exits_2() -> None:
    code, _, stderr = run("deactivate", "41")
    assert code == 2 and stderr.startswith("error: threshold_not_found: no threshold with ID 41")


def test_approve__a_ranker_row_while_the_ranker_is_off_is_refused(settings) -> None:
    settings.RESOLVER = {**settings.RESOLVER, "RELEVANCE_MODEL": None}
    approver()
    row = make_threshold(backend="ranker")
    code, _, stderr = run("approve", str(row.pk), "--by", "reviewer")
    assert code == 4
    assert "no current fingerprint is known for backend 'ranker'" in stderr
