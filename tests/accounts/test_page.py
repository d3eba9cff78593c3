"""/resolve/accounts/: connect (checked live), list with collections, remove; only one's own."""
from __future__ import annotations

import pytest
from django.test import Client

from resolver.models import CalendarAccount
from tests.accounts.conftest import STRONG_KEY

pytestmark = pytest.mark.django_db
PAGE = "/resolve/accounts/"


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_page__add_then_listed_with_collections(per_user, django_user_model):
    grace = django_user_model.objects.create_user("grace")
    client = _client(grace)
    empty = client.get(PAGE)
    assert empty.status_code == 200 and "You have not connected a calendar account yet" in empty.content.decode()
    url, username, password = per_user.alice
    added = client.post(PAGE, {"url": url, "username": username, "password": password, "label": "Home"})
    assert added.status_code == 303 and added["Location"] == PAGE
    page = client.get(PAGE).content.decode()
    assert 'data-field="collection_id">home/work<' in page and 'data-field="collection_id">home/personal<' in page
    assert password not in page
    assert CalendarAccount.objects.filter(user=grace, slug="home").count() == 1


@pytest.mark.parametrize("change, message", [
    ({"password": "not it"}, "The server refused this username and password."),
    ({"url": "http://127.0.0.1:9/"}, "The server could not be reached"),
])
def test_page__a_failed_check_says_why_and_never_shows_the_password(per_user, django_user_model, change, message):
    grace = django_user_model.objects.create_user("grace")
    url, username, password = per_user.alice
    form = {"url": url, "username": username, "password": password, "label": "", **change}
    response = _client(grace).post(PAGE, form)
    body = response.content.decode()
    assert response.status_code == 400 and message in body
    assert form["password"] not in body and 'name="password"' in body
    assert not CalendarAccount.objects.filter(user=grace).exists()


def test_page__remove_own_and_not_anothers(people):
    alice_account = CalendarAccount.objects.get(user=people.alice)
    refused = _client(people.bob).post(f"{PAGE}{alice_account.pk}/remove/")
    assert refused.status_code == 404 and CalendarAccount.objects.filter(pk=alice_account.pk).exists()
    removed = _client(people.alice).post(f"{PAGE}{alice_account.pk}/remove/")
    assert removed.status_code == 303 and not CalendarAccount.objects.filter(pk=alice_account.pk).exists()


def test_page__linked_from_every_page_when_on(people, settings):
    assert 'href="/resolve/accounts/">Your calendar accounts' in _client(people.alice).get("/resolve/").content.decode()
    settings.RESOLVER = {k: v for k, v in settings.RESOLVER.items() if k != "ACCOUNT_BACKEND"}
    assert "Your calendar accounts" not in _client(people.alice).get("/resolve/").content.decode()


def test_page__lists_only_ones_own(people):
    page = _client(people.alice).get(PAGE).content.decode()
    assert "home/work" in page and "work/work" not in page and "bob" not in page


def test_page__needs_signing_in_and_per_user_accounts(per_user, settings, django_user_model):
    anonymous = Client().get(PAGE)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    settings.RESOLVER = {k: v for k, v in settings.RESOLVER.items() if k != "ACCOUNT_BACKEND"}
    off = _client(django_user_model.objects.create_user("henry")).get(PAGE)
    assert off.status_code == 404


def test_admin__lists_accounts_without_any_password(people, django_user_model):
    staff = django_user_model.objects.create_superuser("root", password="x")
    client = _client(staff)
    account = CalendarAccount.objects.get(user=people.alice)
    stored = account.password_sealed
    for path in ("/admin/resolver/calendaraccount/", f"/admin/resolver/calendaraccount/{account.pk}/change/"):
        body = client.get(path).content.decode()
        assert account.url in body
        assert stored not in body
        # Neither the field nor its label; the admin's own "Change password" link is about the staff user.
        assert "password_sealed" not in body and "app password" not in body.lower() and 'name="password' not in body
    assert client.get("/admin/resolver/calendaraccount/add/").status_code == 403


def test_check__per_user_accounts_refuse_a_development_key(settings):
    from resolver.checks import check_account_key

    settings.RESOLVER = {"ACCOUNT_BACKEND": "resolver.accounts.PerUserAccounts"}
    for weak in (settings.DEV_SECRET_KEY, "django-insecure-" + "x1" * 30, "short"):
        settings.SECRET_KEY = weak
        assert [m.id for m in check_account_key()] == ["resolver.E009"]
    settings.SECRET_KEY = STRONG_KEY
    assert check_account_key() == []
    settings.SECRET_KEY = settings.DEV_SECRET_KEY
    settings.RESOLVER = {}
    assert check_account_key() == []
