"""`manage.py mcp` over stdio, driven by the SDK's client, against a real Radicale."""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from typing import Any

import jsonschema
import mcp_types as types
import pytest
import requests
from mcp import Client

from lifeproject.seeding import Spec, to_ical
from drf_spectacular.generators import SchemaGenerator
from resolver.openapi import ResolveInputSerializer
from resolver.mcp import schemas
from tests.mcp.conftest import ROOT, SITE_URL, McpEnvironment
from tests.support import ranker_approval
from tests.support.calendars import DAY, NOW, weekly_sync_start

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

OFFSITE = {"text": "Team offsite planning", "kind": "task"}
OFFSITE_UIDS = {"t-offsite-work", "t-offsite-personal"}


def envelope_of(result: types.CallToolResult) -> dict[str, Any]:
    """The structured result, checked to say the same as the text block."""
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def current_etag(env: McpEnvironment, collection_id: str, uid: str) -> str:
    instance = env.radicale.instance
    response = requests.request(
        "PROPFIND", f"{instance.url}{instance.username}/{collection_id}/{uid}.ics",
        auth=(instance.username, instance.password), headers={"Depth": "0"}, timeout=10,
        data=b'<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>',
    )
    assert response.status_code == 207
    start = response.text.index("<D:getetag>") if "<D:getetag>" in response.text else response.text.index("getetag>")
    tail = response.text[start:].split(">", 1)[1]
    return tail.split("<", 1)[0].replace("&quot;", '"')


def rewrite(env: McpEnvironment, collection_id: str, spec: Spec) -> None:
    """Someone else edits the item while the person is choosing."""
    instance = env.radicale.instance
    response = requests.put(f"{instance.url}{instance.username}/{collection_id}/{spec.uid}.ics",
                            data=to_ical(spec).encode(), auth=(instance.username, instance.password),
                            headers={"Content-Type": "text/calendar; charset=utf-8"}, timeout=10)
    assert response.status_code in (201, 204)


def undescribed(schema: dict[str, Any]) -> dict[str, Any]:
    properties = {name: {k: v for k, v in prop.items() if k != "description"}
                  for name, prop in schema["properties"].items()}
    return {**schema, "properties": properties}


class Person:
    """The person behind the agent's elicitation UI: answers with `action` and picks by title."""

    def __init__(self, action: str, *, pick: str | None = None, before_answer: Any = None) -> None:
        self.action, self.pick, self.before_answer = action, pick, before_answer
        self.asked: list[types.ElicitRequestFormParams] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        options = params.requested_schema["properties"]["item_id"]["oneOf"]
        content = None
        chosen = next((o for o in options if self.pick and self.pick in o["title"]), None)
        if self.action == "accept" and chosen is None:
            return types.ElicitResult(action="decline")  # none of the options is the one meant
        if self.action == "accept":
            content = {"item_id": chosen["const"]}
            if self.before_answer is not None:
                self.before_answer(chosen["const"])
        return types.ElicitResult(action=self.action, content=content)


# --- the tools and their schemas -----------------------------------------------------


def test_tools__listed_with_openapi_schemas_and_read_only_annotations(mcp_env):
    async def scenario(client: Client) -> types.ListToolsResult:
        return await client.list_tools()

    tools = {tool.name: tool for tool in mcp_env.run(scenario).tools}

    assert set(tools) == {"resolve_reference", "list_collections"}
    for tool in tools.values():
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.open_world_hint is False
        assert tool.annotations.destructive_hint is False
    resolve = tools["resolve_reference"]
    # The same shapes as the OpenAPI document, only with descriptions added for models.
    assert undescribed(resolve.input_schema) == undescribed(schemas.resolve_input())
    assert set(resolve.input_schema["properties"]) == set(ResolveInputSerializer().fields)
    assert resolve.input_schema["additionalProperties"] is False
    assert set(resolve.input_schema["required"]) == {"text", "kind"}
    assert all(prop["description"] for prop in resolve.input_schema["properties"].values())
    assert resolve.output_schema == schemas.resolve_output()
    assert tools["list_collections"].output_schema == schemas.collections_output()
    for phrase in ("NEVER writes", "needs_clarification", "MUST NOT pick", "If-Match", "href", "item_id"):
        assert phrase in resolve.description


