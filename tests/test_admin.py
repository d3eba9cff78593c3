"""resolver/admin.py: approving and deactivating thresholds, the evidence on the change page, the provenance pages.

A stale fingerprint is flagged in the list. Approval across judge backends
is in tests/judges/test_admin_backends.py.
"""
from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.contrib.messages import get_messages
from django.contrib.messages.storage.cookie import CookieStorage
from django.test import Client, RequestFactory, override_settings
from django.urls import path, reverse
from django.utils import timezone

from resolver import provenance
from resolver.admin import ApprovedThresholdAdmin
from resolver.domain.judgment import QUESTION_ID, question_fingerprint
from resolver.models import ApprovedThreshold
from resolver.thresholds import current_fingerprint

# The admin alone, so these tests do not depend on the rest of the project's URLs.
urlpatterns = [path("admin/", admin.site.urls)]

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

CHANGELIST = "admin:resolver_approvedthreshold_changelist"
PNG_1X1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
LOCMEM = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "admin-tests"}}


@pytest.fixture(autouse=True)
def local_cache() -> Iterator[None]:
    with override_settings(CACHES=LOCMEM):
        from django.core.cache import cache

        cache.clear()
        yield
        cache.clear()


def make_threshold(**overrides: Any) -> ApprovedThreshold:
    fields: dict[str, Any] = dict(
        question=QUESTION_ID,
        model="jev-1.13.0",
        fingerprint=current_fingerprint("jev"),
        threshold=0.82,
        cases=400,
        admitted_accuracy=0.99,
        coverage=0.7,
        risk_upper_bound=0.02,
        evaluated_at=timezone.now(),
        evidence={"cases": 400, "risk": 0.008, "target_risk": 0.01, "model": "jev-1.13.0"},
    )
    fields.update(overrides)
    return ApprovedThreshold.objects.create(**fields)


def staff_user(username: str = "reviewer", *, perms: tuple[str, ...] = ("view", "change")) -> User:
    user = User.objects.create_user(username=username, is_staff=True)
    codenames = [f"{perm}_approvedthreshold" for perm in perms]
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="resolver", codename__in=codenames))
    return user


def client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def run_action(client: Client, action: str, *rows: ApprovedThreshold) -> Any:
    return client.post(
        reverse(CHANGELIST),
        {"action": action, admin.helpers.ACTION_CHECKBOX_NAME: [r.pk for r in rows]},
        follow=True,
    )


def messages_of(response: Any) -> list[tuple[str, str]]:
    return [(m.level_tag, str(m)) for m in get_messages(response.wsgi_request)]


# -- approving ---------------------------------------------------------------------

def test_approve__activates_and_records_who_and_when() -> None:
    user = staff_user()
    row = make_threshold()
    before = timezone.now()
    response = run_action(client_for(user), "approve_and_activate", row)
    row.refresh_from_db()
    assert response.status_code == 200
    assert row.active is True
    assert row.approved_by == user
    assert row.approved_at is not None and row.approved_at >= before
    assert ("success", "Approved and activated 1 threshold(s).") in messages_of(response)


def test_approve__refuses_a_mismatched_fingerprint() -> None:
    row = make_threshold(fingerprint="f" * 64)
    response = run_action(client_for(staff_user()), "approve_and_activate", row)
    row.refresh_from_db()
    assert (row.active, row.approved_by, row.approved_at) == (False, None, None)
    (level, text), = messages_of(response)
    assert level == "error"
    assert f"#{row.pk}" in text and "fingerprint" in text


def test_approve__refuses_another_question() -> None:
    row = make_threshold(question="reference_match.v0")
    response = run_action(client_for(staff_user()), "approve_and_activate", row)
    row.refresh_from_db()
    assert row.active is False
    assert [level for level, _ in messages_of(response)] == ["error"]


def test_approve__a_mixed_selection_approves_only_the_current_rows() -> None:
    good = make_threshold()
    stale = make_threshold(fingerprint="0" * 64)
    response = run_action(client_for(staff_user()), "approve_and_activate", good, stale)
    good.refresh_from_db()
    stale.refresh_from_db()
    assert (good.active, stale.active) == (True, False)
    assert sorted(level for level, _ in messages_of(response)) == ["error", "success"]


def test_approve__the_rankers_certificate_for_the_deployed_model_and_not_another() -> None:
    """Issue 37: the built-in ranker's proposal is approved in the admin as a judge's is, by the deployed model's
    fingerprint (the model file and the encoder it reads); a proposal for another model file is refused."""
    from resolver import rankers

    deployed = rankers.current_fingerprint()
    assert deployed is not None
    current = make_threshold(backend="ranker", model="relevance-cl-1", fingerprint=deployed,
                             probability_source="model", threshold=0.98)
    other = make_threshold(backend="ranker", model="relevance-cl-1", fingerprint="e" * 64,
                           probability_source="model", threshold=0.98)
    user = staff_user()
    response = run_action(client_for(user), "approve_and_activate", current, other)
    current.refresh_from_db()
    other.refresh_from_db()
    assert (current.active, current.approved_by) == (True, user)
    assert (other.active, other.approved_by) == (False, None)
    [error] = [text for level, text in messages_of(response) if level == "error"]
    assert f"#{other.pk}" in error and "fingerprint" in error


def test_approve__needs_the_change_permission() -> None:
    row = make_threshold()
    run_action(client_for(staff_user("viewer", perms=("view",))), "approve_and_activate", row)
    row.refresh_from_db()
    assert row.active is False


