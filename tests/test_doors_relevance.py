"""The relevance model through every door: a reference to nothing answers `no_candidates`, and an approved
threshold for the model resolves with its provenance; without one, a clarification as before."""
from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import mcp_types as types
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone as django_timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from resolver import services
from resolver.domain.items import Item, Kind, make_item
from resolver.mcp.tools import RESOLVE, Tools
from resolver.models import ApprovedThreshold
from tests.support import memory_backend
from tests.support.commands import run_resolve

pytestmark = pytest.mark.django_db

NOTHING = "rent a canoe for saturday"


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    """Words alone: utility 6 x the matcher's score, P(none) = logistic(3 - 6 x the best), floor 0.3
    (tests/test_pipeline_ranker.py)."""
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"name": "doors-ranker", "variants": {"words": {
        "features": ["lex_score"], "weights": [6.0], "temperature": 1.0, "floor": 0.3,
        "none": {"features": ["best_lex"], "weights": [-6.0], "bias": 3.0}}}}))
    return path


@pytest.fixture
def memory(settings, model_file):
    settings.RESOLVER = {"CALENDAR_BACKEND": memory_backend.PATH, "RELEVANCE_MODEL": str(model_file),
                         "SEMANTIC": False}
    memory_backend.CALENDAR.items = [
        make_item(collection_path="/demo/personal/", uid="dentist", title="Dentist appointment", etag='"e1"',
                  kind=Kind.TASK, href="/demo/personal/dentist.ics"),
        make_item(collection_path="/demo/personal/", uid="plumber", title="Call the plumber", etag='"e2"',
                  kind=Kind.TASK, href="/demo/personal/plumber.ics"),
    ]
    memory_backend.CALENDAR.closed = [
        make_item(collection_path="/demo/personal/", uid="rice", title="Buy rice", etag='"e3"', kind=Kind.TASK,
                  href="/demo/personal/rice.ics", status="COMPLETED"),
    ]
    yield memory_backend.CALENDAR
    memory_backend.CALENDAR.items = []
    memory_backend.CALENDAR.closed = []


@pytest.fixture
def approved(memory):
    """The model's threshold, proposed and approved as staff would (manage.py thresholds approve)."""
    model = services.relevance_model()
    staff = get_user_model().objects.create_user("staff", is_staff=True)
    return ApprovedThreshold.objects.create(
        model=model.scorer_name(None), fingerprint=model.fingerprint(None), backend="ranker",
        probability_source="model", threshold=0.6, cases=400, admitted_accuracy=1.0, coverage=0.6,
        evaluated_at=django_timezone.now() - timedelta(minutes=1), active=True, approved_by=staff,
        approved_at=django_timezone.now())


def _api(text: str) -> dict:
    user = get_user_model().objects.create_user(f"api-{len(text)}-{abs(hash(text)) % 10_000}")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client.post("/v1/resolve", data=json.dumps({"text": text, "kind": "task"}),
                       content_type="application/json").json()


def _command(text: str) -> tuple[int, dict]:
    code, out, _ = run_resolve("--text", text, "--kind", "task", "--json")
    return code, json.loads(out)


def _mcp(text: str) -> dict:
    ctx = SimpleNamespace(session=SimpleNamespace(client_capabilities=None, protocol_version="2025-11-25"))
    params = types.CallToolRequestParams(name=RESOLVE, arguments={"text": text, "kind": "task"})
    return asyncio.run(Tools().call(ctx, params)).structured_content


def _page(text: str) -> str:
    client = Client()
    client.force_login(get_user_model().objects.create_user(f"page-{abs(hash(text)) % 10_000}"))
    response = client.post("/resolve/", {"text": text, "kind": "task", "collections": ""})
    if response.status_code in (302, 303):  # a clarification: its page
        response = client.get(response["Location"])
    return response.content.decode()


def test_doors__a_reference_to_nothing_is_no_candidates_everywhere(memory):
    assert _api(NOTHING)["data"]["reason"] == "no_candidates"
    code, envelope = _command(NOTHING)
    assert (code, envelope["data"]["reason"], envelope["data"]["candidates"]) == (3, "no_candidates", [])
    assert _mcp(NOTHING)["data"]["reason"] == "no_candidates"
    page = _page(NOTHING)
    assert "Nothing in your calendars matches your reference." in page and 'name="item_id"' not in page


def _named(envelope: dict, code: str) -> list:
    """The items each warning `code` of the envelope names."""
    return [w["details"]["items"] for w in envelope["warnings"] if w["code"] == code]


