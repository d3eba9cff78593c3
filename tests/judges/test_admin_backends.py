"""The admin's approval across backends: an OpenAI threshold with log-probabilities, and advice-only refused."""
from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import path, reverse
from django.utils import timezone

from resolver.domain import chat
from resolver.domain.judgment import QUESTION_ID
from resolver.models import ApprovedThreshold
from resolver.thresholds import current_fingerprint

urlpatterns = [path("admin/", admin.site.urls)]
pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]


def make_threshold(**overrides: Any) -> ApprovedThreshold:
    fields: dict[str, Any] = dict(
        question=QUESTION_ID, model="llama3.2:3b", backend="openai", probability_source="logprobs",
        fingerprint=current_fingerprint("openai"), threshold=0.82, cases=400, admitted_accuracy=0.99, coverage=0.7,
        risk_upper_bound=0.02, evaluated_at=timezone.now(), evidence={},
    )
    fields.update(overrides)
    return ApprovedThreshold.objects.create(**fields)


@pytest.fixture
def client() -> Client:
    user = User.objects.create_user(username="reviewer", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(
        content_type__app_label="resolver", codename__in=["view_approvedthreshold", "change_approvedthreshold"]))
    logged_in = Client()
    logged_in.force_login(user)
    return logged_in


def approve(client: Client, row: ApprovedThreshold) -> list[str]:
    response = client.post(reverse("admin:resolver_approvedthreshold_changelist"),
                           {"action": "approve_and_activate", admin.helpers.ACTION_CHECKBOX_NAME: [row.pk]},
                           follow=True)
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_openai_threshold_with_logprobs__approved(client: Client) -> None:
    row = make_threshold()
    messages = approve(client, row)
    row.refresh_from_db()
    assert row.active and row.approved_at is not None, messages


def test_advice_only_threshold__refused(client: Client) -> None:
    row = make_threshold(probability_source="none")
    messages = approve(client, row)
    row.refresh_from_db()
    assert not row.active and row.approved_at is None
    assert any("advice only" in m for m in messages)


def test_openai_row_with_the_jev_fingerprint__refused(client: Client) -> None:
    row = make_threshold(fingerprint=current_fingerprint("jev"))
    messages = approve(client, row)
    row.refresh_from_db()
    assert not row.active and any("fingerprint does not match" in m for m in messages)
