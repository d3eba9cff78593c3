"""manage.py calendar_accounts: a person's CalDAV accounts, for scripts and tests.

    calendar_accounts add --user USERNAME --url URL --username NAME --password-stdin [--label LABEL]
    calendar_accounts list --user USERNAME [--json]
    calendar_accounts remove --user USERNAME ID
    calendar_accounts rotate        # re-encrypt every stored password with the current SECRET_KEY

Exit codes: 0 done; 2 bad input (an unknown or inactive user, an account that
fails its live check, no such account for that user); 1 anything unexpected.
The password is read from standard input (one line), never from argv, and is
never printed.
"""
from __future__ import annotations

import shlex
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from resolver import deadline, services
from resolver.domain.errors import ResolverError
# A server names its calendars: every line printed escapes them (resolver/domain/escaping.py).
from resolver.domain.escaping import for_terminal as safe, json_text


def connect_command(username: str | None) -> str:
    """The command that connects an account for `username`, as a person types it (USERNAME when unknown)."""
    user = shlex.quote(username) if username else "USERNAME"
    return (f"printf '%s\\n' \"$APP_PASSWORD\" | python manage.py calendar_accounts add --user {user} "
            f"--url URL --username NAME --password-stdin")


class Command(BaseCommand):
    help = "Connect, list and remove a person's CalDAV accounts (per-user accounts)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="{add,list,remove,rotate}")
        add = sub.add_parser("add", help="Verify an account live against its server, then save it.")
        add.add_argument("--user", required=True, metavar="USERNAME", help="Whose account it is.")
        add.add_argument("--url", required=True, help="The CalDAV server's URL.")
        add.add_argument("--username", required=True, metavar="NAME", help="The account's username on the server.")
        add.add_argument("--password-stdin", action="store_true", required=True,
                         help="Read the (app) password from standard input: one line.")
        add.add_argument("--label", default="", help="A name for the account; its slug prefixes collection IDs.")
        listing = sub.add_parser("list", help="The user's accounts and the collections found on each (read live).")
        listing.add_argument("--user", required=True, metavar="USERNAME", help="Whose accounts.")
        listing.add_argument("--json", action="store_true", help="Print JSON on stdout.")
        remove = sub.add_parser("remove", help="Remove one of the user's accounts.")
        remove.add_argument("--user", required=True, metavar="USERNAME", help="Whose account.")
        remove.add_argument("id", metavar="ID", help="The account's ID (from list).")
        sub.add_parser("rotate", help="Re-encrypt every stored password with the current SECRET_KEY "
                                      "(after moving the old key into SECRET_KEY_FALLBACKS).")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "rotate":
            return self._rotate()
        user = self._user(options["user"])
        if action in ("add", "list"):
            with deadline.budget():  # one deadline for the whole command
                if action == "add":
                    return self._add(user, options)
                return self._list(user, as_json=options["json"])
        if not services.remove_account(user=user, account_id=options["id"]):
            raise CommandError(f"{safe(options['user'])} has no account with ID {options['id']!r}.", returncode=2)
        self.stdout.write(f"removed {safe(options['id'])}")

    def _user(self, username: str) -> Any:
        model = get_user_model()
        try:
            user = model._default_manager.get_by_natural_key(username)
        except model.DoesNotExist:
            raise CommandError(f"No such user: {username!r}.", returncode=2) from None
        if not user.is_active:
            raise CommandError(f"No such user: {username!r} is inactive.", returncode=2)
        return user

    def _add(self, user: Any, options: dict[str, Any]) -> None:
        password = sys.stdin.readline().rstrip("\r\n")
        try:
            account, collections = services.add_account(user=user, url=options["url"], username=options["username"],
                                                        password=password, label=options["label"])
        except ResolverError as err:
            reason = err.details.get("reason", "")
            raise CommandError(safe(f"{err.code} ({reason}): {err.message}"), returncode=err.exit_code) from None
        self.stdout.write(f"{account.pk}\t{safe(account.slug)}\t{len(collections)} collections")
        for collection in collections:
            self.stdout.write(f"  {safe(account.slug)}/{safe(collection.collection_id)}\t{safe(collection.display_name)}")

    def _list(self, user: Any, *, as_json: bool) -> None:
        rows = []
        for state in services.account_overview(user=user):  # one deadline for all of them
            account, err = state.account, state.error
            rows.append({"id": account.pk, "slug": account.slug, "label": account.label, "url": account.url,
                         "username": account.username, "created_at": account.created_at.isoformat(),
                         "collections": None if state.collections is None else [
                             {"collection_id": c.collection_id, "display_name": c.display_name}
                             for c in state.collections],
                         "error": None if err is None else {"code": err.code, "reason": err.details.get("reason")}})
        if as_json:
            self.stdout.write(json_text({"accounts": rows}))
            return
        if not rows:
            name = user.get_username()
            self.stdout.write(f"{safe(name)} has no calendar accounts. Connect one:\n  {safe(connect_command(name))}")
            return
        for row in rows:
            found = (f"{len(row['collections'])} collections" if row["error"] is None
                     else f"{row['error']['code']} ({row['error']['reason']})")
            self.stdout.write(f"{row['id']}\t{safe(row['slug'])}\t{safe(row['username'])} at {safe(row['url'])}"
                              f"\t{safe(found)}")
            for c in row["collections"] or ():
                self.stdout.write(f"  {safe(c['collection_id'])}\t{safe(c['display_name'])}")

    def _rotate(self) -> None:
        resealed = services.reseal_account_passwords()
        for pk in resealed.unreadable:
            self.stderr.write(f"account {pk}: the stored password does not decrypt with any key")
        self.stdout.write(f"re-encrypted {resealed.count}")
        if resealed.unreadable:
            raise CommandError(f"{len(resealed.unreadable)} accounts could not be decrypted; "
                               "their owners must connect them again.", returncode=2)
