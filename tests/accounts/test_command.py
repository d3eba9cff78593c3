"""manage.py calendar_accounts: add (verified, password from stdin), list, remove, rotate; exit codes."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from resolver.models import CalendarAccount
from tests.accounts.conftest import STRONG_KEY

pytestmark = pytest.mark.django_db


def _call(*args: str, stdin: str = "") -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    import sys

    real = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        call_command("calendar_accounts", *args, stdout=out, stderr=err)
    finally:
        sys.stdin = real
    return out.getvalue(), err.getvalue()


def test_add_list_remove(per_user, django_user_model):
    django_user_model.objects.create_user("frank")
    url, username, password = per_user.alice
    out, _ = _call("add", "--user", "frank", "--url", url, "--username", username, "--password-stdin",
                   "--label", "Home", stdin=password + "\n")
    account_id, slug, found = out.splitlines()[0].split("\t")
    assert slug == "home" and found == "2 collections" and password not in out
    assert {"home/work", "home/personal"} <= {line.split("\t")[0].strip() for line in out.splitlines()[1:]}

    listed = json.loads(_call("list", "--user", "frank", "--json")[0])
    assert [a["id"] for a in listed["accounts"]] == [int(account_id)]
    row = listed["accounts"][0]
    assert row["slug"] == "home" and row["username"] == username and row["error"] is None
    assert sorted(c["collection_id"] for c in row["collections"]) == ["home/personal", "home/work"]
    assert password not in json.dumps(listed) and "password" not in json.dumps(listed)
    assert "home/work" in _call("list", "--user", "frank")[0]

    assert _call("remove", "--user", "frank", account_id)[0].strip() == f"removed {account_id}"
    assert json.loads(_call("list", "--user", "frank", "--json")[0]) == {"accounts": []}


def test_add__wrong_password_exits_2_and_saves_nothing(per_user, django_user_model):
    django_user_model.objects.create_user("frank")
    url, username, _ = per_user.alice
    with pytest.raises(CommandError) as caught:
        _call("add", "--user", "frank", "--url", url, "--username", username, "--password-stdin",
              stdin="wrong password\n")
    assert caught.value.returncode == 2 and "account_rejected (unauthorized)" in str(caught.value)
    assert "wrong password" not in str(caught.value)
    assert not CalendarAccount.objects.exists()


@pytest.mark.parametrize("args", [
    ("list", "--user", "nobody"),
    ("remove", "--user", "nobody", "1"),
])
def test_unknown_user_exits_2(per_user, args):
    with pytest.raises(CommandError) as caught:
        _call(*args)
    assert caught.value.returncode == 2 and str(caught.value) == "No such user: 'nobody'."


def test_add__unknown_user_is_named(per_user):
    url, username, password = per_user.alice
    with pytest.raises(CommandError) as caught:
        _call("add", "--user", "nobody", "--url", url, "--username", username, "--password-stdin", stdin=password)
    assert caught.value.returncode == 2 and str(caught.value) == "No such user: 'nobody'."


def test_list__no_accounts_says_so_and_how_to_connect_one(per_user, django_user_model):
    django_user_model.objects.create_user("grace")
    out, _ = _call("list", "--user", "grace")
    assert out.splitlines() == [
        "grace has no calendar accounts. Connect one:",
        """  printf '%s\\n' "$APP_PASSWORD" | python manage.py calendar_accounts add --user grace """
        "--url URL --username NAME --password-stdin",
    ]
    assert json.loads(_call("list", "--user", "grace", "--json")[0]) == {"accounts": []}


def test_remove__another_persons_account_exits_2_and_keeps_it(people):
    alice_account = CalendarAccount.objects.get(user=people.alice)
    with pytest.raises(CommandError) as caught:
        _call("remove", "--user", "bob", str(alice_account.pk))
    assert caught.value.returncode == 2
    assert CalendarAccount.objects.filter(pk=alice_account.pk).exists()


def test_list__shows_only_the_users_own(people):
    listed = json.loads(_call("list", "--user", "alice", "--json")[0])
    assert [a["slug"] for a in listed["accounts"]] == ["home"]
    uids = json.dumps(listed)
    assert "work/work" not in uids


def test_rotate__re_encrypts_with_the_new_key(people, settings):
    new_key = STRONG_KEY[::-1] + "rotated"
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = new_key, [STRONG_KEY]
    before = dict(CalendarAccount.objects.values_list("pk", "password_sealed"))
    assert _call("rotate")[0].strip() == f"re-encrypted {len(before)}"
    settings.SECRET_KEY_FALLBACKS = []
    for account in CalendarAccount.objects.all():
        assert account.password_sealed != before[account.pk]
        account.as_account()  # decrypts with the new key alone
