"""Run Xandikos, a second and independent CalDAV server, on a free loopback port.

    server = start_xandikos(root)
    ... server.url, server.settings() ...
    server.stop()

Xandikos cannot do HTTP authentication without TLS, so it runs without any:
it listens on 127.0.0.1 only and the settings carry an empty username and
password. Its calendars live under `/user/calendars/<id>/`; `--autocreate`
creates the principal and the calendar home on the first request.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import requests

from lifeproject.embedded_radicale import free_port

PRINCIPAL = "/user/"


@dataclass
class RunningXandikos:
    root: Path
    port: int
    process: subprocess.Popen[bytes]
    _log: IO[bytes] | None = field(default=None, repr=False)

    name = "xandikos"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def collection_path(self, collection_id: str) -> str:
        """The URL path item IDs are derived from (it differs from Radicale's)."""
        return f"{PRINCIPAL}calendars/{collection_id}/"

    def settings(self, **overrides: object) -> dict[str, object]:
        values: dict[str, object] = {
            "CALDAV_URL": self.url,
            "CALDAV_USERNAME": "",
            "CALDAV_PASSWORD": "",
            "CALDAV_TIMEOUT": 5.0,
            "EVENT_HORIZON_DAYS": 90,
            # Its time-range leaves out some live events (RDATE-only series,
            # overrides moved out of an ended series): read every VEVENT.
            "EVENT_TIME_RANGE_FILTER": False,
        }
        values.update(overrides)
        return values

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None


def _xandikos_command() -> list[str]:
    # The console script sits next to the interpreter in a virtualenv; fall
    # back to the module so a plain `python -m pytest` works as well.
    script = Path(sys.executable).with_name("xandikos")
    if script.exists():
        return [str(script)]
    found = shutil.which("xandikos")
    return [found] if found else [sys.executable, "-m", "xandikos"]


def wait_until_ready(url: str, process: subprocess.Popen[bytes], *, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"Xandikos exited with status {process.returncode}")
        try:
            response = requests.request(
                "PROPFIND", url.rstrip("/") + PRINCIPAL, headers={"Depth": "0"}, timeout=5
            )
            if response.status_code == 207:
                return
        except (requests.ConnectionError, requests.Timeout):
            pass
        time.sleep(0.1)
    raise RuntimeError("Xandikos did not start in time")


def start_xandikos(root: Path, *, port: int | None = None) -> RunningXandikos:
    """Start `xandikos serve` on 127.0.0.1 with its data under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    chosen = port or free_port()
    # A file, not a pipe: a pipe nobody reads fills up and stalls the server.
    log = open(root / "xandikos.log", "ab")
    process = subprocess.Popen(
        [
            *_xandikos_command(), "serve",
            "-d", str(root / "data"),
            "--autocreate",
            "-l", "127.0.0.1",
            "-p", str(chosen),
            "--current-user-principal", PRINCIPAL,
            # Its own state (certificates, keys) stays inside the test folder.
            "--state-dir", str(root / "state"),
            "--no-detect-systemd",
        ],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
    )
    server = RunningXandikos(root=root, port=chosen, process=process, _log=log)
    try:
        wait_until_ready(server.url, process)
    except RuntimeError:
        server.stop()
        raise
    return server