def _with_a_concert(memory) -> Item:
    """An event, "Piano concert", beside the tasks."""
    concert = make_item(collection_path="/demo/personal/", uid="concert", title="Piano concert", etag='"e4"',
                        kind=Kind.EVENT, href="/demo/personal/concert.ics")
    memory.items = memory.items + [concert]
    return concert


def test_doors__a_done_tasks_title_is_no_candidates_naming_it_everywhere(memory):
    """"buy rice" when "Buy rice" is completed: nothing offered, and the warning names the done task."""
    def closed(envelope: dict) -> list:
        return _named(envelope, "closed_item_matched")

    expected = [[{"item_id": memory.closed[0].item_id, "title": "Buy rice", "status": "COMPLETED",
                  "collection_id": "personal"}]]
    api = _api("buy rice")
    assert (api["data"]["reason"], api["data"]["candidates"], closed(api)) == ("no_candidates", [], expected)
    assert "completed or cancelled" in api["data"]["questions"][0]["prompt"]
    code, envelope = _command("buy rice")
    assert (code, envelope["data"]["reason"], closed(envelope)) == (3, "no_candidates", expected)
    assert closed(_mcp("buy rice")) == expected
    page = _page("buy rice")
    assert "Nothing in your calendars matches your reference." in page and 'name="item_id"' not in page
    assert "Your reference names <bdi><q>Buy rice</q></bdi>, completed." in page


def test_doors__an_events_title_asked_as_a_task_is_no_candidates_naming_the_event_everywhere(memory):
    """"piano concert" asked as a task, when "Piano concert" is an event: nothing offered, the event named."""
    concert = _with_a_concert(memory)

    def other(envelope: dict) -> list:
        return _named(envelope, "other_kind_matched")

    expected = [[{"item_id": concert.item_id, "title": "Piano concert", "kind": "event",
                  "collection_id": "personal"}]]
    api = _api("piano concert")
    assert (api["data"]["reason"], api["data"]["candidates"], other(api)) == ("no_candidates", [], expected)
    assert "it names an event" in api["data"]["questions"][0]["prompt"]
    code, envelope = _command("piano concert")
    assert (code, envelope["data"]["reason"], other(envelope)) == (3, "no_candidates", expected)
    assert other(_mcp("piano concert")) == expected
    page = _page("piano concert")
    assert 'name="item_id"' not in page
    assert "Your reference names <bdi><q>Piano concert</q></bdi>, an event. Only open tasks can be chosen." in page


def test_doors__with_the_other_kind_off_an_events_title_is_not_named(memory, settings):
    _with_a_concert(memory)
    settings.RESOLVER = {**settings.RESOLVER, "OTHER_KIND": False}
    api = _api("piano concert")
    assert api["data"]["reason"] == "no_candidates" and _named(api, "other_kind_matched") == []


def test_doors__the_page_names_a_done_item_read_again_and_escaped(memory):
    """The token carries the done item's ID only; the page reads its title again, HTML-escaped, and says
    nothing once the item is no longer done."""
    memory.closed = [dataclasses.replace(memory.closed[0], title="Buy <b>rice</b>")]
    client = Client()
    client.force_login(get_user_model().objects.create_user("page-done"))
    location = client.post("/resolve/", {"text": "Buy <b>rice</b>", "kind": "task", "collections": ""})["Location"]
    page = client.get(location).content.decode()
    assert "Your reference names <bdi><q>Buy &lt;b&gt;rice&lt;/b&gt;</q></bdi>, completed." in page
    assert "rice" not in location  # IDs only in the token, never a title
    memory.closed = []
    assert "Your reference names" not in client.get(location).content.decode()


WEAK = "call mum about the weekend"


def test_doors__a_weak_word_match_is_not_offered_everywhere(memory):
    """'call' is in 'Call the plumber', so the model weighs it (unlike NOTHING, which no word finds), and gives
    it 0.25: under the floor, not offered, through every door."""
    api = _api(WEAK)
    assert (api["data"]["reason"], api["data"]["candidates"]) == ("no_candidates", [])
    assert api["data"]["questions"][0]["prompt"].startswith("Nothing in your calendars matches this reference.")
    code, envelope = _command(WEAK)
    assert (code, envelope["data"]["reason"], envelope["data"]["candidates"]) == (3, "no_candidates", [])
    mcp = _mcp(WEAK)
    assert (mcp["data"]["reason"], mcp["data"]["candidates"]) == ("no_candidates", [])
    page = _page(WEAK)
    assert "Nothing in your calendars matches your reference." in page and 'name="item_id"' not in page
    assert "Call the plumber" not in page


