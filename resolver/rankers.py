"""The relevance models of the process, one per file (resolver/registry.py): read once, immutable."""
from __future__ import annotations

from typing import Any

from resolver.registry import Registry


class RelevanceModelRegistry(Registry[str, Any]):
    # A site ranks with one model; an evaluation compares a few.
    capacity = 4

    def create(self, key: str) -> Any:
        # Imported here: numpy loads with the first model, which an exact reference never needs.
        from resolver.domain.relevance import RelevanceModel

        return RelevanceModel.load(key)
