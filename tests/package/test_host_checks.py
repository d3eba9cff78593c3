"""resolver.E007/E008: what the app needs from the project that installs it, each named."""
from __future__ import annotations

from resolver.checks import check_host_project


def test_host__this_project_is_clean():
    assert check_host_project() == []


def test_host__a_missing_app_is_named(settings):
    settings.INSTALLED_APPS = [a for a in settings.INSTALLED_APPS if a != "rest_framework.authtoken"]
    messages = check_host_project()
    assert [m.id for m in messages] == ["resolver.E007"] and "'rest_framework.authtoken'" in messages[0].msg


def test_host__a_missing_middleware_is_named(settings):
    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if not m.endswith("CsrfViewMiddleware")]
    messages = check_host_project()
    assert [m.id for m in messages] == ["resolver.E008"]
    assert "'django.middleware.csrf.CsrfViewMiddleware'" in messages[0].msg
