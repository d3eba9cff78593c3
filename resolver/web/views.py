"""The page door: a search form, the clarification page, and the confirmation.

Views parse the request, call one service, and render. Every failure is a page
with a status, never a traceback. Nothing here writes to the calendar.

A view that reads the calendar (`reading`) is one request whatever its steps
(a pick, then the question again): throttled per person in the API's bucket,
one of the person's places in flight, and one deadline for all of it.
"""
from __future__ import annotations

import functools
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from resolver import services
from resolver.clarifications import ClarificationClaims
from resolver.domain.codes import Reason
from resolver.domain.errors import (
    CalendarUnavailable, CandidateGone, ClarificationExpired, ClarificationNotFound, NoCalendarAccount,
    NotACandidate, OccurrenceGone, ResolverError, Throttled,
)
from resolver.domain.items import Item, Method
from resolver.domain.judgment import RANKER_BACKEND, Judgment
from resolver.domain.pipeline import Outcome, Status
from resolver.envelope import item_dict
from resolver.readable import When, item_when, readable_date
from resolver.templatetags.resolver_tags import resolver_accounts_url
from resolver.web.clarification import card_when
from resolver.web.forms import ResolveForm, SelectForm


class HttpResponseSeeOther(HttpResponseRedirect):
    # After a POST the browser must GET the next page, whatever the next page is.
    status_code = 303


