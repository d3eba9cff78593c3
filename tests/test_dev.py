"""lifeproject/dev.py: what bin/run configures reaches `manage.py resolve` through var/dev.env."""
from __future__ import annotations

import os

import environ

from lifeproject import dev


def test_dev_env__passes_the_judge_on_to_the_command(tmp_path, monkeypatch):
    text = dev.dev_env(caldav_url="http://127.0.0.1:5232/", caldav_password="pw", web_port=8001,
                       environ={"TYPESAFE_BASE_URL": "http://127.0.0.1:8400", "HOME": "/somewhere"})
    path = tmp_path / "dev.env"
    path.write_text(text, encoding="utf-8")
    for name in ("TYPESAFE_BASE_URL", "CALDAV_URL", "CALDAV_USERNAME", "CALDAV_PASSWORD", "RESOLVER_SITE_URL",
                 "HOME"):
        # setenv first, so that teardown restores the real environment whatever read_env sets.
        monkeypatch.setenv(name, "placeholder")
        monkeypatch.delenv(name)
    environ.Env.read_env(path)  # what lifeproject/settings.py does for every process, the command included

    assert os.environ["TYPESAFE_BASE_URL"] == "http://127.0.0.1:8400"
    assert os.environ["CALDAV_URL"] == "http://127.0.0.1:5232/"
    assert "HOME" not in os.environ  # only the settings bin/run passes on
    assert "RESOLVER_SITE_URL=http://127.0.0.1:8001" in text.splitlines()


def test_dev_env__carries_the_demos_secret_key():
    text = dev.dev_env(caldav_url="u", caldav_password="p", web_port=8000, environ={}, secret_key="k" * 50)
    assert f"SECRET_KEY={'k' * 50}" in text.splitlines() and "DEBUG" not in text


def test_dev_env__without_a_judge_none_is_written():
    text = dev.dev_env(caldav_url="u", caldav_password="p", web_port=8000, environ={})
    assert "TYPESAFE" not in text


def test_demo_titles__live_items_only():
    assert '"Draft portfolio outline"' in dev.demo_titles("task")
    assert "Pay old invoice" not in dev.demo_titles("task")  # completed: not live
    assert '"Weekly sync"' in dev.demo_titles("event") and "Draft" not in dev.demo_titles("event")


# --- bin/run: ports, signals, and a demo that stays current ------------------------------

import shutil  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from datetime import datetime, timedelta, timezone  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from lifeproject.embedded_radicale import free_port  # noqa: E402
from lifeproject.seeding import Spec, seed  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _listening(port: int) -> socket.socket:
    taken = socket.socket()
    taken.bind(("127.0.0.1", port))
    taken.listen()
    return taken


def _dev_env(var_dir: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "LIFEPROJECT_VAR_DIR": str(var_dir),
            "DJANGO_SETTINGS_MODULE": "lifeproject.settings", "TYPESAFE_BASE_URL": "", "TYPESAFE_API_KEY": "",
            **extra}


def test_check_ports__names_the_taken_port_and_its_setting():
    port = free_port()
    with _listening(port):
        with pytest.raises(dev.PortTaken) as caught:
            dev.check_ports({"RADICALE_PORT": free_port(), "PORT": port})
    assert f"port {port} on 127.0.0.1 is already in use" in str(caught.value) and "set PORT" in str(caught.value)
    dev.check_ports({"PORT": port})  # free again


@pytest.mark.parametrize("which", ["PORT", "RADICALE_PORT"])
def test_run__a_taken_port_fails_before_the_banner(tmp_path, which):
    ports = {"PORT": str(free_port()), "RADICALE_PORT": str(free_port())}
    with _listening(int(ports[which])):
        done = subprocess.run([sys.executable, "-m", "lifeproject.dev"], cwd=ROOT, capture_output=True, text=True,
                              env=_dev_env(tmp_path, **ports), timeout=60)
    assert done.returncode == 1
    assert "is running" not in done.stdout
    assert f"port {ports[which]} on 127.0.0.1 is already in use" in done.stderr
    assert not (tmp_path / "radicale").exists()  # nothing was started or written


def _refused(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


@pytest.mark.slow
def test_run__sigterm_stops_both_servers(tmp_path):
    """`kill PID` of bin/run stops the web server and Radicale, as Ctrl-C does."""
    ports = {"PORT": str(free_port()), "RADICALE_PORT": str(free_port())}
    env = _dev_env(tmp_path, **ports)
    run = subprocess.Popen([sys.executable, "-m", "lifeproject.dev"], cwd=ROOT, env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 180
        banner = ""
        while "is running" not in banner and time.monotonic() < deadline:
            banner += run.stdout.readline()
        assert "is running" in banner
        while _refused(int(ports["PORT"])) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _refused(int(ports["PORT"])) and not _refused(int(ports["RADICALE_PORT"]))
        run.send_signal(signal.SIGTERM)
        assert run.wait(timeout=30) == 0
        assert _refused(int(ports["PORT"])) and _refused(int(ports["RADICALE_PORT"]))
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()


@pytest.mark.slow
def test_refresh_demo__current_on_every_start_and_a_persons_items_untouched():
    from tests.conftest import start_radicale

    root = Path(tempfile.mkdtemp(prefix="radicale-demo-"))
    server = start_radicale(root)
    try:
        url, user, password = server.url, server.instance.username, server.instance.password
        first_start = datetime.now(timezone.utc) - timedelta(days=60)
        seed(url, user, password, dev.demo_collections(first_start))
        mine = Spec("my-own-item", "My own dentist note", kind="event", when=first_start + timedelta(days=1))
        seed(url, user, password, {"personal": ("Personal", [mine])})
        from lifeproject.seeding import client

        calendar = next(c for c in client(url, user, password).principal().calendars()
                        if c.url.path.rstrip("/").endswith("/personal"))
        before = calendar.object_by_uid("my-own-item").data

        now = datetime.now(timezone.utc)
        dev.DEMO_USER, saved = user, dev.DEMO_USER
        try:
            dev.refresh_demo(url, password, now=now)
        finally:
            dev.DEMO_USER = saved

        dentist = calendar.object_by_uid("demo-dentist").icalendar_component
        start = dentist["dtstart"].dt
        assert abs(start - (now.replace(hour=9, minute=0, second=0, microsecond=0) + timedelta(days=6))) < \
            timedelta(seconds=1)
        assert calendar.object_by_uid("my-own-item").data == before
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
