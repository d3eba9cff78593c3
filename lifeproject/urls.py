from django.apps import apps
from django.urls import include, path

from lifeproject import errors, health

urlpatterns = [
    path("", errors.home, name="home"),
    path("v1/", include("resolver.urls")),
    path("resolve/", include("resolver.web.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    # No authentication and no secrets: for load balancers (lifeproject/health.py).
    path("healthz", health.healthz, name="healthz"),
]
# Not installed in `manage.py resolve`'s process (settings.WEB_ONLY_APPS), which reverses page links only.
if apps.is_installed("django.contrib.admin"):
    from django.contrib import admin

    urlpatterns.append(path("admin/", admin.site.urls))
if apps.is_installed("oauth2_provider"):
    # The MCP door's authorization server (resolver/oauth/); the MCP endpoint itself is ASGI (lifeproject/asgi.py).
    urlpatterns.append(path("", include("resolver.oauth.urls")))

handler400 = errors.bad_request
handler404 = errors.not_found
handler500 = errors.server_error
