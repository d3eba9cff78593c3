from django.contrib import admin
from django.urls import include, path

from lifeproject import errors, health

urlpatterns = [
    path("", errors.home, name="home"),
    path("admin/", admin.site.urls),
    path("v1/", include("resolver.urls")),
    path("resolve/", include("resolver.web.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    # The MCP door's authorization server (resolver/oauth/); the MCP endpoint itself is ASGI (lifeproject/asgi.py).
    path("", include("resolver.oauth.urls")),
    # No authentication and no secrets: for load balancers (lifeproject/health.py).
    path("healthz", health.healthz, name="healthz"),
]

handler400 = errors.bad_request
handler404 = errors.not_found
handler500 = errors.server_error
