"""Run `laya-serve` (an independent Jev-compatible server) on a free loopback port.

    with LayaServer() as laya:
        judge = JevJudge(base_url=laya.url, api_key="", ...)

Its weight-free `fake` backend answers every choice question with a uniform
distribution: the real wire format, no model.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import IO

DEFAULT_SERVING_MODEL = "laya-english"


def free_port() -> int:
    # Bind to port 0 and release it: the tiny race with another process taking
    # it in between is acceptable for a test helper (laya-serve takes a port number).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LayaServer:
    def __init__(
        self,
        *,
        serving_model: str = DEFAULT_SERVING_MODEL,
        api_key: str | None = None,
        extra_env: Mapping[str, str] | None = None,
        startup_timeout: float = 30.0,
    ) -> None:
        self.serving_model = serving_model
        self.api_key = api_key
        self.extra_env = dict(extra_env or {})
        self.startup_timeout = startup_timeout
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        # A file, not a pipe: a pipe nobody reads fills up and stalls the server.
        self._stderr: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _env(self) -> dict[str, str]:
        # Start from a clean slate of LAYA_SERVE_* so the caller's shell cannot
        # switch the backend to real weights or turn on auth behind our back.
        env = {k: v for k, v in os.environ.items() if not k.startswith("LAYA_SERVE_")}
        env["LAYA_SERVE_BACKEND"] = "fake"
        env["LAYA_SERVE_SERVING_MODEL"] = self.serving_model
        if self.api_key is not None:
            env["LAYA_SERVE_API_KEY"] = self.api_key
        env.update(self.extra_env)
        return env

    def start(self) -> LayaServer:
        self.port = free_port()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115  (closed in stop())
        self._process = subprocess.Popen(
            [sys.executable, "-m", "laya_serve.cli", "--host", "127.0.0.1", "--port", str(self.port)],
            env=self._env(),
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )
        try:
            self._wait_until_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"laya-serve exited with {self._process.returncode}: {self.stderr_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"laya-serve did not answer within {self.startup_timeout} s")

    def stderr_tail(self, limit: int = 2000) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")[-limit:]

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        stderr, self._stderr = self._stderr, None
        if stderr is not None:
            stderr.close()

    def __enter__(self) -> LayaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
