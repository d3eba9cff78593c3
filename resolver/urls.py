"""The app's URLs. Include them under `v1/` for the API (see the project urls)."""
from django.urls import include, path

app_name = "resolver"

urlpatterns = [
    path("", include("resolver.api.urls")),
]
