"""The project's WSGI application for in-process calls inside a test transaction.

Django closes a connection on `request_started` and `request_finished`
(`close_old_connections`) when it is unusable, obsolete, or in a different
autocommit state than configured, and a test's transaction is exactly that.
SQLite's in-memory test database ignores the close; on PostgreSQL it drops the
connection that holds the test's rows ("the connection is closed"). Django's
test client disconnects the handler around each request for this reason; this
wrapper does the same for clients that call the WSGI callable themselves
(werkzeug's test client, Schemathesis), so they see the whole WSGI stack on
every database.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from lifeproject.wsgi import application as project_application

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _ClosesWithoutClosingConnections:
    """The response iterable; its close() (which sends request_finished) keeps the connections."""

    def __init__(self, response: Iterable[bytes]) -> None:
        self._response = response

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._response)

    def close(self) -> None:
        close = getattr(self._response, "close", None)
        if close is None:
            return
        request_finished.disconnect(close_old_connections)
        try:
            close()
        finally:
            request_finished.connect(close_old_connections)


def keeping_test_connections(app: WSGIApp) -> WSGIApp:
    """`app`, with Django's connection recycling off for the request, like django.test.Client."""

    def call(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        request_started.disconnect(close_old_connections)
        try:
            response = app(environ, start_response)
        finally:
            request_started.connect(close_old_connections)
        return _ClosesWithoutClosingConnections(response)

    return call


application = keeping_test_connections(project_application)
