"""The page's labels: what a card says about when an item is.

Presentation only: the candidates and their offered occurrences are
resolver.clarifications' (through resolver.services); which date a card
shows, and its words, are resolver.readable's, as for every door.
"""
from __future__ import annotations

from resolver.clarifications import LiveCandidate
from resolver.readable import item_when


def card_when(candidate: LiveCandidate) -> tuple[str, str, str] | None:
    """(label, readable, machine-readable) of what a card shows: the offered occurrence, else due/start."""
    if candidate.item is None:
        return None
    found = item_when(candidate.item, candidate.occurrence, next=candidate.next)
    return (found.label, found.readable, found.iso) if found is not None else None
