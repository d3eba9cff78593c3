"""manage.py thresholds: list, approve and deactivate approved thresholds, as the admin does.

    thresholds list [--json]
    thresholds approve ID --by USERNAME
    thresholds deactivate ID

Approval goes through resolver.thresholds.approve_thresholds, the admin
action's own rule: it refuses exactly what the admin refuses. Exit codes: 0
done; 2 `threshold_not_found` (no row with that ID); 3 `unknown_user` (no
such user, inactive, or not a staff member with the change permission);
4 `approval_refused` (the reason is printed); 1 anything unexpected.
Errors go to stderr as `error: CODE: message`.
"""
from __future__ import annotations

from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandParser

from resolver import thresholds
from resolver.models import ApprovedThreshold
from resolver.domain.escaping import for_terminal as safe, json_text

SHORT_FINGERPRINT = 12


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


class Command(BaseCommand):
    help = "List, approve (as a named staff user) and deactivate approved thresholds."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True, metavar="{list,approve,deactivate}")
        listing = sub.add_parser("list", help="Every stored threshold, newest first.")
        listing.add_argument("--json", action="store_true", help="Print JSON on stdout.")
        approve = sub.add_parser("approve", help="Approve and activate one threshold (the admin's rule).")
        approve.add_argument("id", metavar="ID", help="The threshold's ID (from list).")
        approve.add_argument("--by", required=True, metavar="USERNAME",
                             help="Who approves it: a staff user with the change permission on thresholds.")
        deactivate = sub.add_parser("deactivate", help="Deactivate one threshold: the resolver asks again.")
        deactivate.add_argument("id", metavar="ID", help="The threshold's ID (from list).")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            if options["action"] == "list":
                return self._list(as_json=options["json"])
            if options["action"] == "approve":
                row = thresholds.approve_one(options["id"], username=options["by"])
                self.stdout.write(f"approved and activated threshold #{row.pk}: {row.threshold:.2f} for "
                                  f"{safe(row.model)} ({safe(row.backend)}), by {safe(options['by'])}")
                return None
            row, changed = thresholds.deactivate_one(options["id"])
            self.stdout.write(f"deactivated threshold #{row.pk}" if changed
                              else f"threshold #{row.pk} was not active: nothing changed")
            return None
        except thresholds.ThresholdCommandError as err:
            self._fail(err)

    def _list(self, *, as_json: bool) -> None:
        rows = [thresholds.listing(row) for row in ApprovedThreshold.objects.select_related("approved_by")]
        if as_json:
            self.stdout.write(json_text({"thresholds": rows}))
            return
        if not rows:
            self.stdout.write("no thresholds stored: propose one with manage.py evaluate_reference_match --propose")
            return
        self.stdout.write("\t".join(("id", "question", "backend", "model", "fingerprint", "threshold", "n", "k",
                                     "coverage", "active", "approved_by", "approved_at")))
        for row in rows:
            fingerprint = row["fingerprint"][:SHORT_FINGERPRINT] + ("" if row["fingerprint_current"] else " (stale)")
            # Model names and usernames are stored text: escaped, so no row can forge another.
            self.stdout.write("\t".join(safe(cell) for cell in (
                str(row["id"]), row["question"], row["backend"], row["model"], fingerprint,
                _number(row["threshold"], ".2f"), str(row["n"]), "-" if row["k"] is None else str(row["k"]),
                _number(row["coverage"], ".3f"), "yes" if row["active"] else "no",
                row["approved_by"] or "-", row["approved_at"] or "-",
            )))

    def _fail(self, err: thresholds.ThresholdCommandError) -> NoReturn:
        self.stderr.write(f"error: {err.code}: {safe(err)}")
        raise SystemExit(err.exit_code)