def test_deactivate__turns_an_active_row_off() -> None:
    user = staff_user()
    row = make_threshold(active=True, approved_by=user, approved_at=timezone.now())
    run_action(client_for(user), "deactivate", row)
    row.refresh_from_db()
    assert row.active is False


# -- the change form cannot activate ---------------------------------------------------

def test_change_form__posting_active_does_not_activate() -> None:
    row = make_threshold()
    client = client_for(staff_user())
    url = reverse("admin:resolver_approvedthreshold_change", args=[row.pk])
    response = client.post(url, {"active": "on", "threshold": "0.1", "_save": "Save"})
    row.refresh_from_db()
    assert response.status_code == 302
    assert (row.active, row.approved_at, row.threshold) == (False, None, 0.82)


def _request_as(user: User) -> Any:
    request = RequestFactory().post("/admin/")
    request.user = user
    request._messages = CookieStorage(request)
    return request


def test_save_model__refuses_to_activate_without_approval() -> None:
    """Even if a form let `active` through, saving does not activate."""
    row = make_threshold()
    row.active = True
    model_admin = ApprovedThresholdAdmin(ApprovedThreshold, admin.site)
    model_admin.save_model(_request_as(staff_user()), row, form=None, change=True)
    row.refresh_from_db()
    assert row.active is False


def test_save_model__changing_approved_values_voids_the_approval() -> None:
    user = staff_user()
    row = make_threshold(active=True, approved_by=user, approved_at=timezone.now())
    row.threshold = 0.5
    model_admin = ApprovedThresholdAdmin(ApprovedThreshold, admin.site)
    model_admin.save_model(_request_as(user), row, form=None, change=True)
    row.refresh_from_db()
    assert (row.active, row.approved_by, row.approved_at, row.threshold) == (False, None, None, 0.5)


def test_save_model__an_untouched_active_row_stays_active() -> None:
    user = staff_user()
    row = make_threshold(active=True, approved_by=user, approved_at=timezone.now())
    model_admin = ApprovedThresholdAdmin(ApprovedThreshold, admin.site)
    model_admin.save_model(_request_as(user), row, form=None, change=True)
    row.refresh_from_db()
    assert row.active is True


def test_add__is_not_offered() -> None:
    client = client_for(staff_user(perms=("view", "change", "add")))
    assert client.get(reverse("admin:resolver_approvedthreshold_add")).status_code == 403


# -- display ---------------------------------------------------------------------------

def test_change_page__shows_evidence_and_the_plot() -> None:
    row = make_threshold(plot_png=PNG_1X1)
    client = client_for(staff_user())
    page = client.get(reverse("admin:resolver_approvedthreshold_change", args=[row.pk])).content.decode()
    assert "&quot;target_risk&quot;: 0.01" in page
    assert f'src="data:image/png;base64,{base64.b64encode(PNG_1X1).decode()}"' in page


def test_change_page__a_stored_non_png_is_not_rendered_as_an_image() -> None:
    row = make_threshold(plot_png=b"<svg onload=alert(1)>")
    client = client_for(staff_user())
    page = client.get(reverse("admin:resolver_approvedthreshold_change", args=[row.pk])).content.decode()
    assert "not a PNG" in page
    assert "data:image/png" not in page


def test_changelist__flags_a_stale_fingerprint() -> None:
    make_threshold(model="current-model")
    make_threshold(model="stale-model", fingerprint="1" * 64)
    page = client_for(staff_user()).get(reverse(CHANGELIST)).content.decode()
    assert "current-model" in page and "stale-model" in page
    assert page.count('alt="True"') == 1


# -- provenance browsing -------------------------------------------------------------------

def record_entry(request_id: str) -> None:
    provenance.record(
        request_id=request_id,
        provenance={"question": QUESTION_ID, "fingerprint": question_fingerprint(), "model": "jev-1.13.0",
                    "jev_request_id": "req_jev_9", "candidate_count": 2, "latency_ms": 120, "attempts": 1},
        probabilities_by_number={1: 0.9, 2: 0.05},
        number_to_item_id={1: "itm_aaa", 2: "itm_bbb"},
        decision="resolved",
        reason="approved_threshold_met",
    )


def test_provenance_pages__list_and_detail_for_staff() -> None:
    record_entry("req-admin-1")
    client = client_for(staff_user(perms=()))
    listing = client.get(reverse("admin:resolver_provenanceentry_changelist"))
    assert listing.status_code == 200
    assert "req-admin-1" in listing.content.decode()
    detail = client.get(reverse("admin:resolver_provenanceentry_detail", args=["req-admin-1"]))
    page = detail.content.decode()
    assert detail.status_code == 200
    assert "itm_aaa" in page and "itm_bbb" in page and "approved_threshold_met" in page and "jev-1.13.0" in page


def test_provenance_pages__an_unknown_or_expired_entry_is_a_404() -> None:
    client = client_for(staff_user(perms=()))
    response = client.get(reverse("admin:resolver_provenanceentry_detail", args=["req-gone"]))
    assert response.status_code == 404
    assert "may have expired" in response.content.decode()


def test_provenance_pages__not_for_non_staff() -> None:
    record_entry("req-admin-2")
    user = User.objects.create_user(username="plain")
    response = client_for(user).get(reverse("admin:resolver_provenanceentry_changelist"))
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
