"""The deployed ranker: the relevance models of the process, one per file (resolver/registry.py),
read once and immutable, and what the deployed one is called in fingerprints.

Thresholds (resolver/thresholds.py) and the evaluation (resolver/evaluation/ranking.py)
both ask here which ranker is deployed; neither asks the services, so the
application layer, the thresholds and the evaluation form no import cycle.
"""
from __future__ import annotations

from typing import Any

from resolver.encoders import semantic_encoder
from resolver.registry import Registry, held


class RelevanceModelRegistry(Registry[str, Any]):
    # A site ranks with one model; an evaluation compares a few.
    capacity = 4

    def create(self, key: str) -> Any:
        # Imported here: numpy loads with the first model, which an exact reference never needs.
        from resolver.domain.relevance import RelevanceModel

        return RelevanceModel.load(key)


def relevance_model() -> Any:
    """The relevance model (shared by the process, read once), or None when RESOLVER["RELEVANCE_MODEL"] is None."""
    from resolver.conf import resolver_settings

    configured = resolver_settings.RELEVANCE_MODEL
    if configured is None:
        return None
    from resolver.domain.relevance import DEFAULT_MODEL

    return held("relevance_models").get(str(configured or DEFAULT_MODEL))


def deployed_retrieval() -> str | None:
    """What chooses the candidates a judge is shown now (None: the fusion rule, the ranker off)."""
    return _deployed("retrieval")


def current_fingerprint() -> str | None:
    """The deployed ranker's fingerprint (the model file and the encoder it reads); None when it is off."""
    return _deployed("fingerprint")


def _deployed(name: str) -> str | None:
    """The deployed model's `name` (retrieval or fingerprint) with the encoder it reads; None when it is off."""
    model = relevance_model()
    if model is None:
        return None
    encoder = semantic_encoder()
    return getattr(model, name)(encoder.name if encoder is not None else None)  # type: ignore[no-any-return]
