"""A local Radicale on 127.0.0.1: the embedded default for development and the tests.

Radicale 3.9 denies everything unless told otherwise, so auth is configured
explicitly: htpasswd with a SHA-512 crypt hash of a generated password.
"""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests
from passlib.hash import sha512_crypt


@dataclass(frozen=True)
class RadicaleInstance:
    root: Path
    port: int
    username: str
    password: str = field(repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def storage(self) -> Path:
        return self.root / "collections"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Connections the embedded Radicale serves at once (docs/performance.md).
MAX_CONNECTIONS = 32


def write_config(root: Path, *, port: int, username: str, password: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    htpasswd = root / "users"
    # glibc's default cost: passlib's own (656,000 rounds) makes Radicale spend
    # a second on every request, and the password is random and loopback-only.
    htpasswd.write_text(f"{username}:{sha512_crypt.using(rounds=5000).hash(password)}\n", encoding="utf-8")
    os.chmod(htpasswd, 0o600)
    config = root / "radicale.conf"
    config.write_text(
        "\n".join(
            [
                "[server]",
                f"hosts = 127.0.0.1:{port}",
                "delay_on_error = 0",
                # Radicale serves max_connections at once (default 8) and leaves
                # about 6 more waiting in its listen backlog; the 15th concurrent
                # connection is not even accepted by the kernel (its SYN is dropped
                # and retried a second later), so 20 concurrent resolutions met
                # timeouts. The demo's web, MCP and command doors together stay
                # well under this (README, "Concurrent requests to the embedded Radicale").
                f"max_connections = {MAX_CONNECTIONS}",
                "[auth]",
                "type = htpasswd",
                f"htpasswd_filename = {htpasswd}",
                "htpasswd_encryption = sha512",
                "delay = 0",
                "[rights]",
                "type = owner_only",
                "[storage]",
                f"filesystem_folder = {root / 'collections'}",
                "[logging]",
                "level = warning",
                "mask_passwords = True",
                "",
            ]
        ),
        encoding="utf-8",
    )
    return config


def start(config: Path, *, log_path: Path | None = None) -> subprocess.Popen[bytes]:
    log = open(log_path, "ab") if log_path else subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, "-m", "radicale", "--config", str(config)],
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
    )


def wait_until_ready(instance: RadicaleInstance, *, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            response = requests.request(
                "PROPFIND",
                instance.url,
                auth=(instance.username, instance.password),
                headers={"Depth": "0"},
                timeout=5,
            )
            if response.status_code in (207, 200):
                return
        except (requests.ConnectionError, requests.Timeout):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"Radicale did not start on port {instance.port}")


def launch(root: Path, *, port: int | None = None, username: str = "demo",
           password: str | None = None) -> tuple[RadicaleInstance, subprocess.Popen[bytes]]:
    """Write the configuration, start Radicale and wait until it answers."""
    instance = RadicaleInstance(
        root=root,
        port=port or free_port(),
        username=username,
        password=password or secrets.token_urlsafe(18),
    )
    config = write_config(root, port=instance.port, username=username, password=instance.password)
    process = start(config, log_path=root / "radicale.log")
    try:
        wait_until_ready(instance)
    except RuntimeError:
        process.terminate()
        raise
    return instance, process