def documented_examples(operation_id: str) -> list[dict[str, Any]]:
    """The 200 examples of an operation in the API's OpenAPI document."""
    document = SchemaGenerator().get_schema(request=None, public=True)
    for path_item in document["paths"].values():
        for operation in path_item.values():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                examples = operation["responses"]["200"]["content"]["application/json"]["examples"]
                return [example["value"] for example in examples.values()]
    raise LookupError(operation_id)


def test_tools__output_schemas_accept_the_documented_examples_only():
    resolve = jsonschema.Draft202012Validator(schemas.resolve_output())
    collections = jsonschema.Draft202012Validator(schemas.collections_output())
    resolve_examples, collections_examples = documented_examples("resolve"), documented_examples("collections_list")

    assert {e["status"] for e in resolve_examples} == {"ok", "needs_clarification"}
    for example in resolve_examples:
        resolve.validate(example)
    for example in collections_examples:
        collections.validate(example)
        with pytest.raises(jsonschema.ValidationError):
            resolve.validate(example)


# --- resolving ---------------------------------------------------------------------------


def test_resolve__exact_title_is_ok_with_the_live_etag(mcp_env):
    result = mcp_env.call({"text": "Draft portfolio outline", "kind": "task"})

    envelope = envelope_of(result)
    assert result.is_error is False
    assert envelope["status"] == "ok"
    assert envelope["data"]["method"] == "deterministic"
    assert envelope["data"]["uid"] == "t-portfolio"
    assert envelope["data"]["etag"] == current_etag(mcp_env, "work", "t-portfolio")


def test_resolve__href_is_the_one_the_server_reported(mcp_env, era):
    person = Person("accept", pick="(personal")
    exact = envelope_of(mcp_env.call({"text": "Draft portfolio outline", "kind": "task"}))
    picked = envelope_of(mcp_env.call(OFFSITE, mode=era, elicitation=person))

    user = mcp_env.radicale.instance.username
    assert exact["data"]["href"] == f"/{user}/work/t-portfolio.ics"
    assert picked["data"]["method"] == "user_selected"
    assert picked["data"]["href"] == f"/{user}/personal/t-offsite-personal.ics"


def test_resolve__ambiguous_without_elicitation_returns_the_clarification(mcp_env, era):
    result = mcp_env.call(OFFSITE, mode=era)

    envelope = envelope_of(result)
    assert result.is_error is False
    assert envelope["status"] == "needs_clarification"
    assert {c["uid"] for c in envelope["data"]["candidates"]} == OFFSITE_UIDS
    assert envelope["data"]["reason"] == "duplicate_titles"
    assert "clarification_url" not in envelope["data"]


def test_resolve__with_user_the_clarification_links_to_the_page(mcp_env):
    envelope = envelope_of(mcp_env.call(OFFSITE, args=("--user", "agent")))

    assert envelope["data"]["clarification_url"].startswith(f"{SITE_URL}/resolve/clarify/")


def test_resolve__empty_pool_asks_nobody(mcp_env, era):
    person = Person("accept", pick="Team")
    result = mcp_env.call({"text": "xylophone", "kind": "task"}, mode=era, elicitation=person)

    envelope = envelope_of(result)
    assert envelope["status"] == "needs_clarification"
    assert envelope["data"]["candidates"] == []
    assert envelope["data"]["reason"] == "no_candidates"
    assert person.asked == []


def test_ranker__an_approved_threshold_resolves_with_provenance_until_withdrawn(mcp_env):
    """Issue 37 over stdio: without an approved threshold the model's pick is a clarification; proposed,
    approved by `manage.py thresholds approve`, the same reference resolves with method "semantic" and the
    provenance that allowed it; deactivated, it is a clarification again."""
    reference = {"text": "the dentist", "kind": "event"}
    before = envelope_of(mcp_env.call(reference))
    assert (before["status"], before["data"]["reason"]) == ("needs_clarification", "single_candidate")
    assert [c["uid"] for c in before["data"]["candidates"]] == ["e-dentist"]
    assert before["data"]["judgment_provenance"] is None
    threshold = 0.5  # the one dentist appointment is the model's clear pick here (tests/test_doors_relevance.py)
    pk = ranker_approval.propose(mcp_env.env, threshold)
    assert envelope_of(mcp_env.call(reference))["status"] == "needs_clarification"  # proposed is not approved
    with ranker_approval.approved(mcp_env.env, pk):
        resolved = envelope_of(mcp_env.call(reference))
    ranker_approval.check_resolved(resolved, uid="e-dentist", pk=pk, threshold=threshold)
    assert envelope_of(mcp_env.call(reference))["status"] == "needs_clarification"


