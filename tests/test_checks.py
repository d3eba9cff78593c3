"""resolver/checks.py: each bad setting is named by its own check id."""
from __future__ import annotations

import pytest
from django.core import checks

from resolver.checks import check_resolver_settings

BASE = {"CALDAV_URL": "http://127.0.0.1:5232/", "SITE_URL": "http://127.0.0.1:8000"}


def _run(settings, **resolver: object) -> list[checks.CheckMessage]:
    settings.RESOLVER = {**BASE, **resolver}
    return check_resolver_settings()


def _ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [m.id for m in messages]


def test_checks__the_project_settings_are_clean(settings):
    settings.RESOLVER = dict(settings.RESOLVER)
    assert check_resolver_settings() == []


def test_checks__unknown_key_is_named(settings):
    messages = _run(settings, MAX_TEXT_LENGHT=100)
    assert _ids(messages) == ["resolver.E002"]
    assert "RESOLVER['MAX_TEXT_LENGHT']" in messages[0].msg
    assert "MAX_TEXT_LENGTH" in messages[0].hint


@pytest.mark.parametrize("name", ["CALENDAR_BACKEND", "JUDGE_BACKEND"])
def test_checks__backend_that_does_not_import(settings, name):
    messages = _run(settings, **{name: "resolver.calendars.nope.Backend"})
    assert _ids(messages) == ["resolver.E003"]
    assert f"RESOLVER[{name!r}] = 'resolver.calendars.nope.Backend' does not import" in messages[0].msg


def test_checks__backend_path_without_a_dot(settings):
    assert _ids(_run(settings, CALENDAR_BACKEND="caldav")) == ["resolver.E003"]


def test_checks__backend_that_is_not_a_class_with_from_settings(settings):
    messages = _run(settings, CALENDAR_BACKEND="tests.support.memory_backend.NOT_A_CALLABLE")
    assert _ids(messages) == ["resolver.E003"] and "has no from_settings(settings)" in messages[0].msg


def test_checks__a_factory_in_the_old_form_is_named(settings):
    # A callable taking `settings=` was a calendar backend once; now every backend is built one way.
    messages = _run(settings, CALENDAR_BACKEND="tests.support.memory_backend.from_settings")
    assert _ids(messages) == ["resolver.E003"] and "has no from_settings(settings)" in messages[0].msg
    assert "classmethod" in messages[0].hint


def test_checks__a_backend_that_imports_is_clean(settings):
    assert _run(settings, CALENDAR_BACKEND="tests.support.memory_backend.MemoryBackend") == []


@pytest.mark.parametrize("name, old, new", [
    ("CALENDAR_BACKEND", "resolver.calendars.caldav_from_settings", "resolver.calendars.caldav.CalDAVCalendar"),
    ("SEMANTIC_ENCODER", "resolver.domain.semantic.MultilingualUSE", "resolver.encoders.MultilingualUSE"),
])
def test_checks__a_documented_old_path_still_works_and_is_named(settings, name, old, new):
    messages = _run(settings, **{name: old})
    assert _ids(messages) == ["resolver.W002"] and repr(new) in messages[0].hint
    from django.utils.module_loading import import_string

    from resolver.conf import build_backend

    assert type(build_backend(name)) is import_string(new)


@pytest.mark.parametrize("name, value", [
    ("TYPESAFE_BASE_URL", "127.0.0.1:8400"),
    ("TYPESAFE_BASE_URL", "ftp://jev.example"),
    ("CALDAV_URL", "localhost/dav"),
    ("SITE_URL", "https://"),
])
def test_checks__url_without_a_scheme_or_host(settings, name, value):
    messages = _run(settings, **{name: value})
    assert _ids(messages) == ["resolver.E004"]
    assert messages[0].msg.startswith(f"RESOLVER[{name!r}] = {value!r}")


@pytest.mark.parametrize("value", ["Mars/Olympus", "", "../../etc/passwd", 5])
def test_checks__unknown_time_zone(settings, value):
    messages = _run(settings, TIME_ZONE=value)
    assert _ids(messages) == ["resolver.E005"]


def test_checks__time_zone_defaults_to_djangos(settings):
    settings.TIME_ZONE = "Europe/Berlin"
    assert _run(settings) == []
    from resolver.conf import resolver_settings

    assert resolver_settings.TIME_ZONE == "Europe/Berlin"


@pytest.mark.parametrize("name, value", [
    ("MAX_TEXT_LENGTH", 0), ("MAX_COLLECTION_IDS", "50"), ("MAX_BODY_BYTES", -1), ("MAX_CANDIDATES", True),
    ("MAX_CANDIDATES", 20), ("MAX_RESPONSE_BYTES", 0),
])
def test_checks__bad_limit(settings, name, value):
    messages = _run(settings, **{name: value})
    assert _ids(messages) == ["resolver.E006"] and f"RESOLVER[{name!r}]" in messages[0].msg


