"""Template tags of the app's pages."""
from __future__ import annotations

from django import template
from django.urls import NoReverseMatch, reverse

register = template.Library()


@register.simple_tag
def resolver_accounts_url() -> str:
    """The accounts page's URL when per-user accounts are on (and the page is mounted), else ""."""
    from resolver import accounts

    if not accounts.per_user():
        return ""
    try:
        return reverse("resolver_web:accounts")
    except NoReverseMatch:
        return ""
