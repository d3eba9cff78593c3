"""manage.py resolve: the command-line door. Exit codes are documented in the README."""
from __future__ import annotations

import json
import logging
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from resolver import services
from resolver.conf import resolver_settings
from resolver.domain.errors import EXIT_CLARIFICATION, InternalError, InvalidRequest, ResolverError

# Loggers whose lines would interleave with the human output on stderr.
_QUIET_LOGGERS = ("resolver", "resolver.requests")


class Command(BaseCommand):
    help = "Resolve a reference to a live task or event (exit 0 resolved, 3 clarification)."
    # A fresh process per call: the resolver's own checks (its settings), not
    # the URL and admin checks, which import every view, DRF and the schema.
    requires_system_checks = ["resolver"]

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--text", help="The reference. Short, non-private text only: argv is visible.")
        parser.add_argument("--kind", help="task or event.")
        parser.add_argument("--collection", action="append", dest="collections", default=None,
                            metavar="ID", help="Search only this collection (repeatable).")
        parser.add_argument("--time-zone", dest="time_zone", metavar="ZONE",
                            help="IANA zone the reference's times are read in (default RESOLVER['TIME_ZONE']).")
        parser.add_argument("--input", dest="input_path", metavar="-",
                            help='Read {"text", "kind", "collection_ids", "time_zone"} as JSON from standard input.')
        parser.add_argument("--json", action="store_true", help="Print the envelope on stdout.")
        parser.add_argument("--list-collections", action="store_true",
                            help="List the collections that can be searched.")
        parser.add_argument("--user", metavar="USERNAME",
                            help="Bind a clarification to this user: the envelope then carries "
                                 "data.clarification_url, built from RESOLVER_SITE_URL. Without it, no link.")

    def handle(self, *args: Any, **options: Any) -> None:
        request_id = services.new_request_id()
        as_json = options["json"]
        # With --json stdout is the envelope and stderr the (JSON) log lines; the
        # human output keeps stderr for people unless --verbosity 2 asks for logs.
        with _log_lines(verbose=as_json or options["verbosity"] >= 2):
            try:
                if options["list_collections"]:
                    return self._collections(services.collections_envelope(request_id=request_id), as_json)
                user_id = self._user_id(options["user"])
                outcome = self._resolve(options, request_id)
                url = None if user_id is None else services.clarification_url(
                    outcome, user_id=user_id, base_url=resolver_settings.SITE_URL)
                envelope = services.envelope_for(outcome, clarification_url=url)
            except Exception as err:  # every failure is an envelope; internals never leak
                code = err.exit_code if isinstance(err, ResolverError) else InternalError.exit_code
                self._fail(services.error_envelope_for(err, request_id=request_id), code, as_json=as_json)
            self._render(envelope, as_json=as_json)

    def _resolve(self, options: dict[str, Any], request_id: str) -> Any:
        if options["input_path"] is None:
            if options["text"] is None or options["kind"] is None:
                raise InvalidRequest("Give --text and --kind, or --input -.", details={"field": "text"})
            return services.resolve_reference(text=options["text"], kind=options["kind"],
                                              collection_ids=options["collections"],
                                              time_zone=options["time_zone"], request_id=request_id, door="cli")
        if options["input_path"] != "-":
            raise InvalidRequest("--input takes only `-` (standard input).", details={"field": "input"})
        if any(options[name] is not None for name in ("text", "kind", "collections", "time_zone")):
            raise InvalidRequest("--input - cannot be combined with --text, --kind, --collection or --time-zone.",
                                 details={"field": "input"})
        try:
            document = json.loads(sys.stdin.read())
        except (ValueError, UnicodeDecodeError):
            raise InvalidRequest("Standard input is not valid JSON.", details={"field": "body"}) from None
        return services.resolve_document(document, request_id=request_id, door="cli")

    def _user_id(self, username: str | None) -> object:
        """The primary key the page link is bound to; checked before resolving, so a
        typo fails fast instead of producing a link nobody can open."""
        if username is None:
            return None
        if not resolver_settings.SITE_URL:
            raise InvalidRequest("--user needs RESOLVER['SITE_URL'] (the RESOLVER_SITE_URL environment variable).",
                                 details={"field": "user"})
        user_model = get_user_model()
        try:
            user = user_model._default_manager.get_by_natural_key(username)
        except user_model.DoesNotExist:
            raise InvalidRequest("No such user.", details={"field": "user"}) from None
        if not user.is_active:
            raise InvalidRequest("No such user.", details={"field": "user"})
        return user.pk

    def _collections(self, envelope: dict[str, Any], as_json: bool) -> None:
        if as_json:
            return self._print_json(envelope)
        for c in envelope["data"]["collections"]:
            self.stdout.write(f"{c['collection_id']}\t{c['display_name']}")

    def _render(self, envelope: dict[str, Any], *, as_json: bool) -> None:
        data = envelope["data"]
        if as_json:
            self._print_json(envelope)
        elif envelope["status"] == "ok":
            self.stdout.write(f"{data['item_id']}\t{data['etag']}\t{data['href']}")
        for warning in envelope["warnings"]:
            self.stderr.write(f"warning: {warning['code']}: {warning['message']}")
        if envelope["status"] != "ok":
            if not as_json:
                self._print_clarification(data)
            raise SystemExit(EXIT_CLARIFICATION)

    def _print_clarification(self, data: dict[str, Any]) -> None:
        self.stderr.write(f"clarification_required: {data['questions'][0]['prompt']}")
        self.stderr.write(f"reason: {data['reason']}")
        for number, candidate in enumerate(data["candidates"], start=1):
            when = candidate.get("due") or candidate.get("start") or ""
            mark = " (suggested)" if candidate.get("suggested") else ""
            self.stderr.write(f"  {number}. {candidate['title']!r} [{candidate['collection_id']}] {when}"
                              f" {candidate['item_id']}{mark}".rstrip())
        if data.get("clarification_url"):
            self.stderr.write(f"clarification_url: {data['clarification_url']}")

    def _fail(self, envelope: dict[str, Any], exit_code: int, *, as_json: bool) -> None:
        if as_json:
            self._print_json(envelope)
        else:
            self.stderr.write(f"error: {envelope['error']['code']}: {envelope['error']['message']}")
        raise SystemExit(exit_code)

    def _print_json(self, envelope: dict[str, Any]) -> None:
        self.stdout.write(json.dumps(envelope, ensure_ascii=False))


@contextmanager
def _log_lines(*, verbose: bool) -> Iterator[None]:
    """Unless `verbose`, the resolver's log lines are held back: stderr is for people.

    Errors (a traceback behind internal_error) are always written.
    """
    if verbose:
        yield
        return
    loggers = [logging.getLogger(name) for name in _QUIET_LOGGERS]
    saved = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, saved):
            lg.setLevel(level)
