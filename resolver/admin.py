"""Admin: approve evaluated thresholds; browse recent judgment provenance.

A threshold only becomes active through the approve action, which records who
approved it and when, and refuses a row evaluated for another question wording.
Nothing typed into a change form can activate a row.
"""
from __future__ import annotations

import base64
import json
from datetime import datetime, timezone
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.html import format_html

from resolver import provenance, thresholds
from resolver.models import ApprovedThreshold, CalendarAccount, ProvenanceEntry

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@admin.register(ApprovedThreshold)
class ApprovedThresholdAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "question",
        "model",
        "threshold",
        "cases",
        "admitted_accuracy",
        "coverage",
        "risk_upper_bound",
        "evaluated_at",
        "fingerprint_current",
        "active",
        "approved_by",
        "approved_at",
    )
    list_filter = ("active", "question", "model")
    search_fields = ("model", "fingerprint")
    actions = ("approve_and_activate", "deactivate")
    fields = (
        "question",
        "model",
        "backend",
        "probability_source",
        "fingerprint",
        "fingerprint_current",
        "threshold",
        "cases",
        "admitted_accuracy",
        "coverage",
        "risk_upper_bound",
        "evaluated_at",
        "evidence_pretty",
        "plot",
        "created_at",
        "active",
        "approved_by",
        "approved_at",
    )
    # Everything is evidence from an evaluation run: read-only. `active` changes
    # only through the actions below.
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Rows come from an evaluation run, with their evidence; never typed in.
        return False

    @admin.display(boolean=True, description="fingerprint current")
    def fingerprint_current(self, obj: ApprovedThreshold) -> bool:
        return (obj.question == thresholds.current_question(obj.backend)
                and obj.fingerprint == thresholds.current_fingerprint(obj.backend))

    @admin.display(description="evidence")
    def evidence_pretty(self, obj: ApprovedThreshold) -> str:
        text = json.dumps(obj.evidence or {}, indent=2, sort_keys=True, ensure_ascii=False)
        return format_html('<pre style="white-space: pre-wrap">{}</pre>', text)

    @admin.display(description="plot")
    def plot(self, obj: ApprovedThreshold) -> str:
        data = bytes(obj.plot_png) if obj.plot_png else b""
        if not data:
            return "-"
        if not data.startswith(_PNG_SIGNATURE):
            return "(stored plot is not a PNG)"
        encoded = base64.b64encode(data).decode("ascii")
        return format_html(
            '<img src="data:image/png;base64,{}" alt="evaluation plot" style="max-width: 100%">',
            encoded,
        )

    def save_model(self, request: HttpRequest, obj: ApprovedThreshold, form: Any, change: bool) -> None:
        previous = ApprovedThreshold.objects.filter(pk=obj.pk).first() if change and obj.pk else None
        was_active = previous is not None and previous.active
        if obj.active and not was_active:
            # Activation needs a recorded approval: only the action gives one.
            obj.active = False
            self.message_user(
                request,
                "A threshold is activated only by the “Approve and activate” action; it was saved inactive.",
                messages.WARNING,
            )
        elif was_active and thresholds.approval_voided(previous, obj):
            obj.active = False
            obj.approved_by = None
            obj.approved_at = None
            self.message_user(request, "The approved values changed, so the threshold was deactivated.",
                              messages.WARNING)
        super().save_model(request, obj, form, change)

    @admin.action(description="Approve and activate selected thresholds", permissions=["change"])
    def approve_and_activate(self, request: HttpRequest, queryset: QuerySet[ApprovedThreshold]) -> None:
        result = thresholds.approve_thresholds(rows=queryset, user=request.user)
        for pk, reason in result.refused.items():
            self.message_user(request, f"Threshold #{pk} was not approved: {reason}.", messages.ERROR)
        if result.approved:
            self.message_user(request, f"Approved and activated {len(result.approved)} threshold(s).",
                              messages.SUCCESS)

    @admin.action(description="Deactivate selected thresholds", permissions=["change"])
    def deactivate(self, request: HttpRequest, queryset: QuerySet[ApprovedThreshold]) -> None:
        count = queryset.filter(active=True).update(active=False)
        self.message_user(request, f"Deactivated {count} threshold(s).", messages.SUCCESS)


# Provenance lives in the cache, not in a table: two small pages, listed in the
# admin through an unmanaged model.
_PROVENANCE_LIST = "admin/resolver/provenance_list.html"

_PROVENANCE_DETAIL = "admin/resolver/provenance_detail.html"


def _recorded(entry: dict[str, Any]) -> str:
    stamp = entry.get("recorded_at")
    if not isinstance(stamp, (int, float)):
        return "-"
    return datetime.fromtimestamp(stamp, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _candidate_rows(entry: dict[str, Any]) -> list[tuple[int, float | None, str | None]]:
    probabilities = entry.get("probabilities_by_number") or {}
    items = entry.get("number_to_item_id") or {}
    numbers = sorted({int(n) for n in (*probabilities, *items)})
    return [(n, probabilities.get(str(n)), items.get(str(n))) for n in numbers]


@admin.register(ProvenanceEntry)
class ProvenanceEntryAdmin(admin.ModelAdmin):
    def _is_staff(self, request: HttpRequest) -> bool:
        user = request.user
        return bool(user.is_active and user.is_staff)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self._is_staff(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._is_staff(request)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_urls(self) -> list[Any]:
        view = self.admin_site.admin_view
        return [
            path("", view(self.changelist_view), name="resolver_provenanceentry_changelist"),
            path("<str:request_id>/", view(self.detail_view), name="resolver_provenanceentry_detail"),
        ]

    def _context(self, request: HttpRequest, **extra: Any) -> dict[str, Any]:
        return {**self.admin_site.each_context(request), "opts": self.opts, **extra}

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        entries = [{**entry, "recorded": _recorded(entry)} for entry in provenance.recent()]
        context = self._context(
            request,
            title="Recent judgment provenance",
            entries=entries,
            ttl=provenance.ttl_seconds(),
        )
        return TemplateResponse(request, _PROVENANCE_LIST, context)

    def detail_view(self, request: HttpRequest, request_id: str) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        entry = provenance.get(request_id)
        context = self._context(request, title=f"Judgment provenance {request_id}", request_id=request_id, entry=entry)
        if entry is None:
            return TemplateResponse(request, _PROVENANCE_DETAIL, context, status=404)
        prov = entry.get("provenance") or {}
        context.update(
            recorded=_recorded(entry),
            provenance_rows=[(name, prov.get(name)) for name in provenance.PROVENANCE_FIELDS] if prov else [],
            candidates=_candidate_rows(entry),
        )
        return TemplateResponse(request, _PROVENANCE_DETAIL, context)


@admin.register(CalendarAccount)
class CalendarAccountAdmin(admin.ModelAdmin):
    """Staff see who connected which server, never a password (not even encrypted).

    Accounts are added by their owner (the accounts page, or the command), where
    the password is checked live against the server; here they can only be
    looked at, relabelled or removed.
    """

    list_display = ("user", "slug", "label", "url", "username", "created_at")
    list_filter = ("user",)
    search_fields = ("user__username", "slug", "label", "url", "username")
    fields = ("user", "slug", "label", "url", "username", "created_at")
    readonly_fields = ("user", "slug", "url", "username", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
