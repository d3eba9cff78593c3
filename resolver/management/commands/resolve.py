"""manage.py resolve: the command-line door. Exit codes are documented in the README."""
from __future__ import annotations

import gc
import json
import logging
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from django.core.management.base import BaseCommand, CommandParser

from resolver import deadline, jsonbound, services
from resolver.conf import resolver_settings
from resolver.domain.codes import EXIT_CLARIFICATION, judge_is_off
from resolver.domain.errors import InternalError, InvalidRequest, NoCalendarAccount, ResolverError
# Every command's output escapes untrusted text by the one rule (resolver/domain/escaping.py).
from resolver.domain.escaping import for_terminal as safe, json_text as json_line
from resolver.readable import candidate_when
from resolver.request_ids import new_request_id

def _collector_back_on() -> None:
    """The cyclic collector on again, if the process's entry point turned it off for its start-up.

    The objects start-up made (modules, classes, settings) are frozen first:
    they live as long as the process, so no later collection scans them. The
    collector is on for the read itself, whose parsed calendars are the
    garbage. Called from inside a process whose collector is on (the tests'
    call_command, a host's own entry point), nothing happens.
    """
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


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
        parser.add_argument("--language", metavar="LANGUAGE",
                            help="The reference's language (english, german, french, spanish, ... or en, de, fr, "
                                 "es; default RESOLVER['LANGUAGE']).")
        parser.add_argument("--input", dest="input_path", metavar="-",
                            help='Read {"text", "kind", "collection_ids", "time_zone", "language"} as JSON from '
                                 'standard input.')
        parser.add_argument("--json", action="store_true", help="Print the envelope on stdout.")
        parser.add_argument("--list-collections", action="store_true",
                            help="List the collections that can be searched.")
        parser.add_argument("--user", metavar="USERNAME",
                            help="Bind a clarification to this user: the envelope then carries "
                                 "data.clarification_url, built from RESOLVER_SITE_URL. Without it, no link.")

    def handle(self, *args: Any, **options: Any) -> None:
        _collector_back_on()
        request_id = new_request_id()
        as_json = options["json"]
        # With --json stdout is the envelope and stderr the (JSON) log lines; the
        # human output keeps stderr for people unless --verbosity 2 asks for logs.
        # One deadline for the whole command, whatever it reads (resolver/domain/deadline.py).
        with _log_lines(verbose=as_json or options["verbosity"] >= 2), deadline.budget():
            try:
                caller = self._caller(options["user"])
                if options["list_collections"]:
                    return self._collections(services.collections_envelope(request_id=request_id, caller=caller),
                                             as_json)
                envelope = services.answer(self._document(options), caller=caller, request_id=request_id).envelope
            except Exception as err:  # every failure is an envelope; internals never leak
                code = err.exit_code if isinstance(err, ResolverError) else InternalError.exit_code
                self._fail(services.error_envelope_for(err, request_id=request_id), code, as_json=as_json,
                           hint=_hint(err, options["user"]))
            self._render(envelope, as_json=as_json)

    def _document(self, options: dict[str, Any]) -> Any:
        """The request as a JSON document, from the flags or standard input; the rules are the service's."""
        if options["input_path"] is None:
            if options["text"] is None or options["kind"] is None:
                raise InvalidRequest("Give --text and --kind, or --input -.", details={"field": "text"})
            document = {"text": options["text"], "kind": options["kind"]}
            if options["collections"] is not None:
                document["collection_ids"] = options["collections"]
            for name in ("time_zone", "language"):
                if options[name] is not None:
                    document[name] = options[name]
            return document
        if options["input_path"] != "-":
            raise InvalidRequest(f"--input takes only `-` (standard input), not `{options['input_path']}`.",
                                 details={"field": "input", "value": options["input_path"]})
        if any(options[name] is not None for name in ("text", "kind", "collections", "time_zone", "language")):
            raise InvalidRequest("--input - cannot be combined with --text, --kind, --collection, --time-zone or "
                                 "--language.",
                                 details={"field": "input"})
        raw = _read_bounded(sys.stdin, services.max_body_bytes())
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
            jsonbound.check_text(text)  # before decoding: json.loads recurses (resolver/jsonbound.py)
            return json.loads(text)
        except (ValueError, UnicodeDecodeError):
            raise InvalidRequest("Standard input is not valid JSON.", details={"field": "body"}) from None

    def _caller(self, username: str | None) -> services.Caller:
        if username is None:
            return services.Caller(door="cli")
        return services.Caller(door="cli", user=services.user_for_username(username),
                               base_url=resolver_settings.SITE_URL or None)

    def _collections(self, envelope: dict[str, Any], as_json: bool) -> None:
        if as_json:
            return self._print_json(envelope)
        for c in envelope["data"]["collections"]:
            self.stdout.write(f"{safe(c['collection_id'])}\t{safe(c['display_name'])}")

    def _render(self, envelope: dict[str, Any], *, as_json: bool) -> None:
        data = envelope["data"]
        if as_json:
            self._print_json(envelope)
        elif envelope["status"] == "ok":
            fields = [data["item_id"], data["etag"], data["href"]]
            if data["kind"] == "event":
                # The occurrence the answer is about: a write to one instance of a series needs it.
                occurrence = data.get("occurrence") or {}
                fields += [occurrence.get("start") or "-", occurrence.get("recurrence_id") or "-"]
            self.stdout.write("\t".join(safe(str(f)) for f in fields))
        for warning in envelope["warnings"]:
            if as_json:
                # stderr carries JSON lines only with --json: the warning as a log record's shape.
                self.stderr.write(json_line({"level": "WARNING", "logger": "resolver.command", "warning": warning["code"],
                                             "message": warning["message"]}))
                continue
            if judge_is_off(warning.get("code"), warning.get("details")):
                continue  # the embedded default: nothing is wrong, the candidates say it all
            self.stderr.write(f"warning: {safe(warning['code'])}: {safe(warning['message'])}")
            if warning["code"] in ("closed_item_matched", "other_kind_matched"):
                # Which done item, or item of the other kind, the reference names, as a candidate is shown
                # (never offered: no number).
                for shown in warning["details"].get("items", []):
                    state = shown.get("status") or shown.get("kind", "")
                    self.stderr.write(safe(f"  {shown['title']!r} [{shown['collection_id']}] {state}"
                                           f" {shown['item_id']}"))
        if envelope["status"] != "ok":
            if not as_json:
                self._print_clarification(data)
            raise SystemExit(EXIT_CLARIFICATION)

    def _print_clarification(self, data: dict[str, Any]) -> None:
        self.stderr.write(f"clarification_required: {safe(data['questions'][0]['prompt'])}")
        self.stderr.write(f"reason: {safe(data['reason'])}")
        for number, candidate in enumerate(data["candidates"], start=1):
            # The date every door shows for it (resolver/readable.py), as the envelope writes it.
            found = candidate_when(candidate)
            when = found.iso if found is not None else ""
            mark = " (suggested)" if candidate.get("suggested") else ""
            self.stderr.write(safe(f"  {number}. {candidate['title']!r} [{candidate['collection_id']}] {when}"
                                   f" {candidate['item_id']}{mark}".rstrip()))
        if data.get("clarification_url"):
            self.stderr.write(f"clarification_url: {safe(data['clarification_url'])}")

    def _fail(self, envelope: dict[str, Any], exit_code: int, *, as_json: bool, hint: str | None = None) -> None:
        if as_json:
            self._print_json(envelope)
        else:
            self.stderr.write(f"error: {safe(envelope['error']['code'])}: {safe(envelope['error']['message'])}")
            if hint:
                self.stderr.write(safe(hint))
        raise SystemExit(exit_code)

    def _print_json(self, envelope: dict[str, Any]) -> None:
        self.stdout.write(json_line(envelope))


def _hint(err: BaseException, username: str | None) -> str | None:
    """What to type next, for the errors a person fixes on the command line."""
    if not isinstance(err, NoCalendarAccount):
        return None
    from resolver.management.commands.calendar_accounts import connect_command

    if username is None:
        return ("Per-user accounts read only a user's own accounts: give --user USERNAME. "
                f"To connect one: {connect_command(None)}")
    return f"To connect one: {connect_command(username)}"


def _read_bounded(stream: Any, limit: int) -> bytes | str:
    """At most `limit` bytes of standard input; InvalidRequest (details.max_bytes) past it, read no further."""
    raw = getattr(stream, "buffer", stream).read(limit + 1)
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise services.body_too_large(limit)
    return raw


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
