"""lifeproject/dev.py: what bin/run configures reaches `manage.py resolve` through var/dev.env."""
from __future__ import annotations

import json
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
from tests.support.processes import stop  # noqa: E402

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


# --- every mode reaches var/dev.env; banners that work as printed; restarts at once ----------


def test_dev_env__every_setting_is_passed_on_or_written_or_excluded_by_name():
    """A setting added to lifeproject/settings.py must be decided on here, or the command in another
    shell would silently disagree with the server (RESOLVER_ACCOUNT_BACKEND once did)."""
    from lifeproject.settings import env as settings_env

    undecided = set(settings_env.scheme) - set(dev.PASSED_ON) - set(dev.NOT_PASSED_ON)
    assert undecided == set()
    assert not set(dev.PASSED_ON) & set(dev.NOT_PASSED_ON)


def test_dev_env__carries_the_account_backend_set_for_bin_run():
    text = dev.dev_env(caldav_url="u", caldav_password="p", web_port=8000,
                       environ={"RESOLVER_ACCOUNT_BACKEND": dev.PER_USER_BACKEND, "DATABASE_URL": "sqlite:///x"})
    lines = text.splitlines()
    assert f"RESOLVER_ACCOUNT_BACKEND={dev.PER_USER_BACKEND}" in lines and "DATABASE_URL=sqlite:///x" in lines


def test_dev_env__per_user_switch_sets_the_backend_and_the_demo_allows_private_addresses():
    per_user = dev.dev_env(caldav_url="u", caldav_password="p", web_port=8000, environ={}, per_user=True)
    shared = dev.dev_env(caldav_url="u", caldav_password="p", web_port=8000, environ={})
    assert f"RESOLVER_ACCOUNT_BACKEND={dev.PER_USER_BACKEND}" in per_user.splitlines()
    assert "RESOLVER_ACCOUNT_BACKEND" not in shared
    # The demo's own Radicale is on 127.0.0.1: the demo's processes (they read this file) allow it.
    assert "RESOLVER_ACCOUNT_ALLOW_PRIVATE_ADDRESSES=1" in per_user.splitlines()
    assert "RESOLVER_ACCOUNT_ALLOW_PRIVATE_ADDRESSES=1" in shared.splitlines()


def test_dev_env__a_line_break_in_a_setting_is_refused():
    with pytest.raises(SystemExit) as refused:
        dev.dev_env(caldav_url="u", caldav_password="p", web_port=8000,
                    environ={"RESOLVER_TIME_ZONE": "UTC\nSECRET_KEY=mine"})
    assert "RESOLVER_TIME_ZONE holds a line break" in str(refused.value)


def test_is_per_user__the_switch_or_the_backend_in_the_environment():
    assert dev.is_per_user({}, switch=True)
    assert dev.is_per_user({"RESOLVER_ACCOUNT_BACKEND": dev.PER_USER_BACKEND}, switch=False)
    assert not dev.is_per_user({"RESOLVER_ACCOUNT_BACKEND": "resolver.accounts.SettingsAccount"}, switch=False)


def test_banner__default_var_dir_and_shared_mode_print_plain_commands():
    text = dev.banner(8000, "http://127.0.0.1:5232/", "tok", "pw", var_dir=dev.BASE_DIR / "var")
    assert '  .venv/bin/python manage.py resolve --text "weekly sync" --kind event\n' in text
    assert "password in var/radicale/password" in text
    assert "LIFEPROJECT_VAR_DIR" not in text and "--user" not in text and "accounts/" not in text


def test_banner__a_moved_var_dir_reaches_every_command_and_the_password_path(tmp_path):
    moved = tmp_path / "second demo"
    text = dev.banner(8001, "http://127.0.0.1:5233/", "tok", "pw", per_user=True, var_dir=moved)
    prefix = f"LIFEPROJECT_VAR_DIR='{moved.resolve()}' "
    assert f'{prefix}.venv/bin/python manage.py resolve --text "weekly sync" --kind event --user demo' in text
    assert f"{prefix}.venv/bin/python manage.py calendar_accounts list --user demo" in text
    assert f"password in {moved.resolve() / 'radicale' / 'password'}" in text
    assert "http://127.0.0.1:8001/resolve/accounts/" in text


