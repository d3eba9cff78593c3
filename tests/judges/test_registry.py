"""resolver/judges/registry.py and the state a judge owns (resolver/judges/http.JudgeConnections)."""
from __future__ import annotations

from typing import Any

import requests

from resolver.judges.disabled import DisabledJudge
from resolver.judges.http import JudgeConnections
from resolver.judges.jev import JevJudge
from resolver.judges.openai import OpenAIJudge
from resolver.judges.registry import JudgeRegistry


def jev(url: str = "http://127.0.0.1:9/v1", **overrides: Any) -> JevJudge:
    options: dict[str, Any] = dict(base_url=url, api_key="k", model="m", connect_timeout=1.0, read_timeout=1.0,
                                   budget_seconds=1.0)
    return JevJudge(**{**options, **overrides})


def openai(url: str) -> OpenAIJudge:
    return OpenAIJudge(base_url=url, api_key="", model="m", connect_timeout=1.0, read_timeout=1.0,
                       budget_seconds=1.0)


def test_registry__one_judge_per_configuration():
    registry = JudgeRegistry()
    first = registry.shared(jev())
    assert registry.shared(jev()) is first
    other = registry.shared(jev(model="other"))
    assert other is not first and len(registry) == 2
    assert registry.shared(DisabledJudge()) is registry.shared(DisabledJudge())


def test_registry__drops_the_least_recently_used_and_closes_it():
    closed = []

    class Recording(requests.Session):
        def close(self) -> None:
            closed.append(self)
            super().close()

    registry = JudgeRegistry(max_judges=2)
    a = registry.shared(jev("http://127.0.0.1:1/v1", connections=JudgeConnections(session_factory=Recording)))
    session = a.connections.session()
    registry.shared(jev("http://127.0.0.1:2/v1"))
    registry.shared(jev("http://127.0.0.1:1/v1"))  # a is used again: b is the oldest now
    registry.shared(jev("http://127.0.0.1:3/v1"))
    assert closed == [] and len(registry) == 2
    registry.shared(jev("http://127.0.0.1:4/v1"))
    assert closed == [session]
    assert registry.shared(jev("http://127.0.0.1:1/v1")) is not a


def test_registry__clear_closes_every_session():
    registry = JudgeRegistry()
    judge = registry.shared(jev())
    session = judge.connections.session()
    registry.clear()
    assert len(registry) == 0 and judge.connections.session() is not session


def test_connections__learnt_mode_belongs_to_one_judge():
    """Two OpenAI-compatible servers never share what one of them accepted."""
    a, b = openai("http://127.0.0.1:1/v1"), openai("http://127.0.0.1:2/v1")
    a.connections.learn("response_mode", "json_object")
    assert (a.response_mode(), b.response_mode()) == ("json_object", "json_schema")
    assert openai("http://127.0.0.1:1/v1").response_mode() == "json_schema"


def test_judges__equal_judges_compare_by_configuration_only():
    assert jev() == jev(connections=JudgeConnections()) and "connections" not in repr(jev())


def test_registry__refuses_a_judge_it_cannot_share():
    """Never silently unshared: a judge equal only to itself, or unhashable, is a configuration error."""
    import dataclasses

    import pytest
    from django.core.exceptions import ImproperlyConfigured

    class Plain:
        def close(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True)
    class WithAList:
        urls: list

        def close(self) -> None:
            pass

    registry = JudgeRegistry()
    with pytest.raises(ImproperlyConfigured, match="equal only to themselves"):
        registry.shared(Plain())
    with pytest.raises(ImproperlyConfigured, match="not hashable"):
        registry.shared(WithAList(urls=[]))
    assert len(registry) == 0


def test_judges__close_releases_the_connections():
    judge = jev()
    session = judge.connections.session()
    judge.close()
    assert judge.connections.session() is not session
