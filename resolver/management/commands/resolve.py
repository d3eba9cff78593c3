"""manage.py resolve: the command-line door. Exit codes are documented in the README."""
from __future__ import annotations

import json
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from resolver import services
from resolver.conf import resolver_settings
from resolver.domain.errors import EXIT_CLARIFICATION, InvalidRequest, ResolverError
from resolver.domain.pipeline import Outcome, Status
from resolver.envelope import error_envelope, resolver_error_envelope
from resolver.web import services as web_services

INPUT_FIELDS = {"text", "kind", "collection_ids"}


class Command(BaseCommand):
    help = "Resolve a reference to a live task or event (exit 0 resolved, 3 clarification)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--text", help="The reference. Short, non-private text only: argv is visible.")
        parser.add_argument("--kind", help="task or event.")
        parser.add_argument("--collection", action="append", dest="collections", default=None,
                            metavar="ID", help="Search only this collection (repeatable).")
        parser.add_argument("--input", dest="input_path", metavar="-",
                            help='Read {"text", "kind", "collection_ids"} as JSON from standard input.')
        parser.add_argument("--json", action="store_true", help="Print the envelope on stdout.")
        parser.add_argument("--list-collections", action="store_true",
                            help="List the collections that can be searched.")
        parser.add_argument("--user", metavar="USERNAME",
                            help="Bind a clarification to this user: the envelope then carries "
                                 "data.clarification_url, built from RESOLVER_SITE_URL. Without it, no link.")

    def handle(self, *args: Any, **options: Any) -> None:
        request_id = services.new_request_id()
        as_json = options["json"]
        try:
            if options["list_collections"]:
                self._list_collections(request_id, as_json=as_json)
                return
            text, kind, collection_ids = self._inputs(options)
            user_id = self._user_id(options["user"])
            outcome = services.resolve_reference(
                text=text, kind=kind, collection_ids=collection_ids, request_id=request_id, door="cli"
            )
        except ResolverError as err:
            self._fail(resolver_error_envelope(err, request_id=request_id), err.exit_code, as_json=as_json)
        except Exception:  # the envelope says nothing about internals
            import logging

            logging.getLogger("resolver.cli").exception("unexpected error", extra={"request_id": request_id})
            envelope = error_envelope(request_id=request_id, code="internal_error",
                                      message="An unexpected error occurred.")
            self._fail(envelope, 1, as_json=as_json)
        else:
            url = self._clarification_url(outcome, user_id)
            self._render(outcome, as_json=as_json, clarification_url=url)

    def _inputs(self, options: dict[str, Any]) -> tuple[Any, Any, Any]:
        if options["input_path"] is not None:
            if options["input_path"] != "-":
                raise InvalidRequest("--input takes only `-` (standard input).")
            if options["text"] is not None or options["kind"] is not None or options["collections"]:
                raise InvalidRequest("--input - cannot be combined with --text, --kind or --collection.")
            try:
                payload = json.loads(sys.stdin.read())
            except (ValueError, UnicodeDecodeError):
                raise InvalidRequest("Standard input is not valid JSON.") from None
            if not isinstance(payload, dict):
                raise InvalidRequest("Standard input must be a JSON object.")
            unknown = sorted(set(payload) - INPUT_FIELDS)
            if unknown:
                raise InvalidRequest("Unknown fields.", details={"fields": {n: ["Unknown field."] for n in unknown}})
            return payload.get("text"), payload.get("kind"), payload.get("collection_ids")
        if options["text"] is None or options["kind"] is None:
            raise InvalidRequest("Give --text and --kind, or --input -.")
        return options["text"], options["kind"], options["collections"]

    def _list_collections(self, request_id: str, *, as_json: bool) -> None:
        collections = services.list_collections()
        if as_json:
            data = {"collections": [{"collection_id": c.collection_id, "display_name": c.display_name}
                                    for c in collections]}
            self._print_json({"schema_version": 1, "request_id": request_id, "status": "ok", "data": data,
                              "warnings": [], "error": None})
            return
        for c in collections:
            self.stdout.write(f"{c.collection_id}\t{c.display_name}")

    def _user_id(self, username: str | None) -> object:
        """The primary key the page link is bound to; checked before resolving, so a
        typo fails fast instead of producing a link nobody can open."""
        if username is None:
            return None
        if not resolver_settings.SITE_URL:
            raise InvalidRequest(
                "--user needs RESOLVER['SITE_URL'] (the RESOLVER_SITE_URL environment variable).",
                details={"field": "user"},
            )
        user_model = get_user_model()
        try:
            user = user_model._default_manager.get_by_natural_key(username)
        except user_model.DoesNotExist:
            raise InvalidRequest("No such user.", details={"field": "user"}) from None
        if not user.is_active:
            raise InvalidRequest("No such user.", details={"field": "user"})
        return user.pk

    def _clarification_url(self, outcome: Outcome, user_id: object) -> str | None:
        if user_id is None:
            return None
        return web_services.clarification_url(outcome, user_id=user_id, base_url=resolver_settings.SITE_URL)

    def _render(self, outcome: Outcome, *, as_json: bool, clarification_url: str | None = None) -> None:
        envelope = services.envelope_for(outcome, clarification_url=clarification_url)
        if as_json:
            self._print_json(envelope)
        elif outcome.status is Status.OK:
            data = envelope["data"]
            self.stdout.write(f"{data['item_id']}\t{data['etag']}")
        for warning in envelope["warnings"]:
            self.stderr.write(f"warning: {warning['code']}: {warning['message']}")
        if outcome.status is not Status.OK:
            if not as_json:
                self._print_clarification(envelope)
            raise SystemExit(EXIT_CLARIFICATION)

    def _print_clarification(self, envelope: dict[str, Any]) -> None:
        question = envelope["data"]["questions"][0]
        self.stderr.write(f"clarification_required: {question['prompt']}")
        for number, candidate in enumerate(envelope["data"]["candidates"], start=1):
            when = candidate.get("due") or candidate.get("start") or ""
            mark = " (suggested)" if candidate.get("suggested") else ""
            self.stderr.write(
                f"  {number}. {candidate['title']!r} [{candidate['collection_id']}] {when}"
                f" {candidate['item_id']}{mark}".rstrip()
            )
        if envelope["data"].get("clarification_url"):
            self.stderr.write(f"clarification_url: {envelope['data']['clarification_url']}")

    def _fail(self, envelope: dict[str, Any], exit_code: int, *, as_json: bool) -> None:
        if as_json:
            self._print_json(envelope)
        else:
            error = envelope["error"]
            self.stderr.write(f"error: {error['code']}: {error['message']}")
        raise SystemExit(exit_code)

    def _print_json(self, envelope: dict[str, Any]) -> None:
        self.stdout.write(json.dumps(envelope, ensure_ascii=False))
