"""manage.py resolve: output, exit codes, --json, --input -."""
from __future__ import annotations

import json

import pytest
from tests.support.calendars import listed_at_most
from tests.support.commands import run_resolve

pytestmark = pytest.mark.django_db


run = run_resolve


def test_command__resolved_prints_item_id_and_etag(live):
    code, out, err = run("--text", "Draft portfolio outline", "--kind", "task")
    assert code == 0
    item_id, etag, href = out.rstrip("\n").split("\t")
    assert item_id.startswith("itm_") and etag.startswith('"')


def test_command__json_is_the_api_envelope(live):
    code, out, _ = run("--text", "Draft portfolio outline", "--kind", "task", "--json")
    body = json.loads(out)
    assert code == 0
    assert body["status"] == "ok" and body["data"]["uid"] == "t-portfolio"
    assert set(body) == {"schema_version", "request_id", "status", "data", "warnings", "error"}


def test_command__clarification_exit_3_lists_candidates_on_stderr(live):
    code, out, err = run("--text", "Team offsite planning", "--kind", "task")
    assert code == 3
    assert out == ""
    assert err.startswith("clarification_required:")
    assert "1. 'Team offsite planning'" in err and "2. 'Team offsite planning'" in err


def test_command__a_done_tasks_title_exits_3_and_names_it(live):
    code, out, err = run("--text", "Pay invoice", "--kind", "task")
    assert code == 3 and out == ""
    assert "warning: closed_item_matched:" in err and "  'Pay invoice' [work] COMPLETED itm_" in err
    assert "reason: no_candidates" in err and "  1. " not in err


def test_command__an_events_title_asked_as_a_task_exits_3_and_names_the_event(live):
    code, out, err = run("--text", "design review", "--kind", "task")
    assert code == 3 and out == ""
    assert "warning: other_kind_matched:" in err and "  'Design review' [work] event itm_" in err
    assert "reason: no_candidates" in err and "it names an event" in err and "  1. " not in err


def test_command__clarification_json(live):
    code, out, _ = run("--text", "bulk chore", "--kind", "task", "--json")
    body = json.loads(out)
    assert code == 3 and body["status"] == "needs_clarification"
    assert len(body["data"]["candidates"]) == listed_at_most()


def test_command__json_stderr_is_json_lines_only(live):
    """A warning (the judge is off here) is a JSON line like the log lines, never plain text."""
    code, out, err = run("--text", "bulk chore", "--kind", "task", "--json")
    warnings = [w["code"] for w in json.loads(out)["warnings"]]
    lines = [json.loads(line) for line in err.splitlines() if line.strip()]
    assert code == 3 and "judgment_unavailable" in warnings
    assert [line["warning"] for line in lines if "warning" in line] == warnings


def test_command__collection_option(live):
    code, out, _ = run("--text", "Team offsite planning", "--kind", "task", "--collection", "personal", "--json")
    assert code == 0 and json.loads(out)["data"]["collection_id"] == "personal"


def test_command__input_from_stdin(live):
    payload = json.dumps({"text": "Team offsite planning", "kind": "task", "collection_ids": ["work"]})
    code, out, _ = run("--input", "-", "--json", stdin=payload)
    assert code == 0 and json.loads(out)["data"]["uid"] == "t-offsite-work"


@pytest.mark.parametrize(
    "args, stdin",
    [
        (("--text", "", "--kind", "task"), None),
        (("--text", "x" * 501, "--kind", "task"), None),
        (("--text", "Weekly sync", "--kind", "meeting"), None),
        (("--text", "Weekly sync"), None),
        (("--input", "-"), "{not json"),
        (("--input", "-"), '["list"]'),
        (("--input", "-"), '{"text": 5, "kind": "task"}'),
        (("--input", "-"), '{"text": "a", "kind": "task", "extra": 1}'),
        (("--input", "-", "--text", "a"), '{"text": "a", "kind": "task"}'),
        (("--input", "file.json"), None),
    ],
)
def test_command__invalid_request_exit_2(live, args, stdin):
    code, out, err = run(*args, "--json", stdin=stdin)
    assert code == 2
    assert json.loads(out)["error"]["code"] == "invalid_request"


def test_command__invalid_request_human_output(live):
    code, out, err = run("--text", " ", "--kind", "task")
    assert (code, out) == (2, "")
    assert err.startswith("error: invalid_request:")


def test_command__collection_not_found_exit_2(live):
    code, out, _ = run("--text", "x", "--kind", "task", "--collection", "nope", "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "collection_not_found"


def test_command__calendar_unavailable_exit_4(live, settings, radicale):
    settings.RESOLVER = radicale.settings(CALDAV_URL="http://127.0.0.1:9/", CALDAV_TIMEOUT=2)
    code, out, _ = run("--text", "x", "--kind", "task", "--json")
    assert code == 4 and json.loads(out)["error"]["code"] == "calendar_unavailable"


def test_command__internal_error_exit_1(live, monkeypatch):
    def explode(**kwargs):
        raise RuntimeError("boom internals")

    monkeypatch.setattr("resolver.services.answer", explode)
    code, out, _ = run("--text", "x", "--kind", "task", "--json")
    body = json.loads(out)
    assert code == 1 and body["error"]["code"] == "internal_error"
    assert "boom" not in out


def test_command__list_collections(live):
    code, out, _ = run("--list-collections")
    assert code == 0
    assert [line.split("\t")[0] for line in out.strip().splitlines()] == ["bulk", "personal", "work"]


def test_command__a_reference_only_the_semantic_signal_finds_exits_3(live):
    code, out, _ = run("--text", "repair the street", "--kind", "task", "--json")
    body = json.loads(out)
    assert code == 3 and body["status"] == "needs_clarification"
    assert body["data"]["candidates"][0]["uid"] == "t-strasse"


def test_command__language_option(live):
    code, out, _ = run("--text", "was ist übermorgen fällig", "--kind", "task", "--language", "german",
                       "--time-zone", "UTC", "--json")
    body = json.loads(out)
    assert code == 3 and [w["code"] for w in body["warnings"] if w["code"] == "empty_time_range"]
    code, out, _ = run("--text", "yoga", "--kind", "task", "--language", "klingon", "--json")
    assert code == 2 and json.loads(out)["error"]["details"]["field"] == "language"
