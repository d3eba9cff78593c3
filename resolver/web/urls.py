"""The clarification page's URLs. Mount them where the page should live, e.g. `resolve/`."""
from django.urls import path

from resolver.web import views

app_name = "resolver_web"

urlpatterns = [
    path("", views.search, name="search"),
    path("clarify/<str:token>/", views.clarify, name="clarify"),
]