def test_resolve__time_zone_reaches_the_service(mcp_env):
    async def scenario(client: Client) -> tuple[types.CallToolResult, types.CallToolResult]:
        good = {"text": "Design review", "kind": "event", "time_zone": "Europe/Berlin"}
        return (await client.call_tool("resolve_reference", good),
                await client.call_tool("resolve_reference", {**good, "time_zone": "Mars/Olympus_Mons"}))

    good, bad = mcp_env.run(scenario)

    assert envelope_of(good)["status"] == "ok"
    assert envelope_of(good)["data"]["uid"] == "e-design"
    assert bad.is_error is True
    assert envelope_of(bad)["error"]["code"] == "invalid_request"
    assert "time_zone" in json.dumps(envelope_of(bad)["error"]["details"])


def test_resolve__language_and_the_semantic_signal_reach_the_service(mcp_env):
    """Issue 29 through the MCP door: the `language` argument, and a reference only the signal finds."""
    async def scenario(client: Client) -> list[types.CallToolResult]:
        german = {"text": "was ist übermorgen fällig", "kind": "task", "language": "de", "time_zone": "UTC"}
        return [await client.call_tool("resolve_reference", german),
                await client.call_tool("resolve_reference", {**german, "language": "klingon"}),
                await client.call_tool("resolve_reference", {"text": "repair the street", "kind": "task"})]

    german, unknown, signal = mcp_env.run(scenario)

    assert "empty_time_range" in [w["code"] for w in envelope_of(german)["warnings"]]
    assert unknown.is_error is True and envelope_of(unknown)["error"]["details"]["field"] == "language"
    offered = envelope_of(signal)
    assert offered["status"] == "needs_clarification"
    assert offered["data"]["candidates"][0]["uid"] == "t-strasse"


# --- the person chooses ------------------------------------------------------------------


def test_elicitation__accepted_pick_is_user_selected_with_the_live_etag(mcp_env, era):
    seen: dict[str, str] = {}

    def edit_meanwhile(item_id: str) -> None:
        seen["before"] = current_etag(mcp_env, "personal", "t-offsite-personal")
        rewrite(mcp_env, "personal", Spec("t-offsite-personal", "Team offsite planning",
                                          extra={"description": f"edited {datetime.now(timezone.utc)}"}))
        seen["after"] = current_etag(mcp_env, "personal", "t-offsite-personal")

    person = Person("accept", pick="(personal", before_answer=edit_meanwhile)
    result = mcp_env.call(OFFSITE, mode=era, elicitation=person)

    envelope = envelope_of(result)
    assert result.is_error is False
    assert envelope["status"] == "ok"
    assert envelope["data"]["method"] == "user_selected"
    assert envelope["data"]["uid"] == "t-offsite-personal"
    assert seen["after"] != seen["before"]
    assert envelope["data"]["etag"] == seen["after"]
    # The person was shown every candidate with its collection, and a way out.
    titles = [o["title"] for o in person.asked[0].requested_schema["properties"]["item_id"]["oneOf"]]
    assert sorted(titles) == ["None of these", "Team offsite planning (personal)", "Team offsite planning (work)"]


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_elicitation__declined_or_cancelled_returns_the_clarification(mcp_env, era, action):
    person = Person(action)
    result = mcp_env.call(OFFSITE, mode=era, elicitation=person)

    envelope = envelope_of(result)
    assert len(person.asked) == 1
    assert result.is_error is False
    assert envelope["status"] == "needs_clarification"
    assert {c["uid"] for c in envelope["data"]["candidates"]} == OFFSITE_UIDS


