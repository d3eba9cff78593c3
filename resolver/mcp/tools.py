"""The MCP tools: their descriptions for models, and thin doors over the application layer.

Each call parses the arguments, calls one service function (in a worker
thread: the services are synchronous and use the ORM), and renders the
envelope as the tool's structured result. An ambiguous reference is put to the
person through elicitation when the client can ask them; never to the model.

A tool call is one request: one of the person's places in flight, and one
deadline for every step in it (a 2026-07-28 retry's pick, then resolving
afresh when the pick no longer stands). Only a pick made after the person
answered a question asked mid-call starts a deadline of its own: the time
they took to answer is theirs, not the request's.
"""
from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from resolver import deadline, jsonbound, services
from resolver.domain.errors import CandidateGone, InvalidRequest, NotACandidate, OccurrenceGone, ResolverError
from resolver.domain.escaping import json_text
from resolver.domain.pipeline import Status
from resolver.mcp import elicitation, schemas
from resolver.request_ids import new_request_id

RESOLVE = "resolve_reference"
LIST_COLLECTIONS = "list_collections"
# The key of the person's answer in a 2026-07-28 (multi-round-trip) retry.
PICK = "pick"

RESOLVE_DESCRIPTION = """\
Find the one live task or calendar event a person means by an informal reference, before you act on it.

A reference is what the person said: a title or part of one ("finish portfolio outline",
"dentist thing"), possibly with typos, or an exact item_id/UID. `kind` is "task" or "event".
The tool reads the CalDAV calendar live and NEVER writes anything: calling it again is safe.

Result (structured content, an envelope):
- status "ok": data.item_id, data.href (the resource's path on the calendar server) and
  data.etag identify the item as it is now. To change or delete it, send your write to
  data.href with the header `If-Match: <data.etag>`; a 412 answer means the item changed
  since: call this tool again before retrying. Never build an href from the UID.
- status "needs_clarification": the reference is ambiguous or matched nothing; data.reason
  says why and data.candidates lists the possible items. If your client supports
  elicitation, the person has already been asked and declined to choose. Either way you
  MUST NOT pick a candidate yourself: show the candidates (title, collection, due/start)
  to the person, ask which one they mean, then call this tool again with the chosen
  candidate's item_id as `text` (an exact match). For an event, the person chose the
  candidate's `occurrence` (shown to them): act on that occurrence's recurrence_id, since
  an exact item_id answers the series' next occurrence. With no candidates, ask the
  person to rephrase or name the collection.
- A tool error carries the error envelope: error.code is stable (invalid_request,
  collection_not_found, calendar_unavailable, internal_error); fix the input or report it.
  error.code "throttled" means too many of the person's requests at once or in a minute:
  wait error.details.retry_after_seconds, then call again.
"""

COLLECTIONS_DESCRIPTION = """\
List the calendar collections a reference can be searched in (collection_id and display name),
for the optional `collection_ids` of resolve_reference. Reads the calendar live; never writes.
"""

# Said for models; the constraints themselves come from the OpenAPI document.
_ARGUMENT_DESCRIPTIONS = {
    "text": "The person's reference as they said it, or an exact item_id or UID.",
    "kind": "task or event.",
    "collection_ids": "Search only these collections (see list_collections); all when omitted.",
    "time_zone": "The person's IANA time zone (e.g. Europe/Berlin): \"tomorrow\", \"at 9\" and floating "
                 "calendar times are read in it. Pass it whenever you know it.",
    "language": "The language the person wrote in (en, de, fr, es, or a Snowball name such as german): "
                "\"morgen\", \"demain\" and \"mañana\" are read in it. Omit it for the server's default.",
}

_READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                                   open_world_hint=False)


def _described(schema: dict[str, Any]) -> dict[str, Any]:
    properties = {
        # The API's help texts speak of URLs and settings; a model needs the words below.
        name: {**prop, "description": _ARGUMENT_DESCRIPTIONS.get(name) or prop.get("description", "")}
        for name, prop in schema.get("properties", {}).items()
    }
    return {**schema, "properties": properties}


def tool_list() -> list[types.Tool]:
    return [
        types.Tool(name=RESOLVE, title="Resolve a reference to one task or event",
                   description=RESOLVE_DESCRIPTION, input_schema=_described(schemas.resolve_input()),
                   output_schema=schemas.resolve_output(), annotations=_READ_ONLY),
        types.Tool(name=LIST_COLLECTIONS, title="List calendar collections",
                   description=COLLECTIONS_DESCRIPTION, input_schema=schemas.collections_input(),
                   output_schema=schemas.collections_output(), annotations=_READ_ONLY),
    ]


def result(envelope: dict[str, Any], *, is_error: bool = False) -> types.CallToolResult:
    # The text block repeats the envelope for clients that show only text content.
    # No raw C1 or bidi control in it (resolver/domain/escaping.py): a client may print it.
    text = json_text(envelope)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=envelope, is_error=is_error)


