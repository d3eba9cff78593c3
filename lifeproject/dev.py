"""The embedded default, in one process: Radicale with demo data, a demo user, the web server.

Run through `bin/run` (`bin/run --per-user`: each person's own accounts, the
demo user's Radicale connected as the demo user's account). Everything it
keeps lives under `var/` (or LIFEPROJECT_VAR_DIR).
"""
from __future__ import annotations

import argparse
import os
import secrets
import shlex
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
PER_USER_BACKEND = "resolver.accounts.PerUserAccounts"
# Settings bin/run passes on from its own environment to var/dev.env, so that
# `manage.py resolve` in another shell runs exactly as the server does (the
# laya-serve recipe: `TYPESAFE_BASE_URL=... bin/run`): every setting the
# project reads (lifeproject/settings.py) except those below.
PASSED_ON = (
    "TYPESAFE_BASE_URL", "TYPESAFE_API_KEY", "TYPESAFE_DEFAULT_MODEL", "RESOLVER_JUDGE", "OPENAI_BASE_URL",
    "OPENAI_API_KEY", "OPENAI_MODEL", "RESOLVER_JUDGE_CORRECTIONS", "RESOLVER_THRESHOLD_MARGIN",
    "RESOLVER_JUDGMENT_BUDGET_SECONDS", "RESOLVER_RESOLUTION_BUDGET_SECONDS",
    "RESOLVER_TIME_ZONE", "RESOLVER_EVENT_HORIZON_DAYS", "RESOLVER_EVENT_TIME_RANGE_FILTER", "RESOLVER_LANGUAGE",
    "RESOLVER_CALDAV_SYNC", "RESOLVER_CALDAV_SHARED_READS", "RESOLVER_CALDAV_CTAG", "RESOLVER_PARSE_CACHE_ITEMS", "RESOLVER_MAX_RESPONSE_BYTES",
    "RESOLVER_MAX_RESOURCE_BYTES", "RESOLVER_MAX_RESOURCE_COMPONENTS", "RESOLVER_MAX_COMPONENT_DEPTH",
    "RESOLVER_MAX_RESOURCE_OVERRIDES", "RESOLVER_MAX_RECURRENCE_DATES", "RESOLVER_RECURRENCE_BUDGET",
    "RESOLVER_SERVER_FILTER_RETRY_SECONDS", "RESOLVER_PROVENANCE_TTL_SECONDS",
    "RESOLVER_CLARIFICATION_MAX_AGE_SECONDS", "RESOLVER_THROTTLE_RATE", "RESOLVER_ACCOUNT_BACKEND",
    "RESOLVER_ACCOUNT_MAX_PER_USER", "RESOLVER_ACCOUNT_CHECK_RATE", "RESOLVER_MAX_IN_FLIGHT_PER_PERSON",
    "RESOLVER_SEMANTIC", "RESOLVER_GLOSSARY_DIR", "RESOLVER_MAX_JSON_DEPTH", "RESOLVER_RELEVANCE_MODEL",
    "RESOLVER_OTHER_KIND",
    "RESOLVER_OAUTH_THROTTLE_RATE", "RESOLVER_OAUTH_CIMD_MAX_CLIENTS", "RESOLVER_OAUTH_CIMD_UNUSED_SECONDS",
    "RESOLVER_OAUTH_CIMD_MAX_CLIENTS_PER_PERSON", "RESOLVER_OAUTH_CIMD_FETCH_RATE",
    "RESOLVER_OAUTH_CIMD_FETCHES_IN_FLIGHT",
    "CALDAV_TIMEOUT", "DATABASE_URL", "CACHE_URL", "LOG_LEVEL", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS",
    "MCP_ACCESS_TOKEN_SECONDS", "MCP_REFRESH_TOKEN_SECONDS", "MCP_CLIENT_ID_METADATA_DOCUMENTS",
)
# Read by the settings but not passed on: written by bin/run itself (the local
# Radicale, the site URL, the demo's key, the private-address switch), per
# process (DEBUG: the demo server's only), where dev.env is found
# (LIFEPROJECT_VAR_DIR), or production's HTTPS hardening and static root, which
# a plain-HTTP demo on 127.0.0.1 does not use, and the proxies trusted for
# X-Forwarded-For (the demo is reached directly; a command has no client address).
NOT_PASSED_ON = (
    "RESOLVER_TRUSTED_PROXIES", "CALDAV_URL", "CALDAV_USERNAME", "CALDAV_PASSWORD", "RESOLVER_SITE_URL", "SECRET_KEY",
    "RESOLVER_ACCOUNT_ALLOW_PRIVATE_ADDRESSES", "DEBUG", "LIFEPROJECT_VAR_DIR", "STATIC_ROOT",
    "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SECURE_PROXY_SSL_HEADER",
)


