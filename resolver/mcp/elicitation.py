"""The question an ambiguous reference puts to the person, and reading their answer.

Built from the clarification envelope alone (titles, collections, due/start or
occurrence), so the person sees what the agent would have seen. Nothing here
reads the calendar: the door re-reads the chosen item through the service.
"""
from __future__ import annotations

from typing import Any, Collection

from resolver.domain.codes import WarningCode
from resolver.readable import candidate_label

FIELD = "item_id"
NONE_OF_THESE = "none"


def message(envelope: dict[str, Any]) -> str:
    prompt = envelope["data"]["questions"][0]["prompt"]
    for code in WarningCode:
        # The warnings a person choosing needs to know of, in their words (the others are for programs).
        if code.note and any(w.get("code") == code for w in envelope.get("warnings", [])):
            prompt += " " + code.note
    return f"{prompt} Choose one, or \"None of these\"."


def requested_schema(envelope: dict[str, Any], *, next_ids: Collection[str] = ()) -> dict[str, Any]:
    """A form with one single-select field: the candidates' item IDs, titled for people.

    `next_ids`: the events whose offered occurrence is their next one.
    """
    options = [{"const": c["item_id"], "title": label(c, next=c["item_id"] in next_ids)}
               for c in envelope["data"]["candidates"]]
    options.append({"const": NONE_OF_THESE, "title": "None of these"})
    return {
        "type": "object",
        "properties": {FIELD: {"type": "string", "title": "Which one do you mean?", "oneOf": options}},
        "required": [FIELD],
    }


def chosen_item_id(action: str, content: dict[str, Any] | None, envelope: dict[str, Any]) -> str | None:
    """The candidate the person accepted, or None (declined, cancelled, none of these, not offered)."""
    if action != "accept" or not content:
        return None
    value = content.get(FIELD)
    offered = {c["item_id"] for c in envelope["data"]["candidates"]}
    return value if isinstance(value, str) and value in offered else None


def label(candidate: dict[str, Any], *, next: bool = False) -> str:
    """`Title (collection, due Tue 05 May 2026)`: what tells two same-titled items apart.

    An event shows the occurrence it offers: "next" only when that is its next
    one, "on" for another (a series named for a later date), "starts" for a
    single event. The judge's suggestion is marked. The words are every door's
    (resolver/readable.py).
    """
    return candidate_label(candidate, next=next)
