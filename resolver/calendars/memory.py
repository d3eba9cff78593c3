"""An in-memory calendar for unit and property tests: same contract, no server."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from typing import Sequence

from resolver.domain.ports import FetchResult
from resolver.domain.errors import CollectionNotFound
from resolver.domain.items import Collection, Item, Kind
from resolver.domain.matching import MatchingMemo


@dataclass
class MemoryCalendar:
    """Holds live items, and apart from them closed ones (liveness is the real backend's job), built typed
    (`Item.due`, `Item.start`).

    The items' times do not depend on the zone, so `time_zone` only has to be one.
    """

    items: list[Item] = field(default_factory=list)
    # Completed or cancelled items, returned as FetchResult.closed (never candidates).
    closed: list[Item] = field(default_factory=list)
    extra_collections: tuple[str, ...] = ()
    # What matching remembers of these items between requests (title indexes, title vectors).
    memo: MatchingMemo = field(default_factory=MatchingMemo, repr=False, compare=False)

    def collections(self) -> list[Collection]:
        ids = sorted({item.collection_id for item in self.items + self.closed} | set(self.extra_collections))
        return [Collection(collection_id=cid, url_path=f"/user/{cid}/", display_name=cid) for cid in ids]

    def fetch(self, *, kind: Kind, collection_ids: Sequence[str] | None,
              time_zone: tzinfo) -> FetchResult:
        if not isinstance(time_zone, tzinfo):
            raise TypeError("time_zone is a tzinfo, parsed at the request boundary")
        known = [c.collection_id for c in self.collections()]
        wanted = list(dict.fromkeys(collection_ids)) if collection_ids else known
        unknown = [cid for cid in wanted if cid not in known]
        if unknown:
            raise CollectionNotFound("Unknown collection ID.", details={"collection_ids": unknown})
        chosen = set(wanted)
        items = tuple(i for i in self.items if i.kind is kind and i.collection_id in chosen)
        closed = tuple(i for i in self.closed if i.kind is kind and i.collection_id in chosen)
        return FetchResult(items=items, requests=0, collections_searched=tuple(wanted),
                           read_at=datetime.now(timezone.utc), memo=self.memo, closed=closed)