@pytest.mark.django_db(transaction=True)  # the MCP door reads the thresholds from its worker thread
def test_doors__without_an_approved_threshold_a_clarification_everywhere(memory):
    def check(envelope: dict) -> None:
        assert (envelope["status"], envelope["data"]["reason"]) == ("needs_clarification", "single_candidate")
        assert [c["uid"] for c in envelope["data"]["candidates"]] == ["dentist"]
        assert envelope["data"]["method"] is None and envelope["data"]["judgment_provenance"] is None

    check(_api("the dentist"))
    code, envelope = _command("the dentist")
    assert code == 3
    check(envelope)
    check(_mcp("the dentist"))
    page = _page("the dentist")
    assert 'name="item_id"' in page and "Dentist appointment" in page and "Item found" not in page


@pytest.mark.django_db(transaction=True)  # the MCP door reads the thresholds from its worker thread
def test_doors__an_approved_threshold_resolves_with_provenance_everywhere(approved):
    def check(envelope: dict) -> None:
        assert envelope["status"] == "ok" and envelope["data"]["uid"] == "dentist"
        assert envelope["data"]["method"] == "semantic"
        provenance = envelope["data"]["judgment_provenance"]
        assert provenance["backend"] == "ranker" and provenance["model"] == approved.model
        assert provenance["fingerprint"] == approved.fingerprint
        assert provenance["threshold"] == 0.6 and provenance["threshold_id"] == approved.pk
        assert provenance["probability"] >= 0.6 > provenance["runner_up_probability"]

    api = _api("the dentist")
    check(api)
    code, envelope = _command("the dentist")
    assert code == 0
    check(envelope)
    check(_mcp("the dentist"))
    page = _page("the dentist")
    assert "/demo/personal/dentist.ics" in page and 'name="item_id"' not in page
    # The page names what chose it and what allowed it, as the envelope's provenance does.
    assert 'data-method="semantic">The built-in ranker chose it' in page and "The judge chose it" not in page
    probability = api["data"]["judgment_provenance"]["probability"]
    assert f'<span data-field="probability">{probability:.3f}</span>' in page
    assert '<span data-field="threshold">0.600</span>' in page
    assert f'<span data-field="threshold_id">#{approved.pk}</span>' in page
    assert f'<code data-field="model">{approved.model}</code>' in page


def test_doors__a_threshold_for_another_model_file_does_not_apply(approved, settings, tmp_path):
    """The same weights under another name: another fingerprint, so the approval does not carry over."""
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"name": "doors-ranker-2", "variants": {"words": {
        "features": ["lex_score"], "weights": [6.0], "temperature": 1.0, "floor": 0.3,
        "none": {"features": ["best_lex"], "weights": [-6.0], "bias": 3.0}}}}))
    settings.RESOLVER = {**settings.RESOLVER, "RELEVANCE_MODEL": str(other)}
    assert _api("the dentist")["status"] == "needs_clarification"


@pytest.mark.django_db(transaction=True)  # the MCP door reads the thresholds from its worker thread
def test_doors__a_word_swapped_is_asked_and_said_everywhere(approved):
    """"buy almond milk" when the calendar holds "Buy soy milk": the approved threshold would resolve it, and every
    door asks instead, with the warning that says which words differ."""
    memory_backend.CALENDAR.items = [*memory_backend.CALENDAR.items, make_item(
        collection_path="/demo/personal/", uid="soy", title="Buy soy milk", etag='"e4"', kind=Kind.TASK,
        href="/demo/personal/soy.ics")]
    swapped = {"reference_word": "almond", "title_word": "soy"}

    def check(envelope: dict) -> None:
        assert (envelope["status"], envelope["data"]["reason"]) == ("needs_clarification", "single_candidate")
        assert [c["uid"] for c in envelope["data"]["candidates"]] == ["soy"]
        found = [w for w in envelope["warnings"] if w["code"] == "word_swapped"]
        assert [w["details"] for w in found] == [{**swapped, "item_id": envelope["data"]["candidates"][0]["item_id"]}]

    check(_api("buy almond milk"))
    code, envelope = _command("buy almond milk")
    assert code == 3
    check(envelope)
    check(_mcp("buy almond milk"))
    page = _page("buy almond milk")
    assert 'name="item_id"' in page and "Buy soy milk" in page
    # The title's own words resolve under the same threshold.
    assert _api("buy the soy milk")["data"]["uid"] == "soy"
