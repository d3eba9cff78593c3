"""The tools over HTTP: the stdio door's tools, and the person choosing, per client.

Through the SDK's own client (signed in by the real flow) where it can say
what is being tested; raw 2026-07-28 requests (tests/mcp_http/wire.py) for a
URL-only client and a replayed state, which the SDK's client never sends.
"""
from __future__ import annotations

import mcp_types as types
import pytest
import requests

from tests.mcp_http import wire

OFFSITE = {"text": "Team offsite planning", "kind": "task"}
OFFSITE_UIDS = {"t-offsite-work", "t-offsite-personal"}

pytestmark = pytest.mark.browser  # every test here is signed in through Chromium (the `alice` fixture)


def picker(action: str, choice: int | None = 0, seen: list | None = None):
    """An elicitation callback: the person takes `action`, accepting the `choice`-th option offered."""

    async def callback(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        if seen is not None:
            seen.append(params)
        content = None
        if action == "accept":
            options = params.requested_schema["properties"]["item_id"]["oneOf"]
            content = {"item_id": options[choice]["const"]}
        return types.ElicitResult(action=action, content=content)

    return callback


def test_tools__the_same_tools_schemas_and_annotations_as_the_stdio_door(alice):
    from resolver.mcp.tools import tool_list

    session, _ = alice

    async def scenario(client):
        return await client.list_tools()

    listed = session.run(scenario)
    dump = lambda tool: tool.model_dump(by_alias=True, exclude_none=True, mode="json")  # noqa: E731
    assert sorted(map(dump, listed.tools), key=lambda t: t["name"]) == sorted(map(dump, tool_list()),
                                                                               key=lambda t: t["name"])


def test_elicitation__form_pick_on_2026_07_28_is_re_read_live(alice):
    session, _ = alice
    seen: list = []
    result = session.call(OFFSITE, elicitation=picker("accept", 0, seen))
    assert len(seen) == 1
    options = seen[0].requested_schema["properties"]["item_id"]["oneOf"]
    assert [o["title"] for o in options][-1] == "None of these"
    envelope = result.structured_content
    assert envelope["status"] == "ok" and envelope["data"]["method"] == "user_selected"
    assert envelope["data"]["item_id"] == options[0]["const"] and envelope["data"]["uid"] in OFFSITE_UIDS
    assert envelope["data"]["etag"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_elicitation__decline_or_cancel_returns_the_clarification(alice, action):
    session, _ = alice
    seen: list = []
    envelope = session.call(OFFSITE, elicitation=picker(action, seen=seen)).structured_content
    assert len(seen) == 1
    assert envelope["status"] == "needs_clarification"
    assert {c["uid"] for c in envelope["data"]["candidates"]} == OFFSITE_UIDS


def test_elicitation__none_of_these_returns_the_clarification(alice):
    session, _ = alice
    envelope = session.call(OFFSITE, elicitation=picker("accept", -1)).structured_content
    assert envelope["status"] == "needs_clarification"


def test_no_elicitation__the_envelope_links_to_the_signed_page_for_this_person(alice):
    session, _ = alice
    envelope = session.call(OFFSITE).structured_content
    assert envelope["status"] == "needs_clarification"
    url = envelope["data"]["clarification_url"]
    assert url.startswith(f"{session.site.url}/resolve/clarify/")
    # Another signed-in person gets the same 404 as for a forged link; the page never shows alice's items to bob.
    bob = requests.Session()
    bob.get(f"{session.site.url}/accounts/login/", timeout=30)
    bob.post(f"{session.site.url}/accounts/login/", data={
        "username": "bob", "password": "bob-pw-3f0a2", "csrfmiddlewaretoken": bob.cookies["csrftoken"],
        "next": "/resolve/"}, headers={"Referer": f"{session.site.url}/accounts/login/"}, timeout=30)
    assert bob.get(url, timeout=30).status_code == 404


def test_legacy_client__2025_11_25_over_stateless_http_gets_the_envelope(alice):
    """No back channel for a mid-call question without a session: the person is never asked, nobody guesses."""
    session, _ = alice
    seen: list = []
    envelope = session.call(OFFSITE, mode="legacy", elicitation=picker("accept", 0, seen)).structured_content
    assert seen == []
    assert envelope["status"] == "needs_clarification"
    assert envelope["data"]["clarification_url"].startswith(f"{session.site.url}/resolve/clarify/")


def test_legacy_client__exact_reference(alice):
    session, _ = alice
    envelope = session.call({"text": "Draft portfolio outline", "kind": "task"}, mode="legacy").structured_content
    assert envelope["status"] == "ok" and envelope["data"]["uid"] == "t-portfolio"


def test_url_mode__a_url_only_client_sends_the_person_to_the_page(alice):
    session, _ = alice
    first = wire.call(session.site.mcp_url, session.access_token, "resolve_reference", OFFSITE,
                      elicitation=wire.URL_ONLY).json()["result"]
    assert first["resultType"] == "input_required"
    question = first["inputRequests"]["open_page"]
    assert question["method"] == "elicitation/create" and question["params"]["mode"] == "url"
    page = question["params"]["url"]
    assert page.startswith(f"{session.site.url}/resolve/clarify/")
    # The person chose on the page (which re-reads and shows the item); the retry answers the envelope.
    retry = wire.call(session.site.mcp_url, session.access_token, "resolve_reference", OFFSITE,
                      elicitation=wire.URL_ONLY, input_responses={"open_page": {"action": "accept"}},
                      request_state=first["requestState"]).json()["result"]
    assert retry["resultType"] == "complete"
    assert retry["structuredContent"]["status"] == "needs_clarification"


def test_isolation__a_state_sealed_for_one_person_is_refused_with_another_persons_token(alice):
    session, _ = alice
    first = wire.call(session.site.mcp_url, session.access_token, "resolve_reference", OFFSITE,
                      elicitation=wire.FORM).json()["result"]
    item_id = first["inputRequests"]["pick"]["params"]["requestedSchema"]["properties"]["item_id"]["oneOf"][0]["const"]
    answer = {"pick": {"action": "accept", "content": {"item_id": item_id}}}
    bob = session.site.deployment.mint_token("bob", resource=[session.site.mcp_url])
    replay = wire.call(session.site.mcp_url, bob, "resolve_reference", OFFSITE, elicitation=wire.FORM,
                       input_responses=answer, request_state=first["requestState"]).json()
    assert replay["error"]["data"] == {"reason": "invalid_request_state"}
    # Alice's own retry, with the same state, is answered.
    own = wire.call(session.site.mcp_url, session.access_token, "resolve_reference", OFFSITE, elicitation=wire.FORM,
                    input_responses=answer, request_state=first["requestState"]).json()["result"]
    assert own["structuredContent"]["status"] == "ok" and own["structuredContent"]["data"]["item_id"] == item_id


def test_isolation__a_state_is_bound_to_its_arguments(alice):
    session, _ = alice
    first = wire.call(session.site.mcp_url, session.access_token, "resolve_reference", OFFSITE,
                      elicitation=wire.FORM).json()["result"]
    other = {"text": "Draft portfolio outline", "kind": "task"}
    replay = wire.call(session.site.mcp_url, session.access_token, "resolve_reference", other, elicitation=wire.FORM,
                       input_responses={"pick": {"action": "decline"}}, request_state=first["requestState"]).json()
    assert replay["error"]["data"] == {"reason": "invalid_request_state"}


def test_logs__no_oauth_token_or_reference_in_any_log_line(alice):
    session, _ = alice
    session.call(OFFSITE)
    everything = session.site.server.stderr
    assert any('"door":"mcp"' in line for line in everything.splitlines())
    for tokens in session.storage.history:
        assert tokens.access_token not in everything
        assert tokens.refresh_token not in everything
    assert OFFSITE["text"] not in everything
