"""One read for everyone who needs it: concurrent requests for the same collections share a read.

Agents call tools in parallel, and each call used to read the server itself:
four calls at once on one 1,000-task account on Radicale took 5.5 to 9 times
one call alone, the reads contending for the same server. `Flights.join(key,
read)` gives each key at most one read in flight plus one queued:

- a request that finds no read of its key in flight starts one;
- a request that finds one in flight joins the queued read (creating it when
  there is none), which starts when the one in flight ends;
- so every answer was read after its request arrived (a read never serves a
  request that arrived once it had started: its `read_at` is later than every
  waiter's arrival), and a burst costs about two reads, not one per request.

The read runs on a thread of the registry's pool (`ReadPool`), not on a
waiter's: each waiter waits at most until its own deadline and then gets the
`timeout` error alone, while the read goes on for the others under the latest
deadline among them (fixed when it starts: nobody joins a read in flight). A
read whose waiters have all given up before it starts is not sent. A failure
reaches every waiter as an error object of its own (copied), never one
exception object raised in several threads at once.

What the waiters do with the result (building items for their own window,
matching) runs in their own threads, in parallel: nothing here holds a lock
while a read runs. Memory: one result per read, shared; a key's entry is
dropped when its last read ends. Each process keeps its own flights: a fleet
of W workers sends at most W reads of a collection at once (docs/performance.md).
"""
from __future__ import annotations

import contextvars
import copy
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Generic, Hashable, TypeVar

from resolver import deadline
from resolver.calendars.caldav.http import unavailable

logger = logging.getLogger("resolver.calendars")

T = TypeVar("T")

# Reads one process runs at once, all accounts together (ReadPool). A request
# thread never reads itself: with more reads waiting, each waits its turn under
# its waiters' deadlines.
DEFAULT_POOL_THREADS = 16


class ReadPool:
    """The threads reads run on: a few, kept, so each keeps its connections (http.DAVClient is per thread)."""

    def __init__(self, threads: int = DEFAULT_POOL_THREADS) -> None:
        self.threads = threads
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, work: Callable[[], None]) -> None:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix="caldav-read")
            executor = self._executor
        # A fresh context: no waiter's deadline (or request log) is the read's.
        executor.submit(contextvars.Context().run, work)

    def shutdown(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=False)


class _Flight(Generic[T]):
    """One read and the requests waiting for it."""

    def __init__(self, read: Callable[[], T]) -> None:
        self.read = read
        self.done = threading.Event()
        self.waiters = 0
        # Each waiter's deadline (time.monotonic()), None for one without.
        self.ends: list[float | None] = []
        self.result: T | None = None
        self.error: BaseException | None = None
        self.started: float | None = None


def own_copy(error: BaseException) -> BaseException:
    """An exception object of the waiter's own, equal in type, message and details."""
    try:
        mine = copy.copy(error)
    except Exception:  # an exception that cannot be copied: a plain one in its place
        return unavailable("unreachable")
    mine.__traceback__ = None
    if hasattr(error, "details"):
        mine.details = dict(error.details)  # type: ignore[attr-defined]
    return mine


class Flights:
    """Per key, at most one read in flight and one queued (module docstring). One per reader."""

    def __init__(self, pool: ReadPool) -> None:
        self._pool = pool
        self._lock = threading.Lock()
        self._running: dict[Hashable, _Flight[Any]] = {}
        self._queued: dict[Hashable, _Flight[Any]] = {}
        # Reads started, all keys (tests and benchmarks count them).
        self.started = 0

    def join(self, key: Hashable, read: Callable[[], T], *, where: str = "") -> T:
        """The result of a read of `key` started after this call began (module docstring)."""
        left = deadline.remaining()
        end = None if left is None else time.monotonic() + left
        with self._lock:
            flight = self._running.get(key)
            start = flight is None
            if start:
                flight = self._running[key] = _Flight(read)
            else:
                flight = self._queued.get(key)
                if flight is None:
                    flight = self._queued[key] = _Flight(read)
            flight.waiters += 1
            flight.ends.append(end)
        if start:
            self._start(key, flight)
        return self._wait(flight, end, where)

    def _wait(self, flight: _Flight[T], end: float | None, where: str) -> T:
        if not flight.done.wait(None if end is None else max(end - time.monotonic(), 0.0)):
            with self._lock:
                flight.waiters -= 1
            logger.warning("caldav read of %s: resolution deadline passed while waiting for the shared read", where)
            raise unavailable("timeout")
        if flight.error is not None:
            raise own_copy(flight.error) from flight.error
        return flight.result  # type: ignore[return-value]

    def _start(self, key: Hashable, flight: _Flight[Any]) -> None:
        with self._lock:
            self.started += 1
        self._pool.submit(lambda: self._run(key, flight))

    def _run(self, key: Hashable, flight: _Flight[Any]) -> None:
        try:
            with self._lock:
                wanted = flight.waiters > 0
                ends = list(flight.ends)
            if not wanted:
                flight.error = unavailable("timeout")  # nobody waits: not sent
            elif any(e is None for e in ends):
                flight.result = flight.read()
            else:
                seconds = max(e for e in ends if e is not None) - time.monotonic()
                if seconds <= 0:
                    flight.error = unavailable("timeout")
                else:
                    with deadline.running(seconds):
                        flight.result = flight.read()
        except BaseException as err:  # every waiter gets it (as its own copy)
            flight.error = err
        finally:
            flight.done.set()
            self._next(key)

    def _next(self, key: Hashable) -> None:
        """The read in flight ended: the queued one (if any) starts."""
        with self._lock:
            queued = self._queued.pop(key, None)
            if queued is None:
                self._running.pop(key, None)
                return
            self._running[key] = queued
        self._start(key, queued)

    def busy(self) -> int:
        with self._lock:
            return len(self._running) + len(self._queued)