def reading(*, on_get: bool) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """The view reads the calendar (on POST, and on GET too when `on_get`): one request, bounded per person."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if request.method != "POST" and not on_get:
                return view(request, *args, **kwargs)
            caller = _caller(request)
            try:
                services.check_rate(caller)
                with services.request(caller):
                    return view(request, *args, **kwargs)
            except Throttled as err:
                page = _error_page(request, status=429, title="Too many requests", message=_plain(err.message))
                page["Retry-After"] = str(err.details.get("retry_after_seconds", 1))
                return page

        return wrapper

    return decorate


@never_cache
@login_required
@require_http_methods(["GET", "HEAD", "POST"])
@reading(on_get=False)
def search(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        form = ResolveForm(initial={
            "kind": request.GET.get("kind") or "task",
            "collections": request.GET.get("collections", ""),
            "next": _safe_next(request, request.GET.get("next")) or "",
        })
        return _search_page(request, form)

    form = ResolveForm(request.POST)
    if not form.is_valid():
        return _search_page(request, form, status=400)
    data = form.cleaned_data
    document = {"text": data["text"], "kind": data["kind"], "collection_ids": data["collections"]}
    if data["time_zone"]:
        document["time_zone"] = data["time_zone"]
    try:
        answer = services.answer(document, caller=_caller(request))
    except ResolverError as err:
        return _search_page(request, form, error=_plain(err.message), status=err.http_status,
                            error_link=_error_link(err))

    next_url = _safe_next(request, data.get("next"))
    if answer.status is Status.OK:
        assert answer.outcome.item is not None
        if next_url:
            return HttpResponseSeeOther(_with_item(next_url, answer.outcome.item))
        return _confirmation(request, answer.outcome)
    path = answer.clarification_url
    assert path is not None  # this view is mounted, so the page's URL reverses
    _remember_typed(request, answer.outcome.request_id, data["text"])
    if next_url:
        path += "?" + urlencode({"next": next_url})
    return HttpResponseSeeOther(path)


@never_cache
@login_required
@require_http_methods(["GET", "HEAD", "POST"])
@reading(on_get=True)
def clarify(request: HttpRequest, token: str) -> HttpResponse:
    try:
        claims = services.read_clarification(token, caller=_caller(request))
    except ClarificationExpired:
        return _error_page(request, status=410, title="This question has expired",
                           message="Clarification links are valid for a limited time. Search again.",
                           link=(reverse("resolver_web:search"), "Search again"))
    except ClarificationNotFound:
        # Tampered and foreign tokens look the same: nothing hints which.
        return _error_page(request, status=404, title="Not found",
                           message="This clarification link is not valid.",
                           link=(reverse("resolver_web:search"), "Search again"))

    if request.method != "POST":
        next_url = _safe_next(request, request.GET.get("next"))
        return _clarification_page(request, claims, next_url=next_url)

    form = SelectForm(request.POST)
    next_url = _safe_next(request, request.POST.get("next"))
    if not form.is_valid():
        return _clarification_page(request, claims, next_url=next_url,
                                   error="Choose one of the items.", status=400)
    try:
        outcome = services.pick(claims, item_id=form.cleaned_data["item_id"], caller=_caller(request)).outcome
    except NotACandidate:
        return _error_page(request, status=400, title="Not one of the choices",
                           message="The item you sent was not offered for this question.",
                           link=(_retry_path(request, next_url), "Back to the question"))
    except CandidateGone:
        return _clarification_page(request, claims, next_url=next_url, status=409,
                                   error="That item no longer exists or is no longer open. Choose another.")
    except OccurrenceGone:
        return _clarification_page(request, claims, next_url=next_url, status=409,
                                   error="The occurrence you were shown is no longer on the calendar. "
                                         "Choose another, or search again.")
    except CalendarUnavailable:
        return _calendar_down(request, retry=_retry_path(request, next_url))
    except ResolverError as err:
        return _error_page(request, status=err.http_status, title="Something went wrong",
                           message=_plain(err.message), link=_error_link(err))
    assert outcome.item is not None
    if next_url:
        return HttpResponseSeeOther(_with_item(next_url, outcome.item))
    return _confirmation(request, outcome)


def _caller(request: HttpRequest) -> services.Caller:
    # Links are host-relative here: the page is where the person already is.
    return services.Caller(door="web", user=request.user, base_url="")


def _plain(message: str) -> str:
    """A service message for the page: its `code` marks are for terminals and JSON, not HTML."""
    return message.replace("`", "")


def _search_page(request: HttpRequest, form: ResolveForm, *, error: str | None = None,
                 error_link: tuple[str, str] | None = None, status: int = 200) -> HttpResponse:
    return render(request, "resolver/search.html", {"form": form, "error": error, "error_link": error_link},
                  status=status)


def _error_link(err: ResolverError) -> tuple[str, str] | None:
    """Where the person fixes the error themselves: no account yet, the accounts page."""
    if isinstance(err, NoCalendarAccount):
        url = resolver_accounts_url()
        if url:
            return url, "Connect a calendar account"
    return None


# What the person typed, per clarification, kept in their own session: the token
# never carries the reference (it is signed, not encrypted, and sits in URLs),
# so the page shows it only to the browser that asked. A few recent ones suffice.
TYPED_SESSION_KEY = "resolver_typed"
TYPED_KEPT = 10


def _remember_typed(request: HttpRequest, request_id: str, text: str) -> None:
    typed = [pair for pair in request.session.get(TYPED_SESSION_KEY, []) if pair[0] != request_id]
    request.session[TYPED_SESSION_KEY] = (typed + [[request_id, text]])[-TYPED_KEPT:]


def _typed(request: HttpRequest, request_id: str) -> str | None:
    return next((text for rid, text in request.session.get(TYPED_SESSION_KEY, []) if rid == request_id), None)


def _clarification_page(request: HttpRequest, claims: ClarificationClaims, *, next_url: str | None,
                        error: str | None = None, status: int = 200) -> HttpResponse:
    try:
        candidates = services.clarification_candidates(claims, caller=_caller(request))
        closed = services.clarification_closed(claims, caller=_caller(request)) if not candidates else []
    except CalendarUnavailable:
        return _calendar_down(request, retry=_retry_path(request, next_url))
    except ResolverError as err:
        return _error_page(request, status=err.http_status, title="Something went wrong",
                           message=_plain(err.message), link=_error_link(err))
    reason = Reason.for_page(claims.reason, has_candidates=bool(claims.candidate_ids))
    choosable = [c for c in candidates if c.choosable]
    context: dict[str, Any] = {
        "cards": [{"candidate": c, "when": card_when(c)} for c in candidates],
        "candidates": candidates,
        "choosable": any(c.choosable for c in candidates),
        "has_suggestion": any(c.suggested and c.choosable for c in candidates),
        "kind": claims.kind.value,
        "reason": reason,
        "heading": reason.page_heading(claims.kind.value),
        "next": next_url or "",
        "search_again_url": _search_again_url(claims, next_url),
        "error": error,
        "typed": _typed(request, claims.request_id),
        # The done items, or the other kind's, the reference names: what became of them, or what they are
        # (never choosable).
        "closed": [{"title": item.title, "status": (item.status or "").lower() if item.kind is claims.kind
                    else item.kind.with_article} for item in closed],
        # One candidate: the question is the heading and the answer is ready; submitting says yes.
        # Not when the judge said none matches: a ticked box there would nudge towards a guess.
        "preselected": (choosable[0].item_id if reason.yes_or_no and len(candidates) == 1
                        and len(choosable) == 1 else None),
    }
    return render(request, "resolver/clarify.html", context, status=status)


def _confirmation(request: HttpRequest, outcome: Outcome) -> HttpResponse:
    assert outcome.item is not None
    facts = item_dict(outcome.item, outcome)
    occurrence = facts.get("occurrence")
    context = {
        "item": outcome.item, "when": _label(item_when(outcome.item)),
        "method": outcome.method.value if outcome.method else None,
        "how": _how_found(outcome),
        "confidence": _confidence(outcome),
        "occurrence": occurrence,
        "occurrence_start": readable_date(occurrence["start"]) if occurrence else None,
    }
    return render(request, "resolver/confirmation.html", context)


def _how_found(outcome: Outcome) -> str | None:
    if outcome.method is None:
        return None
    if outcome.method is Method.SEMANTIC and isinstance(outcome.judgment, Judgment) \
            and outcome.judgment.backend == RANKER_BACKEND:
        return HOW_RANKED
    return HOW_FOUND.get(outcome.method)


def _confidence(outcome: Outcome) -> dict[str, Any] | None:
    """What allowed a resolution on confidence, as the envelope's provenance says it: the probability, the
    runner-up's, and the approved threshold. None for any other method."""
    if outcome.method is not Method.SEMANTIC:
        return None
    provenance = services.provenance_of(outcome)
    if provenance is None or provenance.get("threshold") is None:
        return None
    return {"probability": f"{provenance['probability']:.3f}",
            "runner_up": f"{provenance['runner_up_probability']:.3f}",
            "threshold": f"{provenance['threshold']:.3f}", "threshold_id": provenance["threshold_id"],
            "model": provenance["model"]}


