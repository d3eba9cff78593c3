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


def test_dev_env__without_a_judge_none_is_written():
    text = dev.dev_env(caldav_url="u", caldav_password="p", web_port=8000, environ={})
    assert "TYPESAFE" not in text


def test_demo_titles__live_items_only():
    assert '"Draft portfolio outline"' in dev.demo_titles("task")
    assert "Pay old invoice" not in dev.demo_titles("task")  # completed: not live
    assert '"Weekly sync"' in dev.demo_titles("event") and "Draft" not in dev.demo_titles("event")
