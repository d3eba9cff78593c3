"""manage.py mcp: the resolver's tools for AI agents over MCP (stdio). Exit codes in the README."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from resolver import services
from resolver.conf import resolver_settings
from resolver.domain.errors import InvalidRequest


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

        run_stdio(Tools(caller=self._caller(options["user"])))

    def _caller(self, username: str | None) -> services.Caller:
        """Checked at start-up, so a typo fails before any agent connects (exit 2, on stderr)."""
        if username is None:
            return services.Caller(door="mcp")
        try:
            user = services.user_for_username(username)
        except InvalidRequest as err:
            raise CommandError(err.message, returncode=2) from None
        return services.Caller(door="mcp", user=user, base_url=resolver_settings.SITE_URL or None)
