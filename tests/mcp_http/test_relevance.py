"""Issue 37 over Streamable HTTP: the relevance model behind /mcp as behind the other doors (tests/test_doors_relevance.py
in process, tests/mcp/test_server.py over stdio). A reference to nothing is offered nothing; a threshold approved by
the operator's command lets the model resolve, with its provenance, and withdrawn it no longer does."""
from __future__ import annotations

import pytest

from tests.support import ranker_approval

pytestmark = pytest.mark.browser  # signed in through Chromium (the `alice` fixture)


def test_relevance__a_reference_to_nothing_is_offered_nothing(alice):
    session, _ = alice
    envelope = session.call({"text": "xylophone", "kind": "task"}).structured_content
    assert (envelope["status"], envelope["data"]["reason"]) == ("needs_clarification", "no_candidates")
    assert envelope["data"]["candidates"] == []
    assert envelope["data"]["questions"][0]["prompt"].startswith("Nothing in your calendars matches this reference.")


def test_relevance__an_approved_threshold_resolves_with_provenance_until_withdrawn(alice, deployment):
    session, _ = alice
    reference = {"text": "the dentist", "kind": "event"}
    before = session.call(reference).structured_content
    assert (before["status"], before["data"]["reason"]) == ("needs_clarification", "single_candidate")
    assert [c["uid"] for c in before["data"]["candidates"]] == ["e-dentist"]
    threshold = 0.5
    pk = ranker_approval.propose(deployment.env, threshold)
    with ranker_approval.approved(deployment.env, pk):
        resolved = session.call(reference).structured_content
    ranker_approval.check_resolved(resolved, uid="e-dentist", pk=pk, threshold=threshold)
    assert session.call(reference).structured_content["status"] == "needs_clarification"
