"""The MCP tools: their descriptions for models, and thin doors over the application layer.

Each call parses the arguments, calls one service function (in a worker
thread: the services are synchronous and use the ORM), and renders the
envelope as the tool's structured result. An ambiguous reference is put to the
person through elicitation when the client can ask them; never to the model.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from resolver import services
from resolver.domain.errors import CandidateGone, InvalidRequest, NotACandidate
from resolver.domain.pipeline import Status
from resolver.mcp import elicitation, schemas

RESOLVE = "resolve_reference"
LIST_COLLECTIONS = "list_collections"
# The key of the person's answer in a 2026-07-28 (multi-round-trip) retry.
PICK = "pick"
_REQUEST_ID = re.compile(r"req_[0-9a-f]{32}")

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
  candidate's item_id as `text` (an exact match). With no candidates, ask the person to
  rephrase or name the collection.
- A tool error carries the error envelope: error.code is stable (invalid_request,
  collection_not_found, calendar_unavailable, internal_error); fix the input or report it.
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
    text = json.dumps(envelope, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=envelope, is_error=is_error)


@dataclass(frozen=True)
class Tools:
    """The tools of one server process; `user_id`/`site_url` bind clarification links (`--user`)."""

    user_id: object = None
    site_url: str = ""

    async def call(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        request_id = _echoed_request_id(params.request_state) or services.new_request_id()
        try:
            if params.name == RESOLVE:
                return await self._resolve(ctx, params, request_id)
            if params.name == LIST_COLLECTIONS:
                if params.arguments:
                    raise InvalidRequest("list_collections takes no arguments.",
                                         details={"fields": {n: ["Unknown field."] for n in params.arguments}})
                envelope = await anyio.to_thread.run_sync(lambda: services.collections_envelope(request_id=request_id))
                return result(envelope)
            raise InvalidRequest(f"No tool {params.name!r}.", details={"field": "name"})
        except Exception as err:  # every failure is the documented envelope, never a traceback
            return result(services.error_envelope_for(err, request_id=request_id), is_error=True)

    async def _resolve(self, ctx: Any, params: types.CallToolRequestParams,
                       request_id: str) -> types.CallToolResult | types.InputRequiredResult:
        arguments = params.arguments or {}
        outcome, envelope = await anyio.to_thread.run_sync(lambda: self._resolve_sync(arguments, request_id))
        if outcome.status is not Status.NEEDS_CLARIFICATION or not outcome.candidates or not _can_elicit(ctx):
            return result(envelope)
        answers = params.input_responses or {}
        if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            # 2026-07-28: no server-to-client request; the client asks the person and calls
            # again with the answer. Nothing is kept here between the rounds: the retry
            # resolves afresh and the answer must name one of its candidates.
            if PICK not in answers:
                return types.InputRequiredResult(input_requests={PICK: _question(envelope)}, request_state=request_id)
            answer = answers[PICK]
        else:
            question = _question(envelope).params
            try:
                answer = await ctx.session.elicit_form(question.message, question.requested_schema,
                                                       related_request_id=ctx.request_id)
            except Exception:  # the client could not ask after all: the agent must
                return result(envelope)
        if not isinstance(answer, types.ElicitResult):
            return result(envelope)
        item_id = elicitation.chosen_item_id(answer.action, answer.content, envelope)
        if item_id is None:
            return result(envelope)
        return await anyio.to_thread.run_sync(lambda: self._select_sync(outcome, envelope, item_id, arguments))

    def _resolve_sync(self, arguments: dict[str, Any], request_id: str) -> tuple[Any, dict[str, Any]]:
        outcome = services.resolve_document(arguments, request_id=request_id, door="mcp")
        url = None
        if self.user_id is not None:
            url = services.clarification_url(outcome, user_id=self.user_id, base_url=self.site_url)
        return outcome, services.envelope_for(outcome, clarification_url=url)

    def _select_sync(self, outcome: Any, envelope: dict[str, Any], item_id: str,
                     arguments: dict[str, Any]) -> types.CallToolResult:
        try:
            picked = services.select_item(
                item_id=item_id, kind=outcome.kind, candidate_ids=[c.item_id for c in outcome.candidates],
                collection_ids=outcome.collection_ids, request_id=outcome.request_id,
                time_zone=arguments.get("time_zone"), door="mcp",
            )
        except (NotACandidate, CandidateGone):
            # Deleted or completed while the person chose: the clarification stands.
            return result(envelope)
        return result(services.envelope_for(picked))


def _question(envelope: dict[str, Any]) -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(
        message=elicitation.message(envelope), requested_schema=elicitation.requested_schema(envelope)))


def _can_elicit(ctx: Any) -> bool:
    """The client declared form elicitation (an empty `elicitation` object means form)."""
    capabilities = ctx.session.client_capabilities
    declared = capabilities.elicitation if capabilities is not None else None
    if declared is None:
        return False
    return declared.form is not None or declared.url is None


def _echoed_request_id(state: str | None) -> str | None:
    # Only our own format is taken back: the state travels through the client.
    return state if isinstance(state, str) and _REQUEST_ID.fullmatch(state) else None
