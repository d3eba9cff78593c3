"""The semantic signal's test helpers: a few real titles and the real encoder, counting what it encodes.

Shared by tests/domain/test_semantic.py and tests/domain/test_title_vectors.py
(their fixtures `model` and `encoder` are in tests/domain/conftest.py).
"""
from __future__ import annotations

from typing import Any, Sequence

from resolver.domain import semantic
from resolver.domain.items import Item, Kind, make_item


def task(uid: str, title: str) -> Item:
    return make_item(collection_path="/u/home/", uid=uid, title=title, etag=f'"{uid}"', kind=Kind.TASK)


ITEMS = [task("licence", "Führerschein verlängern"), task("toner", "Order toner for the printer"),
         task("lawn", "Mow the backyard"), task("rent", "Pay the rent"), task("bike", "Fix the bike brakes")]


class Counting:
    """The real encoder, counting the texts it was asked to encode."""

    def __init__(self, inner: semantic.MultilingualUSE) -> None:
        self.inner = inner
        self.texts: list[str] = []

    @property
    def name(self) -> str:
        return self.inner.name

    def encode(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return self.inner.encode(texts)