def test_checks__empty_caldav_url_warns_for_the_caldav_backend_only(settings):
    assert _ids(_run(settings, CALDAV_URL="")) == ["resolver.W001"]
    assert _run(settings, CALDAV_URL="", CALENDAR_BACKEND="tests.support.memory_backend.MemoryBackend") == []
    # The old name of the CalDAV backend is the CalDAV backend.
    assert _ids(_run(settings, CALDAV_URL="", CALENDAR_BACKEND="resolver.calendars.caldav_from_settings")) == [
        "resolver.W002", "resolver.W001"]


def test_checks__registered_with_django(settings):
    settings.RESOLVER = {**BASE, "NOPE": 1}
    assert "resolver.E002" in [m.id for m in checks.run_checks()]


def test_checks__development_secret_key_without_debug(settings):
    from resolver.checks import check_secret_key

    settings.DEBUG = False
    settings.SECRET_KEY = settings.DEV_SECRET_KEY
    assert _ids(check_secret_key()) == ["resolver.E001"]
    settings.SECRET_KEY = "x" * 60
    assert check_secret_key() == []


def test_checks__a_relevance_model_that_does_not_read_is_named(settings, tmp_path):
    broken = tmp_path / "model.json"
    broken.write_text("{}", encoding="utf-8")
    for value in (str(broken), str(tmp_path / "missing.json")):
        messages = _run(settings, RELEVANCE_MODEL=value)
        assert _ids(messages) == ["resolver.E010"] and "RELEVANCE_MODEL" in messages[0].msg


def test_checks__the_shipped_relevance_model_and_none_are_clean(settings):
    assert _run(settings, RELEVANCE_MODEL="") == [] and _run(settings, RELEVANCE_MODEL=None) == []


# --- resolver.E011: the judge and encoder classes have what the app uses -----------------

class JudgeWithoutCloseOrModel:
    """A judge class as the old single-method protocol allowed: judge() alone."""

    backend = "partial"
    fingerprint = ""

    @classmethod
    def from_settings(cls, settings):
        return cls()

    def judge(self, question, *, request_id):
        raise NotImplementedError


class JudgeEqualOnlyToItself(JudgeWithoutCloseOrModel):
    """Every member, but a plain class: a new judge per request would never be shared."""

    model = "m"

    def close(self):
        pass


class EncoderWithoutName:
    @classmethod
    def from_settings(cls, settings):
        return cls()

    def encode(self, texts):
        raise NotImplementedError


def _contracts(settings, **resolver: object) -> list[checks.CheckMessage]:
    from resolver.checks import check_backend_contracts

    settings.RESOLVER = {**BASE, **resolver}
    return check_backend_contracts()


def test_checks__the_built_in_judges_and_encoder_keep_the_contract(settings):
    for path in ("resolver.judges.jev.JevJudge", "resolver.judges.openai.OpenAIJudge",
                 "resolver.judges.disabled.DisabledJudge"):
        assert _contracts(settings, JUDGE_BACKEND=path) == [], path
    assert _contracts(settings, SEMANTIC_ENCODER="resolver.encoders.MultilingualUSE") == []


def test_checks__a_judge_class_is_named_with_the_members_it_lacks(settings):
    messages = _contracts(settings, JUDGE_BACKEND="tests.test_checks.JudgeWithoutCloseOrModel")
    assert _ids(messages) == ["resolver.E011", "resolver.E011"]
    assert messages[0].msg == ("RESOLVER['JUDGE_BACKEND'] = 'tests.test_checks.JudgeWithoutCloseOrModel' "
                               "lacks model, close.")
    assert "resolver.domain.ports.Judge" in messages[0].hint


def test_checks__a_judge_that_cannot_be_shared_is_named(settings):
    """Not silently used unshared: the registry would keep a new judge (and Session) per request."""
    messages = _contracts(settings, JUDGE_BACKEND="tests.test_checks.JudgeEqualOnlyToItself")
    assert _ids(messages) == ["resolver.E011"] and "cannot be kept one per configuration" in messages[0].msg
    assert "frozen dataclass" in messages[0].hint


def test_checks__an_encoder_class_is_named_with_the_members_it_lacks(settings):
    messages = _contracts(settings, SEMANTIC_ENCODER="tests.test_checks.EncoderWithoutName")
    assert _ids(messages) == ["resolver.E011"] and messages[0].msg.endswith("lacks name.")
    assert "resolver.domain.title_vectors.Encoder" in messages[0].hint


def test_checks__a_path_that_does_not_import_is_left_to_e003(settings):
    assert _contracts(settings, JUDGE_BACKEND="resolver.judges.nope.Judge") == []
