"""The process memory of collections whose server failed on its own time-range filter."""
from __future__ import annotations

from resolver.calendars.caldav import _FilterMemory


def test_a_collection_is_remembered_for_its_time_then_asked_again():
    memory = _FilterMemory()
    key = ("http://dav/", "alice", "http://dav/alice/work/")
    assert not memory.unsafe(key)
    memory.remember(key, 3600)
    assert memory.unsafe(key)
    # Another account or collection on the same server is not affected.
    assert not memory.unsafe(("http://dav/", "bob", "http://dav/alice/work/"))
    assert not memory.unsafe(("http://dav/", "alice", "http://dav/alice/home/"))
    memory.remember(key, 0)  # expired at once: the filter is tried again
    assert not memory.unsafe(key)
    memory.remember(key, 3600)
    memory.clear()
    assert not memory.unsafe(key)
