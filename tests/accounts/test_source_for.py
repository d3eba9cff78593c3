"""A person's account is read by the configured CALENDAR_BACKEND, and per-user mode is the account backend's."""
from __future__ import annotations

from typing import Any

from resolver import accounts
from resolver.connected import ConnectedAccount
from tests.support import memory_backend


class CapturingBackend:
    """A CALENDAR_BACKEND that keeps the settings it was built from."""

    built: list[Any] = []

    @classmethod
    def from_settings(cls, settings: Any) -> Any:
        cls.built.append(settings)
        return memory_backend.CALENDAR


class OwnAccounts(accounts.PerUserAccounts):
    """A host's own account backend, per-user like the one it extends."""


def test_source_for__builds_the_configured_calendar_backend_with_the_accounts_credentials(settings: Any) -> None:
    settings.RESOLVER = {**settings.RESOLVER, "CALENDAR_BACKEND": f"{__name__}.CapturingBackend"}
    CapturingBackend.built.clear()
    account = ConnectedAccount(key="account:1", url="https://dav.example/", username="ann", password="pw")
    assert accounts.source_for(account) is memory_backend.CALENDAR
    (used,) = CapturingBackend.built
    assert (used.CALDAV_URL, used.CALDAV_USERNAME, used.CALDAV_PASSWORD) == ("https://dav.example/", "ann", "pw")


def test_per_user__is_a_property_of_the_account_backend(settings: Any) -> None:
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_BACKEND": "resolver.accounts.SettingsAccount"}
    assert not accounts.per_user()
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts"}
    assert accounts.per_user()
    settings.RESOLVER = {**settings.RESOLVER, "ACCOUNT_BACKEND": f"{__name__}.OwnAccounts"}
    assert accounts.per_user()
