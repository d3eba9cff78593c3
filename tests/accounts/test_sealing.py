"""resolver/sealing.py: passwords encrypted at rest, rotated through SECRET_KEY_FALLBACKS."""
from __future__ import annotations

import pytest

from resolver import sealing
from resolver.domain.errors import CalendarUnavailable
from tests.accounts.conftest import STRONG_KEY

OLD_KEY = STRONG_KEY
NEW_KEY = STRONG_KEY[::-1] + "new"


def test_seal__round_trip_and_never_the_same_text(settings):
    settings.SECRET_KEY = OLD_KEY
    first, second = sealing.seal("app-password-1234"), sealing.seal("app-password-1234")
    assert first != second and "app-password-1234" not in first
    assert sealing.unseal(first) == sealing.unseal(second) == "app-password-1234"


def test_unseal__another_key_is_an_error_never_the_ciphertext(settings):
    settings.SECRET_KEY = OLD_KEY
    sealed = sealing.seal("app-password-1234")
    settings.SECRET_KEY = NEW_KEY
    with pytest.raises(sealing.Unsealable) as caught:
        sealing.unseal(sealed)
    assert "app-password-1234" not in str(caught.value) and sealed not in str(caught.value)


def test_rotation__fallback_decrypts_and_reseal_moves_to_the_new_key(settings):
    settings.SECRET_KEY = OLD_KEY
    sealed = sealing.seal("app-password-1234")
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = NEW_KEY, [OLD_KEY]
    assert sealing.unseal(sealed) == "app-password-1234"
    moved = sealing.reseal(sealed)
    settings.SECRET_KEY_FALLBACKS = []
    assert sealing.unseal(moved) == "app-password-1234"
    with pytest.raises(sealing.Unsealable):
        sealing.unseal(sealed)


@pytest.mark.django_db
def test_account__unreadable_password_is_calendar_unavailable_with_its_reason(settings, django_user_model):
    from resolver.models import CalendarAccount

    settings.SECRET_KEY = OLD_KEY
    account = CalendarAccount(user=django_user_model.objects.create_user("erin"), slug="home", url="https://dav.example/",
                              username="erin")
    account.set_password("app-password-1234")
    account.save()
    settings.SECRET_KEY = NEW_KEY
    with pytest.raises(CalendarUnavailable) as caught:
        CalendarAccount.objects.get(pk=account.pk).as_account()
    assert caught.value.details == {"reason": "credentials_unreadable"}
    assert "app-password-1234" not in caught.value.message
