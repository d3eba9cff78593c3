"""A round-robin TCP load balancer on loopback: each new connection to the next backend in turn.

It stands for the production load balancer in front of several hosts, so a
test can send the two rounds of one elicitation to two different servers.
Bytes are relayed unchanged (the Host header stays the balancer's, which is
the site URL the servers are configured with).
"""
from __future__ import annotations

import itertools
import socket
import threading
from typing import Any


class RoundRobin:
    def __init__(self, backends: list[int]) -> None:
        self._backends = itertools.cycle(backends)
        self.chosen: list[int] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closing = False
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> "RoundRobin":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._closing = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            port = next(self._backends)
            self.chosen.append(port)
            upstream = socket.create_connection(("127.0.0.1", port), timeout=60)
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, target), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, target: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                target.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
