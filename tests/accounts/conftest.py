"""Two people whose calendars share titles, on real servers.

Radicale A holds alice's and bob's own collections (one server, two users; its
rights are owner_only). Radicale B is bob's second server, where his user is
also called bob and his collection also `work`, holding a task with the same
UID as on A: the same collection path and UID on two accounts.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
from passlib.hash import sha512_crypt

from lifeproject.seeding import Spec, seed
from tests.conftest import RunningRadicale, start_radicale
from tests.support.calendars import DAY, NOW

STRONG_KEY = "k" * 10 + "Qx7!vR2#pL9@wN4$zT6%yB8^mC1&hJ3*fD5(gS0)eA" + "u" * 10
BOB_PASSWORD_A = "bob's own radicale password"

ALICE_ITEMS = {
    "work": ("Work", [Spec("alice-report", "Quarterly report", when=NOW + 2 * DAY),
                      Spec("alice-secret", "Alice secret errand", when=NOW + 4 * DAY)]),
    "personal": ("Personal", [Spec("alice-dentist", "Dentist appointment", kind="event", when=NOW + DAY)]),
}
BOB_ITEMS_A = {
    "work": ("Work", [Spec("bob-report", "Quarterly report", when=NOW + 3 * DAY),
                      Spec("bob-only", "Bob only chore", when=NOW + 5 * DAY)]),
    "personal": ("Personal", [Spec("bob-dentist", "Dentist appointment", kind="event", when=NOW + 2 * DAY)]),
}
BOB_ITEMS_B = {
    "work": ("Work", [Spec("bob-report", "Quarterly report", when=NOW + 6 * DAY),
                      Spec("bob-server-b", "Server B review", when=NOW + 6 * DAY)]),
}


@dataclass
class Household:
    a: RunningRadicale  # alice's and bob's
    b: RunningRadicale  # bob's second server

    @property
    def alice(self) -> tuple[str, str, str]:
        return self.a.url, self.a.instance.username, self.a.instance.password

    @property
    def bob_a(self) -> tuple[str, str, str]:
        return self.a.url, "bob", BOB_PASSWORD_A

    @property
    def bob_b(self) -> tuple[str, str, str]:
        return self.b.url, self.b.instance.username, self.b.instance.password


@pytest.fixture(scope="session")
def household() -> Iterator[Household]:
    root_a = Path(tempfile.mkdtemp(prefix="radicale-household-a-"))
    root_b = Path(tempfile.mkdtemp(prefix="radicale-household-b-"))
    a = start_radicale(root_a)
    b = None
    try:
        # A second person on server A: Radicale reads its htpasswd file on every login.
        with (root_a / "users").open("a", encoding="utf-8") as users:
            users.write(f"bob:{sha512_crypt.using(rounds=5000).hash(BOB_PASSWORD_A)}\n")
        b = start_radicale_as(root_b, "bob")
        seed(a.url, a.instance.username, a.instance.password, ALICE_ITEMS)
        seed(a.url, "bob", BOB_PASSWORD_A, BOB_ITEMS_A)
        seed(b.url, "bob", b.instance.password, BOB_ITEMS_B)
        yield Household(a=a, b=b)
    finally:
        a.stop()
        if b is not None:
            b.stop()
        shutil.rmtree(root_a, ignore_errors=True)
        shutil.rmtree(root_b, ignore_errors=True)


def start_radicale_as(root: Path, username: str) -> RunningRadicale:
    from lifeproject import embedded_radicale

    instance, process = embedded_radicale.launch(root, username=username)
    return RunningRadicale(instance=instance, process=process)


@pytest.fixture
def per_user(settings, household: Household) -> Household:
    """Per-user accounts on, a strong SECRET_KEY, loopback servers allowed (the test servers are local)."""
    settings.SECRET_KEY = STRONG_KEY
    settings.RESOLVER = {
        # The shared account points at alice's: a leak to bob through it would show.
        **household.a.settings(),
        "ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts",
        "ACCOUNT_ALLOW_PRIVATE_ADDRESSES": True,
        "SITE_URL": "http://testserver",
    }
    return household


@dataclass
class People:
    alice: Any
    bob: Any
    carol: Any  # signed in, no account
    tokens: dict[str, str]


@pytest.fixture
def people(per_user: Household, django_user_model) -> People:
    from rest_framework.authtoken.models import Token

    from resolver import accounts

    users = {name: django_user_model.objects.create_user(name, password=f"{name}'s site password")
             for name in ("alice", "bob", "carol")}
    url, username, password = per_user.alice
    accounts.add_account(user=users["alice"], url=url, username=username, password=password, label="Home")
    url, username, password = per_user.bob_a
    accounts.add_account(user=users["bob"], url=url, username=username, password=password, label="Home")
    url, username, password = per_user.bob_b
    accounts.add_account(user=users["bob"], url=url, username=username, password=password, label="Work")
    tokens = {name: Token.objects.create(user=user).key for name, user in users.items()}
    return People(alice=users["alice"], bob=users["bob"], carol=users["carol"], tokens=tokens)


@pytest.fixture(autouse=True)
def fresh_namespaces() -> Iterator[None]:
    """Each test starts like a new process: no namespaced items remembered."""
    from resolver.accounts import NamespaceRegistry, use_namespaces

    previous = use_namespaces(NamespaceRegistry())
    yield
    use_namespaces(previous)
