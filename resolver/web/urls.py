"""The clarification page's URLs. Mount them where the page should live, e.g. `resolve/`."""
from django.urls import path

from resolver.web import accounts, views

app_name = "resolver_web"

urlpatterns = [
    path("", views.search, name="search"),
    path("clarify/<str:token>/", views.clarify, name="clarify"),
    # Per-user accounts (resolver/web/accounts.py); "not found" unless they are on.
    path("accounts/", accounts.accounts_page, name="accounts"),
    path("accounts/<int:pk>/remove/", accounts.remove, name="account_remove"),
]