def _time_wait_port() -> int:
    """A port whose last connection the server side closed first: it stays in TIME-WAIT for a while.
    The server binds with SO_REUSEADDR, as Radicale and uvicorn do."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = server.accept()
    accepted.close()  # the server closes first, as a stopped web server does
    client.recv(1)
    client.close()
    server.close()
    return port


def test_check_ports__a_port_left_in_time_wait_is_free():
    port = _time_wait_port()
    with socket.socket() as plain:  # what the old check did: a bind without SO_REUSEADDR fails here
        with pytest.raises(OSError):
            plain.bind(("127.0.0.1", port))
    dev.check_ports({"PORT": port})  # nothing listens: free


def test_check_ports__bound_but_not_listening_is_busy():
    port = free_port()
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", port))
        with pytest.raises(dev.PortTaken):
            dev.check_ports({"RADICALE_PORT": port})


def _banner_of(run: subprocess.Popen[str], deadline: float) -> str:
    banner = ""
    while "manage.py resolve" not in banner and time.monotonic() < deadline:
        line = run.stdout.readline()
        if not line and run.poll() is not None:
            break
        banner += line
    return banner


def _stop(run: subprocess.Popen[str]) -> None:
    stop(run)


@pytest.mark.slow
def test_run__per_user_moved_demo_commands_work_as_printed_and_restart_at_once(tmp_path):
    """`bin/run --per-user` with a moved var/: the banner's curl and command answer from the demo
    user's own account, and stopping and starting again on the same ports works at once."""
    ports = {"PORT": str(free_port()), "RADICALE_PORT": str(free_port())}
    env = _dev_env(tmp_path, **ports)
    command = [sys.executable, "-m", "lifeproject.dev", "--per-user"]
    run = subprocess.Popen(command, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
    try:
        banner = _banner_of(run, time.monotonic() + 180)
        assert "Per-user accounts are on" in banner
        while _refused(int(ports["PORT"])):
            time.sleep(0.2)
            assert run.poll() is None
        try_lines = banner.split("Try:\n", 1)[1].splitlines()
        curl = "\n".join(try_lines[:2])
        resolve_line = try_lines[2].strip()
        # The shell a person types into: no LIFEPROJECT_VAR_DIR of its own; the printed command carries it.
        shell = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
        answered = subprocess.run(["bash", "-c", curl], cwd=ROOT, env=shell, capture_output=True, text=True,
                                  timeout=60)
        envelope = json.loads(answered.stdout)
        assert envelope["status"] == "needs_clarification"  # 'portfolio' is ambiguous on purpose, not a 409
        assert {c["collection_id"] for c in envelope["data"]["candidates"]} == {"demo/work"}
        resolved = subprocess.run(["bash", "-c", resolve_line], cwd=ROOT, env=shell, capture_output=True,
                                  text=True, timeout=120)
        assert resolved.returncode == 0, resolved.stderr
        assert "/demo/work/demo-weekly-sync.ics" in resolved.stdout
        accounts_line = next(line for line in banner.splitlines() if "calendar_accounts list" in line)
        listed = subprocess.run(["bash", "-c", accounts_line.split("On the command line", 1)[1].strip()],
                                cwd=ROOT, env=shell, capture_output=True, text=True, timeout=120)
        assert listed.returncode == 0 and "demo/work" in listed.stdout, listed.stderr

        _stop(run)
        assert run.returncode == 0
        again = subprocess.Popen(command, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        try:
            restarted = _banner_of(again, time.monotonic() + 180)
            assert "is running" in restarted, again.stderr.read() if again.poll() is not None else ""
            # The account was kept, not connected a second time.
            listed = subprocess.run(["bash", "-c", accounts_line.split("On the command line", 1)[1].strip()],
                                    cwd=ROOT, env=shell, capture_output=True, text=True, timeout=120)
            assert [line.split("\t")[1] for line in listed.stdout.splitlines() if not line.startswith(" ")] == \
                ["demo"]
        finally:
            _stop(again)
    finally:
        _stop(run)


@pytest.mark.parametrize("switch, backend", [(None, dev.PER_USER_BACKEND), ("off", "resolver.accounts.SettingsAccount")])
def test_settings__dev_env_is_read_unless_switched_off(tmp_path, switch, backend):
    """A command reads var/dev.env; the test suite (and what it starts) does not: a `bin/run --per-user`
    left behind must not turn per-user accounts on under the tests."""
    (tmp_path / "dev.env").write_text(f"RESOLVER_ACCOUNT_BACKEND={dev.PER_USER_BACKEND}\n", encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "LIFEPROJECT_VAR_DIR": str(tmp_path)}
    if switch:
        env["LIFEPROJECT_DEV_ENV"] = switch
    done = subprocess.run([sys.executable, "-c", "from lifeproject import settings; "
                           "print(settings.RESOLVER['ACCOUNT_BACKEND'])"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == backend, done.stderr


def test_settings__the_test_process_switches_dev_env_off_for_itself_and_its_children():
    assert os.environ["LIFEPROJECT_DEV_ENV"] == "off"