def dev_env(*, caldav_url: str, caldav_password: str, web_port: int, environ: dict[str, str],
            secret_key: str | None = None, per_user: bool = False) -> str:
    """The text of var/dev.env: the local Radicale, the site URL, the demo's own SECRET_KEY
    (so the server and every command sign and check page links alike, with DEBUG off),
    whatever PASSED_ON is set, and with `per_user` each person's own accounts.

    Private addresses are allowed for the demo's processes only (they read this
    file): the demo's Radicale is on 127.0.0.1, and the default elsewhere stays off.
    """
    lines = [f"CALDAV_URL={caldav_url}", f"CALDAV_USERNAME={DEMO_USER}", f"CALDAV_PASSWORD={caldav_password}",
             f"RESOLVER_SITE_URL=http://127.0.0.1:{web_port}", "RESOLVER_ACCOUNT_ALLOW_PRIVATE_ADDRESSES=1"]
    if secret_key:
        lines.append(f"SECRET_KEY={secret_key}")
    passed = {name: environ[name] for name in PASSED_ON if environ.get(name)}
    if per_user:
        passed["RESOLVER_ACCOUNT_BACKEND"] = PER_USER_BACKEND
    for name, value in passed.items():
        if "\n" in value or "\r" in value:
            raise SystemExit(f"bin/run: {name} holds a line break; var/dev.env cannot carry it.")
        lines.append(f"{name}={value}")
    return "\n".join(lines) + "\n"


def is_per_user(environ: dict[str, str], *, switch: bool) -> bool:
    """Per-user mode: `bin/run --per-user`, or the backend set in bin/run's environment."""
    return switch or environ.get("RESOLVER_ACCOUNT_BACKEND") == PER_USER_BACKEND


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
    print for servers that are not ours. Busy means something accepts a
    connection, or the port cannot be bound even with SO_REUSEADDR (bound by a
    socket that does not listen yet). The connections of a bin/run stopped a
    moment ago (TIME-WAIT) do not count: both servers bind with SO_REUSEADDR,
    so a restart on the same ports works at once.
    """
    for name, port in ports.items():
        if _accepts(host, port) or not _bindable(host, port):
            raise PortTaken(f"bin/run: port {port} on {host} is already in use (another bin/run?); "
                            f"stop it, or set {name} to a free port.")


def _accepts(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(2)
        return probe.connect_ex((host, port)) == 0


def _bindable(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
        return True


def _terminate_on_sigterm() -> None:
    """`kill` stops bin/run as Ctrl-C does: the servers are stopped in `main`'s finally."""
    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, handler)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bin/run", description="Run the demo: a local Radicale and the web server.")
    parser.add_argument("--per-user", action="store_true",
                        help="Each person's own calendar accounts (RESOLVER_ACCOUNT_BACKEND=PerUserAccounts); "
                             "the demo user's Radicale is connected as the demo user's account.")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    options = _arguments(argv)
    per_user = is_per_user(dict(os.environ), switch=options.per_user)
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
                               secret_key=_secret(VAR_DIR / "secret-key", size=50), per_user=per_user),
                       encoding="utf-8")
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
        if per_user:
            from resolver.domain.errors import ResolverError

            try:
                connect_demo_account(instance.url, caldav_password)
            except ResolverError as err:  # said plainly, and both servers stopped below
                print(f"bin/run --per-user: the demo's Radicale could not be connected as {DEMO_USER}'s account: "
                      f"{err.code}: {err.message}", file=sys.stderr, flush=True)
                raise SystemExit(1) from None
        # DEBUG for the demo server only (tracebacks and static files for a developer);
        # the default, and every other process, keeps it off. The ASGI site: Django and
        # the MCP endpoint at /mcp (lifeproject/asgi.py).
        web = subprocess.Popen(
            uvicorn_command(web_port),
            env={**os.environ, "DEBUG": "1"}, cwd=BASE_DIR,
        )
        print(banner(web_port, instance.url, token, web_password, per_user=per_user), flush=True)
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


