"""The accounts page, `/resolve/accounts/`: a signed-in person connects, sees and removes
their own CalDAV accounts (RESOLVER["ACCOUNT_BACKEND"] = "resolver.accounts.PerUserAccounts").

An account is checked live against its server before it is saved, and the
messages say which of the person's inputs to fix (credentials, address). The
password is never rendered back, not even after a failed check. Every query is
the signed-in person's own: another person's account ID is "not found".
"""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_http_methods, require_POST

from resolver import services
from resolver.client_address import client_address
from resolver.domain.errors import ResolverError
from resolver.web.views import HttpResponseSeeOther, reading


class AccountForm(forms.Form):
    url = forms.URLField(label="Server URL", max_length=500, assume_scheme="https",
                         help_text="Your CalDAV server, for example https://dav.example.com/.",
                         widget=forms.URLInput(attrs={"autocomplete": "url", "spellcheck": "false"}))
    username = forms.CharField(label="Username", max_length=200,
                               widget=forms.TextInput(attrs={"autocomplete": "username", "spellcheck": "false"}))
    password = forms.CharField(label="App password", max_length=1000, strip=False,
                               help_text="An app password for this site, if your provider offers them.",
                               widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}, render_value=False))
    label = forms.CharField(label="Label (optional)", max_length=100, required=False,
                            help_text="For example “work”. It starts this account's collection IDs: work/calendar.")


def _page(request: HttpRequest, form: AccountForm, *, error: str | None = None, status: int = 200) -> HttpResponse:
    rows = [{"account": state.account, "collections": state.collections,
             "error": state.error.message if state.error else None}
            for state in services.account_overview(user=request.user)]
    unread = sum(1 for row in rows if row["error"])
    return render(request, "resolver/accounts.html",
                  {"form": form, "rows": rows, "error": error, "unread": unread}, status=status)


def _off(request: HttpRequest) -> HttpResponse:
    return render(request, "resolver/error.html", {
        "title": "Not found", "message": "This site reads one shared calendar account; there is nothing to connect.",
        "link_url": reverse("resolver_web:search"), "link_text": "Search"}, status=404)


@never_cache
@sensitive_post_parameters("password")
@login_required
@require_http_methods(["GET", "HEAD", "POST"])
@reading(on_get=True)  # adding, then the overview: one deadline
def accounts_page(request: HttpRequest) -> HttpResponse:
    if not services.accounts_per_user():
        return _off(request)
    if request.method != "POST":
        return _page(request, AccountForm())
    form = AccountForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)  # PasswordInput never renders the value back
    data = form.cleaned_data
    try:
        services.add_account(user=request.user, url=data["url"], username=data["username"],
                             password=data["password"], label=data["label"],
                             client_address=client_address(request))
    except ResolverError as err:
        page = _page(request, AccountForm(initial=_without_password(form)), error=err.message, status=err.http_status)
        if "retry_after_seconds" in err.details:  # throttled: the API's header
            page["Retry-After"] = str(err.details["retry_after_seconds"])
        return page
    return HttpResponseSeeOther(reverse("resolver_web:accounts"))


@never_cache
@login_required
@require_POST
def remove(request: HttpRequest, pk: int) -> HttpResponse:
    if not services.accounts_per_user():
        return _off(request)
    if not services.remove_account(user=request.user, account_id=pk):
        return render(request, "resolver/error.html", {
            "title": "Not found", "message": "You have no such account.",
            "link_url": reverse("resolver_web:accounts"), "link_text": "Your accounts"}, status=404)
    return HttpResponseSeeOther(reverse("resolver_web:accounts"))


def _without_password(form: AccountForm) -> dict[str, Any]:
    return {name: form.data.get(name, "") for name in ("url", "username", "label")}
