"""The embedded default, in one process: Radicale with demo data, a demo user, the web server.

Run through `bin/run`. Everything it keeps lives under `var/`.
"""
from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from lifeproject import embedded_radicale
from lifeproject.seeding import demo_collections, seed

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("LIFEPROJECT_VAR_DIR") or BASE_DIR / "var")
RADICALE_DIR = VAR_DIR / "radicale"
DEV_ENV = VAR_DIR / "dev.env"
DEMO_USER = "demo"
# Settings bin/run passes on from its own environment to var/dev.env, so that
# `manage.py resolve` in another shell runs exactly as the server does (the
# laya-serve recipe: `TYPESAFE_BASE_URL=... bin/run`).
PASSED_ON = (
    "TYPESAFE_BASE_URL", "TYPESAFE_API_KEY", "TYPESAFE_DEFAULT_MODEL", "RESOLVER_JUDGMENT_BUDGET_SECONDS",
    "RESOLVER_TIME_ZONE", "RESOLVER_EVENT_HORIZON_DAYS", "RESOLVER_EVENT_TIME_RANGE_FILTER",
)


def dev_env(*, caldav_url: str, caldav_password: str, web_port: int, environ: dict[str, str],
            secret_key: str | None = None) -> str:
    """The text of var/dev.env: the local Radicale, the site URL, the demo's own SECRET_KEY
    (so the server and every command sign and check page links alike, with DEBUG off),
    and whatever PASSED_ON is set."""
    lines = [f"CALDAV_URL={caldav_url}", f"CALDAV_USERNAME={DEMO_USER}", f"CALDAV_PASSWORD={caldav_password}",
             f"RESOLVER_SITE_URL=http://127.0.0.1:{web_port}"]
    if secret_key:
        lines.append(f"SECRET_KEY={secret_key}")
    lines += [f"{name}={environ[name]}" for name in PASSED_ON if environ.get(name)]
    return "\n".join(lines) + "\n"


def _secret(path: Path, *, size: int = 18) -> str:
    """A generated secret kept under var/ (mode 0600) so restarts reuse it."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(size), encoding="utf-8")
        os.chmod(path, 0o600)
    return path.read_text(encoding="utf-8").strip()


class PortTaken(Exception):
    pass


def check_ports(ports: dict[str, int], *, host: str = "127.0.0.1") -> None:
    """Raise PortTaken naming the first port something already listens on.

    Checked before anything starts: a Radicale already on the port (another
    bin/run) would otherwise answer our readiness probe, and the banner would
    print for servers that are not ours.
    """
    for name, port in ports.items():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError:
                raise PortTaken(f"bin/run: port {port} on {host} is already in use (another bin/run?); "
                                f"stop it, or set {name} to a free port.") from None


def _terminate_on_sigterm() -> None:
    """`kill` stops bin/run as Ctrl-C does: the servers are stopped in `main`'s finally."""
    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, handler)


def main() -> None:
    radicale_port = int(os.environ.get("RADICALE_PORT", "5232"))
    web_port = int(os.environ.get("PORT", "8000"))
    try:
        check_ports({"RADICALE_PORT": radicale_port, "PORT": web_port})
    except PortTaken as err:
        print(err, file=sys.stderr, flush=True)
        raise SystemExit(1) from None
    _terminate_on_sigterm()
    caldav_password = _secret(RADICALE_DIR / "password")
    # The project settings read this file (django-environ's read_env), so the
    # command and the server agree without anything secret in argv; written
    # anew on every start, so a judge set for one run does not outlive it.
    DEV_ENV.write_text(dev_env(caldav_url=f"http://127.0.0.1:{radicale_port}/", caldav_password=caldav_password,
                               web_port=web_port, environ=dict(os.environ),
                               secret_key=_secret(VAR_DIR / "secret-key", size=50)), encoding="utf-8")
    os.chmod(DEV_ENV, 0o600)
    # Migrated here, after var/dev.env: the settings' checks need its SECRET_KEY with DEBUG off.
    subprocess.run([sys.executable, str(BASE_DIR / "manage.py"), "migrate", "--noinput"], check=True,
                   stdout=subprocess.DEVNULL)
    instance, radicale = embedded_radicale.launch(
        RADICALE_DIR, port=radicale_port, username=DEMO_USER, password=caldav_password
    )
    web: subprocess.Popen[bytes] | None = None
    try:
        refresh_demo(instance.url, caldav_password, now=datetime.now(timezone.utc))
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
        import django

        django.setup()
        token, web_password = _demo_user()
        # DEBUG for the demo server only (tracebacks and static files for a developer);
        # the default, and every other process, keeps it off. The ASGI site: Django and
        # the MCP endpoint at /mcp (lifeproject/asgi.py).
        web = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "lifeproject.asgi:application", "--host", "127.0.0.1",
             "--port", str(web_port), "--no-access-log"],
            env={**os.environ, "DEBUG": "1"}, cwd=BASE_DIR,
        )
        _print_banner(web_port, instance.url, token, web_password)
        web.wait()
    except KeyboardInterrupt:
        pass
    finally:
        for process in (web, radicale):
            if process is not None and process.poll() is None:
                process.terminate()
        for process in (web, radicale):
            if process is not None:
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def refresh_demo(url: str, password: str, *, now: datetime) -> None:
    """Write the demo items anew, dated from `now`, on every start: the demo stays current.

    Only the demo's own UIDs are written (PUT over the old version); any item
    a person added is left as it is.
    """
    seed(url, DEMO_USER, password, demo_collections(now))


def _demo_user() -> tuple[str, str]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    password = _secret(VAR_DIR / "demo-user-password")
    user, _ = get_user_model().objects.get_or_create(username=DEMO_USER, defaults={"is_staff": True})
    user.is_staff = True
    user.is_superuser = True
    user.set_password(password)
    user.save()
    token, _ = Token.objects.get_or_create(user=user)
    return token.key, password


def demo_titles(kind: str) -> str:
    """The live demo items of one kind, as the banner lists them (a completed task is not live)."""
    specs = [spec for _, items in demo_collections(datetime.now(timezone.utc)).values() for spec in items]
    return ", ".join(f'"{s.title}"' for s in specs if s.kind == kind and s.status != "COMPLETED")


def _print_banner(port: int, caldav_url: str, token: str, password: str) -> None:
    base = f"http://127.0.0.1:{port}"
    print(
        f"""
lifeproject is running (Ctrl-C or kill stops it and the local Radicale).

  Clarification page  {base}/resolve/        (log in as {DEMO_USER} / {password})
  API                 {base}/v1/resolve
  Admin               {base}/admin/
  MCP (HTTP, OAuth)   {base}/mcp      (README "MCP over HTTP"; clients are registered in the admin)
  CalDAV (Radicale)   {caldav_url}  (user {DEMO_USER}, password in var/radicale/password)
  API token           {token}

Demo tasks:  {demo_titles("task")}
Demo events: {demo_titles("event")}

Try:
  curl -s -X POST {base}/v1/resolve -H 'Authorization: Token {token}' \\
       -H 'Content-Type: application/json' -d '{{"text": "portfolio", "kind": "task"}}'
  .venv/bin/python manage.py resolve --text "weekly sync" --kind event
""",
        flush=True,
    )


if __name__ == "__main__":
    main()
