"""resolver/sealing.py: passwords encrypted at rest, bound to their row, rotated through SECRET_KEY_FALLBACKS."""
from __future__ import annotations

import pytest

from resolver import sealing
from resolver.domain.errors import CalendarUnavailable
from tests.accounts.conftest import STRONG_KEY

OLD_KEY = STRONG_KEY
NEW_KEY = STRONG_KEY[::-1] + "new"
CONTEXT = ("calendar_account", 1, 7, "https://dav.example/", "erin")


def test_seal__round_trip_and_never_the_same_text(settings):
    settings.SECRET_KEY = OLD_KEY
    first, second = sealing.seal("app-password-1234", context=CONTEXT), sealing.seal("app-password-1234", context=CONTEXT)
    assert first != second and "app-password-1234" not in first
    assert sealing.unseal(first, context=CONTEXT) == sealing.unseal(second, context=CONTEXT) == "app-password-1234"


def test_unseal__another_key_is_an_error_never_the_ciphertext(settings):
    settings.SECRET_KEY = OLD_KEY
    sealed = sealing.seal("app-password-1234", context=CONTEXT)
    settings.SECRET_KEY = NEW_KEY
    with pytest.raises(sealing.Unsealable) as caught:
        sealing.unseal(sealed, context=CONTEXT)
    assert "app-password-1234" not in str(caught.value) and sealed not in str(caught.value)


def test_rotation__fallback_decrypts_and_reseal_moves_to_the_new_key(settings):
    settings.SECRET_KEY = OLD_KEY
    sealed = sealing.seal("app-password-1234", context=CONTEXT)
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = NEW_KEY, [OLD_KEY]
    assert sealing.unseal(sealed, context=CONTEXT) == "app-password-1234"
    moved = sealing.reseal(sealed)
    settings.SECRET_KEY_FALLBACKS = []
    assert sealing.unseal(moved, context=CONTEXT) == "app-password-1234"
    with pytest.raises(sealing.Unsealable):
        sealing.unseal(sealed, context=CONTEXT)


@pytest.mark.django_db
def test_account__unreadable_password_is_calendar_unavailable_with_its_reason(settings, django_user_model):
    from resolver.models import CalendarAccount

    settings.SECRET_KEY = OLD_KEY
    account = CalendarAccount(user=django_user_model.objects.create_user("erin"), slug="home", url="https://dav.example/",
                              username="erin")
    account.save()
    account.set_password("app-password-1234")
    account.save()
    settings.SECRET_KEY = NEW_KEY
    with pytest.raises(CalendarUnavailable) as caught:
        CalendarAccount.objects.get(pk=account.pk).as_account()
    assert caught.value.details == {"reason": "credentials_unreadable"}
    assert "app-password-1234" not in caught.value.message


@pytest.mark.parametrize("moved", [
    ("calendar_account", 2, 7, "https://dav.example/", "erin"),     # another user
    ("calendar_account", 1, 8, "https://dav.example/", "erin"),     # another row
    ("calendar_account", 1, 7, "https://evil.example/", "erin"),    # another server
    ("calendar_account", 1, 7, "https://dav.example/", "mallory"),  # another username
])
def test_unseal__a_value_moved_to_another_context_does_not_open(settings, moved):
    settings.SECRET_KEY = OLD_KEY
    sealed = sealing.seal("app-password-1234", context=CONTEXT)
    with pytest.raises(sealing.Unsealable):
        sealing.unseal(sealed, context=moved)
    assert sealing.unseal(sealed, context=CONTEXT) == "app-password-1234"


def test_unseal__an_unbound_value_is_refused(settings):
    settings.SECRET_KEY = OLD_KEY
    with pytest.raises(sealing.Unsealable):
        sealing.unseal(sealing.seal_unbound("app-password-1234"), context=CONTEXT)


def _row(user, slug: str, url: str, username: str):
    from resolver.models import CalendarAccount

    row = CalendarAccount(user=user, slug=slug, url=url, username=username)
    row.save()
    row.set_password(f"{username}'s app password")
    row.save()
    return row


@pytest.mark.django_db
def test_account__a_password_copied_to_another_row_is_never_sent(per_user, settings, django_user_model):
    """Someone who can write the database but lacks SECRET_KEY copies bob's sealed password into
    their own row pointing at their server: it does not open, and their server receives nothing."""
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    from tests.support.network import Listener

    bob = _row(django_user_model.objects.create_user("bob"), "home", "https://dav.example/", "bob")
    mallory = django_user_model.objects.create_user("mallory")
    with Listener() as listener:
        theirs = _row(mallory, "home", f"http://127.0.0.1:{listener.port}/", "bob")
        theirs.password_sealed = bob.password_sealed
        theirs.save()
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=mallory).key}")
        response = client.post("/v1/resolve", {"text": "anything", "kind": "task"}, format="json")
    assert response.status_code == 503
    assert response.json()["error"]["details"]["reason"] == "credentials_unreadable"
    assert listener.untouched


@pytest.mark.django_db(transaction=True)
def test_migration__existing_rows_are_re_sealed_bound_to_their_row(settings, django_user_model):
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    settings.SECRET_KEY = OLD_KEY
    executor = MigrationExecutor(connection)
    executor.migrate([("resolver", "0003_calendar_account")])
    old_apps = executor.loader.project_state([("resolver", "0003_calendar_account")]).apps
    user = django_user_model.objects.create_user("erin")
    row = old_apps.get_model("resolver", "CalendarAccount").objects.create(
        user_id=user.pk, slug="home", url="https://dav.example/", username="erin",
        password_sealed=sealing.seal_unbound("app-password-1234"))
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([("resolver", "0004_bind_sealed_passwords")])
    try:
        from resolver.models import CalendarAccount

        account = CalendarAccount.objects.get(pk=row.pk)
        assert account.password_sealed.startswith("v2$")
        assert account.as_account().password == "app-password-1234"
    finally:
        # Back to the latest migrations: the tests after this one need the tables added since 0004.
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