def _label(found: When | None) -> tuple[str, str] | None:
    """(label, readable date) of an item on the confirmation: its due or its start."""
    return (found.label, found.readable) if found is not None else None


# How the item was found, in the person's words; the method's name stays in data-method for scripts.
HOW_FOUND = {
    Method.USER_SELECTED: "You picked this item",
    Method.DETERMINISTIC: "Its ID or exact title matched",
    Method.SEMANTIC: "The judge chose it, with a confidence approved for this question",
}
# The built-in relevance model, not a judge, when it resolved under its approved certificate.
HOW_RANKED = "The built-in ranker chose it, with a confidence staff approved for it"


def _calendar_down(request: HttpRequest, *, retry: str) -> HttpResponse:
    return _error_page(request, status=503, title="The calendar cannot be read right now",
                       message="The calendar server did not answer. Nothing was changed; "
                               "try again in a moment.",
                       link=(retry, "Try again"))


def _error_page(request: HttpRequest, *, status: int, title: str, message: str,
                link: tuple[str, str] | None = None) -> HttpResponse:
    context = {"status": status, "title": title, "message": message,
               "link_url": link[0] if link else None, "link_text": link[1] if link else None}
    return render(request, "resolver/error.html", context, status=status)


def _retry_path(request: HttpRequest, next_url: str | None) -> str:
    """The clarification page again, by GET: a link cannot repeat a POST."""
    return request.path + ("?" + urlencode({"next": next_url}) if next_url else "")


def _search_again_url(claims: ClarificationClaims, next_url: str | None) -> str:
    query = {"kind": claims.kind.value, "collections": " ".join(claims.collection_ids)}
    if next_url:
        query["next"] = next_url
    return reverse("resolver_web:search") + "?" + urlencode(query)


def _safe_next(request: HttpRequest, value: str | None) -> str | None:
    """`next` only if it stays on this host; anything else is ignored, as Django's login does."""
    if not value:
        return None
    if url_has_allowed_host_and_scheme(value, allowed_hosts={request.get_host()},
                                       require_https=request.is_secure()):
        return value
    return None


def _with_item(url: str, item: Item) -> str:
    """`url` with item_id and etag set in its query, replacing any there already."""
    parts = urlsplit(url)
    kept = parse_qsl(parts.query, keep_blank_values=True)
    query = [(k, v) for k, v in kept if k not in ("item_id", "etag")]
    query += [("item_id", item.item_id), ("etag", item.etag)]
    return urlunsplit(parts._replace(query=urlencode(query)))