def test_elicitation__none_of_these_returns_the_clarification(mcp_env):
    person = Person("accept", pick="None of these")
    envelope = envelope_of(mcp_env.call(OFFSITE, elicitation=person))

    assert len(person.asked) == 1
    assert envelope["status"] == "needs_clarification"


def test_elicitation__a_pick_deleted_meanwhile_keeps_the_clarification(mcp_env):
    for collection_id in ("work", "personal"):
        rewrite(mcp_env, collection_id, Spec(f"t-twin-{collection_id}", "Vanishing twin"))
    instance = mcp_env.radicale.instance

    def delete_meanwhile(item_id: str) -> None:
        response = requests.delete(f"{instance.url}{instance.username}/personal/t-twin-personal.ics",
                                   auth=(instance.username, instance.password), timeout=10)
        assert response.status_code in (200, 204)

    try:
        person = Person("accept", pick="(personal", before_answer=delete_meanwhile)
        result = mcp_env.call({"text": "Vanishing twin", "kind": "task"}, elicitation=person)
    finally:
        requests.delete(f"{instance.url}{instance.username}/work/t-twin-work.ics",
                        auth=(instance.username, instance.password), timeout=10)

    envelope = envelope_of(result)
    assert len(person.asked) == 1
    assert result.is_error is False
    assert envelope["status"] == "needs_clarification"
    assert {c["uid"] for c in envelope["data"]["candidates"]} == {"t-twin-work", "t-twin-personal"}


def test_elicitation__a_client_that_fails_to_ask_gets_the_clarification(mcp_env):
    """The client declared elicitation but answers the request with an error (no UI after all)."""
    asked = []

    async def broken(context: Any, params: Any) -> types.ErrorData:
        asked.append(params)
        return types.ErrorData(code=types.INTERNAL_ERROR, message="no dialog available")

    result = mcp_env.call(OFFSITE, elicitation=broken)

    envelope = envelope_of(result)
    assert len(asked) == 1
    assert result.is_error is False
    assert envelope["status"] == "needs_clarification"


def test_elicitation__event_labels_carry_the_start(mcp_env):
    person = Person("decline")
    envelope = envelope_of(mcp_env.call({"text": "design", "kind": "event"}, elicitation=person))

    assert envelope["status"] == "needs_clarification"
    titles = [o["title"] for o in person.asked[0].requested_schema["properties"]["item_id"]["oneOf"]]
    # Seeded two days ahead (tests/support/calendars.py); the label shows the date a person reads.
    day = (NOW + 2 * DAY).strftime("%d %b %Y")
    assert any(t.startswith("Design review (work, ") and day in t for t in titles), titles


def test_elicitation__a_later_occurrence_is_labelled_and_picked_as_shown(mcp_env, era):
    """"sync on <the week after next>": the label names that occurrence (never "next"), and
    accepting answers that same occurrence, not the series' next one."""
    named, next_one = weekly_sync_start(2), weekly_sync_start(0)
    person = Person("accept", pick="Weekly sync")
    envelope = envelope_of(mcp_env.call({"text": f"sync on {named:%Y-%m-%d}", "kind": "event", "time_zone": "UTC"},
                                        mode=era, elicitation=person))

    titles = [o["title"] for o in person.asked[0].requested_schema["properties"]["item_id"]["oneOf"]]
    assert titles[0] == f"Weekly sync (work, on {named:%a %d %b %Y, %H:%M} UTC)"
    assert (envelope["status"], envelope["data"]["method"]) == ("ok", "user_selected")
    occurrence = envelope["data"]["occurrence"]
    assert datetime.fromisoformat(occurrence["start"]) == named != next_one
    assert occurrence["recurrence_id"] is not None


def test_elicitation__the_next_occurrence_is_labelled_next(mcp_env):
    person = Person("decline")
    mcp_env.call({"text": "sync", "kind": "event", "time_zone": "UTC"}, elicitation=person)
    titles = [o["title"] for o in person.asked[0].requested_schema["properties"]["item_id"]["oneOf"]]
    assert titles[0] == f"Weekly sync (work, next {weekly_sync_start(0):%a %d %b %Y, %H:%M} UTC)"


