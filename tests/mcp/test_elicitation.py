"""The question put to the person: labels and a form every MCP client can render."""
from __future__ import annotations

import pytest
from mcp.server.elicitation import _PRIMITIVE_SCHEMA_ADAPTER

from resolver.mcp import elicitation


def clarification(*candidates: dict) -> dict:
    return {"data": {"questions": [{"id": "reference_selection", "prompt": "Which task do you mean?",
                                    "options": []}],
                     "candidates": list(candidates)}}


TASK = {"item_id": "itm_a", "title": "Team offsite planning", "collection_id": "work", "kind": "task",
        "due": "2026-03-14T09:00:00+00:00"}
UNDATED = {"item_id": "itm_b", "title": "Team offsite planning", "collection_id": "personal", "kind": "task",
           "due": None}
EVENT = {"item_id": "itm_c", "title": "Weekly sync", "collection_id": "work", "kind": "event",
         "start": "2025-01-06T10:00:00+00:00",
         "occurrence": {"start": "2026-03-16T10:00:00+00:00", "end": "2026-03-16T11:00:00+00:00",
                        "recurrence_id": "20260316T100000Z"}}


def test_label__task_with_collection_and_due():
    assert elicitation.label(TASK) == "Team offsite planning (work, due Sat 14 Mar 2026, 09:00 UTC)"


def test_label__task_without_due_names_the_collection():
    assert elicitation.label(UNDATED) == "Team offsite planning (personal)"


def test_label__recurring_event_shows_the_occurrence_not_the_series_start():
    assert elicitation.label(EVENT, next=True) == "Weekly sync (work, next Mon 16 Mar 2026, 10:00 UTC)"


def test_label__a_later_occurrence_is_not_called_next():
    """"sync on March 16" when the next is March 9: the label names the 16th, and not as "next"."""
    assert elicitation.label(EVENT) == "Weekly sync (work, on Mon 16 Mar 2026, 10:00 UTC)"


def test_label__single_event_starts():
    single = {**EVENT, "occurrence": {**EVENT["occurrence"], "recurrence_id": None}}
    assert elicitation.label(single, next=True) == "Weekly sync (work, starts Mon 16 Mar 2026, 10:00 UTC)"


def test_requested_schema__next_only_for_the_named_ids():
    later = {**EVENT, "item_id": "itm_d"}
    titles = [o["title"] for o in elicitation.requested_schema(clarification(EVENT, later),
                                                               next_ids={"itm_c"})["properties"]["item_id"]["oneOf"]]
    assert titles[:2] == ["Weekly sync (work, next Mon 16 Mar 2026, 10:00 UTC)",
                          "Weekly sync (work, on Mon 16 Mar 2026, 10:00 UTC)"]


def test_label__untitled_item_is_still_choosable():
    assert elicitation.label({**UNDATED, "title": "  "}) == "(untitled) (personal)"


def test_requested_schema__is_a_spec_single_select_with_none_of_these():
    schema = elicitation.requested_schema(clarification(TASK, UNDATED))

    field = schema["properties"][elicitation.FIELD]
    _PRIMITIVE_SCHEMA_ADAPTER.validate_python(field)  # the SDK's own definition of a valid field
    assert [o["const"] for o in field["oneOf"]] == ["itm_a", "itm_b", elicitation.NONE_OF_THESE]
    assert schema["required"] == [elicitation.FIELD]


@pytest.mark.parametrize("action, content, expected", [
    ("accept", {"item_id": "itm_b"}, "itm_b"),
    ("accept", {"item_id": elicitation.NONE_OF_THESE}, None),
    ("accept", {"item_id": "itm_not_offered"}, None),
    ("accept", {}, None),
    ("accept", None, None),
    ("decline", {"item_id": "itm_a"}, None),
    ("cancel", None, None),
])
def test_chosen_item_id__only_an_offered_candidate_accepted(action, content, expected):
    assert elicitation.chosen_item_id(action, content, clarification(TASK, UNDATED)) == expected


def test_message__says_when_the_nearest_occurrence_is_shown():
    envelope = {**clarification(EVENT), "warnings": [{"code": "occurrence_outside_range", "message": "",
                                                       "details": {"item_ids": ["itm_c"]}}]}
    assert "No occurrence falls in the time named; the nearest is shown." in elicitation.message(envelope)
    assert "nearest" not in elicitation.message(clarification(EVENT))


def test_label__the_suggestion_is_marked():
    assert elicitation.label({**TASK, "suggested": True, "probability": None}).endswith(", suggested)")
