"""The authorization server's views: django-oauth-toolkit's, with the app's consent rules and limits.

- `ConsentView`: the consent page is shown every time unless staff marked the
  application trusted in the admin ("Skip authorization"); the client cannot
  skip it with `approval_prompt=auto` in the query string. While a signed-in
  person is on it, and only then, a Client ID Metadata Document may be
  fetched, within bounds (resolver/oauth/clients.py); a refused new client
  is said with its status and code (429 `throttled`, 403 `too_many_clients`,
  503 `temporarily_unavailable`). The page leads with what the site
  verified about the client (the host of its `client_id` URL, or that the
  site's staff registered it), then the name it claims, then the resource.
  It is `Cache-Control: no-store`; a POST naming no known client is a 400.
- `throttled(view)`: the token and revoke endpoints, per client address.
"""
from __future__ import annotations

import functools
import json
from typing import Any, Callable
from urllib.parse import urlsplit

from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider import views
from oauth2_provider.models import get_application_model
from rest_framework.throttling import SimpleRateThrottle

from resolver.client_address import client_address
from resolver.conf import resolver_settings
from resolver.oauth import clients, resource

STAFF = "registered by this site's staff"


class ConsentView(views.AuthorizationView):
    template_name = "resolver/oauth/authorize.html"

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = self._dispatch(request, *args, **kwargs)
        # The page carries a one-time form and names the person: never kept by a cache or the browser's history.
        add_never_cache_headers(response)
        return response

    def _dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:  # the login redirect; nothing is fetched for nobody
            return super().dispatch(request, *args, **kwargs)
        if "approval_prompt" in request.GET:
            # django-oauth-toolkit lets this parameter turn the consent page off
            # ("auto": a code straight back when a token exists). The site decides.
            query = request.GET.copy()
            del query["approval_prompt"]
            request.GET = query
        with clients.consenting(request) as consent:
            response = super().dispatch(request, *args, **kwargs)
        if consent.refusal is not None:
            refusal = consent.refusal
            response = self.error_page(refusal.status, refusal.code, refusal.description)
            if refusal.retry_after:
                response["Retry-After"] = str(refusal.retry_after)
            return response
        # A visit counts as a use of a document client (its row is purged by last use; clients.py).
        clients.used((request.POST if request.method == "POST" else request.GET).get("client_id"), request.user)
        return response

    def error_page(self, status: int, code: str, description: str) -> HttpResponse:
        return self.render_to_response({"error": {"error": code, "description": description}}, status=status)

    def form_invalid(self, form: Any) -> HttpResponse:
        # Only a form the page did not send back as it was is invalid (every field is hidden).
        return self.error_page(400, "invalid_request", "The consent form came back incomplete; start again from "
                                                       "the application.")

    def form_valid(self, form: Any) -> HttpResponse:
        # The hidden client_id comes back from the browser: one naming no application is a bad request.
        client_id = form.cleaned_data.get("client_id")
        if not client_id or not get_application_model().objects.filter(client_id=client_id).exists():
            return self.error_page(400, "invalid_client", "This application is not known here; start again from "
                                                          "the application.")
        return super().form_valid(form)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        application = context.get("application")
        if application is not None:
            context["verified_origin"] = verified_origin(application)
            context["claimed_name"] = application.name or ""
        resources = (context.get("resource") or "").split()
        context["resources"] = [{"url": url, "ours": url == resource.resource_url()} for url in resources]
        return context


def verified_origin(application: Any) -> str:
    """What the site knows of a client for certain: the host its document was fetched from, or its staff."""
    if application.registration_source == application.RegistrationSource.CIMD:
        parts = urlsplit(application.client_id)
        return parts.netloc.rsplit("@", 1)[-1]  # userinfo is refused for documents; never shown
    return STAFF


class ClientAddressThrottle(SimpleRateThrottle):
    """RESOLVER["OAUTH_THROTTLE_RATE"] per client address, in the default cache (shared by the workers).

    The address is resolver.client_address's: the connection's, or
    X-Forwarded-For's only from a proxy named in RESOLVER["TRUSTED_PROXIES"]
    (a forwarded-for header is otherwise the client's to choose).
    """

    scope = "oauth"

    def get_rate(self) -> str:
        return resolver_settings.OAUTH_THROTTLE_RATE

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_address(request)}


def throttled(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        throttle = ClientAddressThrottle()
        if not throttle.allow_request(request, None):
            seconds = max(1, int((throttle.wait() or 1) + 0.999))
            response = HttpResponse(json.dumps({"error": "throttled", "error_description": "Too many requests.",
                                                "retry_after_seconds": seconds}),
                                    status=429, content_type="application/json")
            response["Retry-After"] = str(seconds)
            response["Cache-Control"] = "no-store"
            return response
        return view(request, *args, **kwargs)

    return csrf_exempt(wrapper)