# --- errors ------------------------------------------------------------------------------


def test_errors__unknown_collection_is_a_tool_error(mcp_env):
    result = mcp_env.call({"text": "Draft portfolio outline", "kind": "task", "collection_ids": ["nope"]})

    envelope = envelope_of(result)
    assert result.is_error is True
    assert envelope["status"] == "error"
    assert envelope["error"]["code"] == "collection_not_found"
    assert envelope["error"]["details"] == {"collection_ids": ["nope"], "known_collection_ids": ["bulk", "personal", "work"]}
    assert envelope["error"]["message"] == "Unknown collection ID `nope`; known: bulk, personal, work."


@pytest.mark.parametrize("arguments", [
    {"text": "", "kind": "task"},
    {"text": "   ", "kind": "task"},
    {"text": "x", "kind": "meeting"},
    {"text": 1, "kind": "task"},
    {"text": "x", "kind": "task", "collection_ids": "work"},
    {"text": "x", "kind": "task", "colour": "red"},
    {"kind": "task"},
    {"text": "Design review", "kind": "event", "time_zone": "Mars/Olympus_Mons"},
])
def test_errors__invalid_input_is_a_tool_error(mcp_env, arguments):
    result = mcp_env.call(arguments)

    envelope = envelope_of(result)
    assert result.is_error is True
    assert envelope["error"]["code"] == "invalid_request"
    assert envelope["data"] is None
    assert "Traceback" not in result.content[0].text


def test_errors__unreachable_calendar_says_so_without_secrets(mcp_env):
    broken = McpEnvironment(radicale=mcp_env.radicale, database=mcp_env.database,
                            env={**mcp_env.env, "CALDAV_URL": "http://127.0.0.1:9/", "CALDAV_TIMEOUT": "2"})
    result = broken.call(OFFSITE)

    envelope = envelope_of(result)
    assert result.is_error is True
    assert envelope["error"]["code"] == "calendar_unavailable"
    assert mcp_env.env["CALDAV_PASSWORD"] not in result.content[0].text
    assert "Traceback" not in result.content[0].text


def test_command__unknown_user_exits_2_before_serving(mcp_env):
    completed = subprocess.run([sys.executable, "manage.py", "mcp", "--user", "nobody"], cwd=ROOT,
                               env=mcp_env.env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)

    assert completed.returncode == 2
    assert "No such user" in completed.stderr
    assert completed.stdout == ""


# --- collections, and nothing written ------------------------------------------------------


def test_list_collections__every_collection(mcp_env):
    result = mcp_env.call({}, tool="list_collections")

    envelope = envelope_of(result)
    assert result.is_error is False
    assert [c["collection_id"] for c in envelope["data"]["collections"]] == ["bulk", "personal", "work"]


def test_list_collections__arguments_are_refused(mcp_env):
    result = mcp_env.call({"kind": "task"}, tool="list_collections")

    assert result.is_error is True
    assert envelope_of(result)["error"]["code"] == "invalid_request"


def test_no_writes__every_tool_path_leaves_storage_and_database_unchanged(mcp_env, era):
    before = mcp_env.digests()
    person = Person("accept", pick="(work")

    async def scenario(client: Client) -> list[str]:
        statuses = []
        for arguments in ({"text": "Draft portfolio outline", "kind": "task"}, OFFSITE,
                          {"text": "portfolo", "kind": "task"}, {"text": "bulk chore", "kind": "task"},
                          {"text": "xylophone", "kind": "task"}, {"text": "weekly sync", "kind": "event"},
                          {"text": "x", "kind": "task", "collection_ids": ["nope"]}, {"text": "", "kind": "task"}):
            statuses.append((await client.call_tool("resolve_reference", arguments)).structured_content["status"])
        statuses.append((await client.call_tool("list_collections", {})).structured_content["status"])
        return statuses

    statuses = mcp_env.run(scenario, mode=era, elicitation=person, args=("--user", "agent"))

    assert set(statuses) == {"ok", "needs_clarification", "error"}
    assert person.asked  # the pick path ran too
    assert mcp_env.digests() == before
