"""manage.py mcp: the resolver's tools for AI agents over MCP (stdio). Exit codes in the README."""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from resolver.conf import resolver_settings


class Command(BaseCommand):
    help = "Serve resolve_reference and list_collections to an MCP client over standard input/output."
    # System checks run first, as for every command: their report goes to stderr,
    # so stdout stays the protocol's channel from the first byte.

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", metavar="USERNAME",
                            help="Bind clarifications to this user: envelopes then carry "
                                 "data.clarification_url, built from RESOLVER_SITE_URL. Without it, no link.")

    def handle(self, *args: Any, **options: Any) -> None:
        from resolver.mcp.server import run_stdio
        from resolver.mcp.tools import Tools

        run_stdio(Tools(user_id=self._user_id(options["user"]), site_url=resolver_settings.SITE_URL))

    def _user_id(self, username: str | None) -> object:
        """Checked at start-up, so a typo fails before any agent connects (exit 2, on stderr)."""
        if username is None:
            return None
        if not resolver_settings.SITE_URL:
            raise CommandError("--user needs RESOLVER_SITE_URL.", returncode=2)
        user_model = get_user_model()
        try:
            user = user_model._default_manager.get_by_natural_key(username)
        except user_model.DoesNotExist:
            raise CommandError("No such user.", returncode=2) from None
        if not user.is_active:
            raise CommandError("No such user.", returncode=2)
        return user.pk