def uvicorn_command(port: int) -> list[str]:
    """The demo's web server. No proxy is trusted (`--no-proxy-headers`): uvicorn would otherwise
    take X-Forwarded-For from 127.0.0.1 as the client's address, and anyone reaching the port
    through a local forward could pick a new address per request (resolver/client_address.py)."""
    return [sys.executable, "-m", "uvicorn", "lifeproject.asgi:application", "--host", "127.0.0.1",
            "--port", str(port), "--no-access-log", "--no-proxy-headers"]


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


def connect_demo_account(url: str, password: str) -> None:
    """The demo user's Radicale as the demo user's own account (label "demo"), checked live as any
    account is. Kept when it already points there; connected anew when the port or password changed."""
    from django.contrib.auth import get_user_model

    from resolver import accounts
    from resolver.domain.errors import ResolverError

    user = get_user_model().objects.get(username=DEMO_USER)
    for account in accounts.accounts_of(user):
        if account.slug != DEMO_USER:
            continue  # an account the person connected: left as it is
        try:
            current = account.as_account().password == password
        except ResolverError:  # sealed under a key since replaced: connect it anew
            current = False
        if current and account.url == url and account.username == DEMO_USER:
            return
        accounts.remove_account(user=user, account_id=account.pk)
    accounts.add_account(user=user, url=url, username=DEMO_USER, password=password, label=DEMO_USER)


def demo_titles(kind: str) -> str:
    """The live demo items of one kind, as the banner lists them (a completed task is not live)."""
    specs = [spec for _, items in demo_collections(datetime.now(timezone.utc)).values() for spec in items]
    return ", ".join(f'"{s.title}"' for s in specs if s.kind == kind and s.status != "COMPLETED")


def _shown(path: Path) -> str:
    """A path as a person in the checkout would type it: relative inside it, else absolute."""
    try:
        return str(path.resolve().relative_to(BASE_DIR))
    except ValueError:
        return str(path.resolve())


def banner(port: int, caldav_url: str, token: str, password: str, *, per_user: bool = False,
           var_dir: Path | None = None) -> str:
    """What bin/run prints: every command in it works as printed, in this mode and with this var/."""
    var_dir = var_dir or VAR_DIR
    base = f"http://127.0.0.1:{port}"
    # A moved var/ must reach the command too: its var/dev.env names this demo's Radicale.
    moved = (f"LIFEPROJECT_VAR_DIR={shlex.quote(str(var_dir.resolve()))} "
             if var_dir.resolve() != (BASE_DIR / "var").resolve() else "")
    user = f" --user {DEMO_USER}" if per_user else ""
    mode = (f"""
Per-user accounts are on (bin/run --per-user): every request reads only its user's accounts.
  Your calendar accounts  {base}/resolve/accounts/  ({DEMO_USER}'s account "{DEMO_USER}" is this Radicale)
  On the command line     {moved}.venv/bin/python manage.py calendar_accounts list --user {DEMO_USER}
""" if per_user else "")
    return f"""
lifeproject is running (Ctrl-C or kill stops it and the local Radicale).

  Clarification page  {base}/resolve/        (log in as {DEMO_USER} / {password})
  API                 {base}/v1/resolve
  Admin               {base}/admin/
  MCP (HTTP, OAuth)   {base}/mcp      (README "MCP over HTTP"; clients are registered in the admin)
  CalDAV (Radicale)   {caldav_url}  (user {DEMO_USER}, password in {_shown(var_dir / "radicale" / "password")})
  API token           {token}
{mode}
Demo tasks:  {demo_titles("task")}
Demo events: {demo_titles("event")}

Try:
  curl -s -X POST {base}/v1/resolve -H 'Authorization: Token {token}' \\
       -H 'Content-Type: application/json' -d '{{"text": "portfolio", "kind": "task"}}'
  {moved}.venv/bin/python manage.py resolve --text "weekly sync" --kind event{user}
"""


if __name__ == "__main__":
    main(sys.argv[1:])
