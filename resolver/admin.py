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
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template import engines
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone as django_timezone
from django.utils.html import format_html

from resolver import provenance
from resolver.domain.chat import fingerprint_for
from resolver.domain.judgment import QUESTION_ID
from resolver.models import ApprovedThreshold, ProvenanceEntry

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Changing any of these on an active row voids its approval.
_APPROVED_FIELDS = ("question", "model", "fingerprint", "threshold")


def refusal_reason(row: ApprovedThreshold, current_fingerprint: str) -> str | None:
    """Why this row may not be activated, or None when it may."""
    if row.question != QUESTION_ID:
        return f"it was evaluated for question {row.question!r}, not {QUESTION_ID!r}"
    if row.fingerprint != current_fingerprint:
        return "its fingerprint does not match the current question wording"
    if not 0.0 <= row.threshold <= 1.0:
        return "its threshold is outside [0, 1]"
    return None


def advice_only_refusal(row: ApprovedThreshold) -> str | None:
    """A threshold for a model that gives no probabilities (advice only) is never approved."""
    if row.probability_source == "none":
        return "its model gave no log-probabilities (advice only), so no threshold can apply to it"
    return None


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
        return obj.question == QUESTION_ID and obj.fingerprint == fingerprint_for(obj.backend)

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
        elif was_active and any(getattr(previous, f) != getattr(obj, f) for f in _APPROVED_FIELDS):
            obj.active = False
            obj.approved_by = None
            obj.approved_at = None
            self.message_user(request, "The approved values changed, so the threshold was deactivated.",
                              messages.WARNING)
        super().save_model(request, obj, form, change)

    @admin.action(description="Approve and activate selected thresholds", permissions=["change"])
    def approve_and_activate(self, request: HttpRequest, queryset: QuerySet[ApprovedThreshold]) -> None:
        approvable: list[int] = []
        for row in queryset:
            # Each backend has its own prompt, so its own current fingerprint.
            current = fingerprint_for(row.backend) or ""
            reason = refusal_reason(row, current) or advice_only_refusal(row)
            if reason is None:
                approvable.append(row.pk)
            else:
                self.message_user(request, f"Threshold #{row.pk} was not approved: {reason}.", messages.ERROR)
        if not approvable:
            return
        with transaction.atomic():
            ApprovedThreshold.objects.filter(pk__in=approvable).update(
                active=True, approved_by=request.user, approved_at=django_timezone.now()
            )
        self.message_user(request, f"Approved and activated {len(approvable)} threshold(s).", messages.SUCCESS)

    @admin.action(description="Deactivate selected thresholds", permissions=["change"])
    def deactivate(self, request: HttpRequest, queryset: QuerySet[ApprovedThreshold]) -> None:
        count = queryset.filter(active=True).update(active=False)
        self.message_user(request, f"Deactivated {count} threshold(s).", messages.SUCCESS)


# Provenance lives in the cache, not in a table: two small pages rendered from
# inline templates, listed in the admin through an unmanaged model.
_PROVENANCE_LIST = engines["django"].from_string(
    """{% extends "admin/base_site.html" %}
{% block breadcrumbs %}<div class="breadcrumbs"><a href="{% url 'admin:index' %}">Home</a> &rsaquo; {{ title }}</div>{% endblock %}
{% block content %}
<p>Entries expire {{ ttl }} seconds after they were recorded; expired ones are gone.</p>
{% if entries %}
<table>
  <thead><tr><th>request ID</th><th>recorded (UTC)</th><th>model</th><th>candidates</th>
  <th>decision</th><th>reason</th><th>latency ms</th><th>attempts</th></tr></thead>
  <tbody>
  {% for e in entries %}
  <tr><td><a href="{% url 'admin:resolver_provenanceentry_detail' e.request_id %}">{{ e.request_id }}</a></td>
  <td>{{ e.recorded }}</td><td>{{ e.provenance.model|default:"-" }}</td>
  <td>{{ e.provenance.candidate_count|default:"-" }}</td><td>{{ e.decision }}</td><td>{{ e.reason }}</td>
  <td>{{ e.provenance.latency_ms|default:"-" }}</td><td>{{ e.provenance.attempts|default:"-" }}</td></tr>
  {% endfor %}
  </tbody>
</table>
{% else %}<p>No recent entries.</p>{% endif %}
{% endblock %}"""
)

_PROVENANCE_DETAIL = engines["django"].from_string(
    """{% extends "admin/base_site.html" %}
{% block breadcrumbs %}<div class="breadcrumbs"><a href="{% url 'admin:index' %}">Home</a> &rsaquo;
<a href="{% url 'admin:resolver_provenanceentry_changelist' %}">Judgment provenance</a> &rsaquo; {{ request_id }}</div>{% endblock %}
{% block content %}
{% if entry %}
<table>
  <tr><th>recorded (UTC)</th><td>{{ recorded }}</td></tr>
  <tr><th>decision</th><td>{{ entry.decision }}</td></tr>
  <tr><th>reason</th><td>{{ entry.reason }}</td></tr>
  {% for name, value in provenance_rows %}<tr><th>{{ name }}</th><td>{{ value|default_if_none:"-" }}</td></tr>{% endfor %}
</table>
<h2>Candidates</h2>
<table>
  <thead><tr><th>candidate number</th><th>probability</th><th>item ID</th></tr></thead>
  <tbody>{% for number, p, item_id in candidates %}
  <tr><td>{{ number }}</td><td>{{ p|default_if_none:"-" }}</td><td>{{ item_id|default:"-" }}</td></tr>
  {% endfor %}</tbody>
</table>
{% else %}<p>No entry for this request ID: it may have expired.</p>{% endif %}
{% endblock %}"""
)


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