@dataclass(frozen=True)
class Tools:
    """The tools of one server process, for one caller (`--user` binds clarification links to a user)."""

    caller: services.Caller = services.Caller(door="mcp")

    async def call(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        request_id = new_request_id()
        try:
            # The transports cut a message deeper than the bound allows (resolver/jsonbound.py),
            # leaving it one level too deep: refused here, as at every door.
            jsonbound.check_value(params.arguments or {})
            async with _one_request(self.caller):
                return await self._call(ctx, params, request_id)
        except Exception as err:  # every failure is the documented envelope, never a traceback
            return result(services.error_envelope_for(err, request_id=request_id), is_error=True)

    async def _call(self, ctx: Any, params: types.CallToolRequestParams,
                    request_id: str) -> types.CallToolResult | types.InputRequiredResult:
        if params.name == RESOLVE:
            return await self._resolve(ctx, params, request_id)
        if params.name == LIST_COLLECTIONS:
            if params.arguments:
                raise InvalidRequest("list_collections takes no arguments.",
                                     details={"fields": {n: ["Unknown field."] for n in params.arguments}})
            envelope = await anyio.to_thread.run_sync(
                lambda: services.collections_envelope(request_id=request_id, caller=self.caller))
            return result(envelope)
        raise InvalidRequest(f"No tool {params.name!r}.", details={"field": "name"})

    async def _resolve(self, ctx: Any, params: types.CallToolRequestParams,
                       request_id: str) -> types.CallToolResult | types.InputRequiredResult:
        arguments = params.arguments or {}
        answers = params.input_responses or {}
        modern = _can_elicit(ctx) and ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS
        if modern and PICK in answers and isinstance(params.request_state, str):
            # 2026-07-28, second round: the state is the clarification's signed token, so
            # the pick is of exactly what the first round offered (items and occurrences).
            picked = await anyio.to_thread.run_sync(lambda: self._pick_from_state(params.request_state, answers[PICK]))
            if picked is not None:
                return picked
        answer = await anyio.to_thread.run_sync(
            lambda: services.answer(arguments, caller=self.caller, request_id=request_id))
        envelope = answer.envelope
        if answer.status is not Status.NEEDS_CLARIFICATION or not answer.outcome.candidates or not _can_elicit(ctx):
            return result(envelope)
        if modern and PICK in answers:
            # Answered, but not with a pick that still stands: the (fresh) clarification, asked no more.
            return result(envelope)
        if modern:
            # No server-to-client request: the client asks the person and calls again
            # with the answer and this state. Nothing is kept here between the rounds.
            return types.InputRequiredResult(input_requests={PICK: _question(answer)}, request_state=answer.token)
        question = _question(answer).params
        try:
            reply = await ctx.session.elicit_form(question.message, question.requested_schema,
                                                  related_request_id=ctx.request_id)
        except Exception:  # the client could not ask after all: the agent must
            return result(envelope)
        item_id = _chosen(reply, envelope)
        if item_id is None:
            return result(envelope)
        assert answer.claims is not None
        claims = answer.claims

        def pick_now() -> types.CallToolResult:
            # After the person's answer: a new step with its own budget (module docstring).
            with deadline.starting(deadline.configured_seconds()):
                return self._pick(claims, item_id) or result(envelope)

        return await anyio.to_thread.run_sync(pick_now)

    def _pick_from_state(self, state: str, reply: Any) -> types.CallToolResult | None:
        """The second round's pick, or None: resolve afresh (a stale or foreign state, no choice, gone)."""
        try:
            claims = services.read_clarification(state, caller=self.caller)
        except ResolverError:
            return None
        offered = {"data": {"candidates": [{"item_id": i} for i in claims.candidate_ids]}}
        item_id = _chosen(reply, offered)
        return None if item_id is None else self._pick(claims, item_id)

    def _pick(self, claims: Any, item_id: str) -> types.CallToolResult | None:
        try:
            return result(services.pick(claims, item_id=item_id, caller=self.caller).envelope)
        except (NotACandidate, CandidateGone, OccurrenceGone):
            # Deleted, completed or its occurrence over while the person chose: the clarification stands.
            return None


@contextlib.asynccontextmanager
async def _one_request(caller: services.Caller) -> AsyncIterator[deadline.Deadline]:
    """services.request for a coroutine: the place taken in a worker thread (the cache may be remote),
    the deadline set in this task, so every worker thread the call uses sees it."""
    with contextlib.ExitStack() as places:
        await anyio.to_thread.run_sync(places.enter_context, services.in_flight(caller))
        try:
            with deadline.budget() as opened:
                yield opened
        finally:
            await anyio.to_thread.run_sync(places.close)


def _chosen(reply: Any, envelope: dict[str, Any]) -> str | None:
    if not isinstance(reply, types.ElicitResult):
        return None
    return elicitation.chosen_item_id(reply.action, reply.content, envelope)


def _question(answer: services.Answer) -> types.ElicitRequest:
    next_ids = services.next_occurrence_ids(answer.outcome)
    return types.ElicitRequest(params=types.ElicitRequestFormParams(
        message=elicitation.message(answer.envelope),
        requested_schema=elicitation.requested_schema(answer.envelope, next_ids=next_ids)))


def _can_elicit(ctx: Any) -> bool:
    """The client declared form elicitation (an empty `elicitation` object means form)."""
    capabilities = ctx.session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else None
    if declared is None:
        return False
    return declared.form is not None or declared.url is None
