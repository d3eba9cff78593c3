"""Which clients a Client ID Metadata Document may create, and when: a signed-in person, bounded, expiring.

django-oauth-toolkit fetches a client's metadata document the first time it
meets a `client_id` URL, wherever that is: the authorize page, but also the
unauthenticated token and revoke endpoints, where anyone could make the site
fetch URLs and store one Application row each. Here a document is fetched
only while a signed-in person is on the authorize page (`consenting()`, which
the app's authorize view enters), the rows made from documents are at most
RESOLVER["OAUTH_CIMD_MAX_CLIENTS"], and a row nobody uses (no live grant,
access token or refresh token) goes once it has not been updated for
RESOLVER["OAUTH_CIMD_UNUSED_SECONDS"].
"""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import timedelta
from typing import Any

from resolver.conf import resolver_settings

logger = logging.getLogger(__name__)

# True while the app's authorize view handles a signed-in person's request.
_consenting: ContextVar[bool] = ContextVar("resolver_oauth_consenting", default=False)


@contextlib.contextmanager
def consenting() -> Iterator[None]:
    token = _consenting.set(True)
    try:
        yield
    finally:
        _consenting.reset(token)


class SignedInPersonOnly:
    """django-oauth-toolkit's CIMD_REGISTRATION_PERMISSION_CLASSES: fetch only on the authorize page, within bounds.

    Asked before every fetch, a first one or the refresh of a stale row. Off
    the authorize page the answer is no, so an unknown URL client is an
    unknown client there (`invalid_client`) and a stale row keeps its last
    good document.
    """

    def has_permission(self, request: Any, client_id: str) -> bool:
        if not _consenting.get():
            logger.info("Client ID Metadata Document not fetched: no signed-in person on the authorize page.")
            return False
        return _room_for(client_id)


def _room_for(client_id: str) -> bool:
    """Whether a row for `client_id` exists or may be made (after clearing out unused ones)."""
    from oauth2_provider.models import get_application_model

    application_model = get_application_model()
    documents = application_model.objects.filter(registration_source=application_model.RegistrationSource.CIMD)
    if documents.filter(client_id=client_id).exists():
        return True  # a refresh of a row already counted
    purge_unused()
    if documents.count() < int(resolver_settings.OAUTH_CIMD_MAX_CLIENTS):
        return True
    logger.warning("Client ID Metadata Document not fetched: %s clients from documents already.",
                   resolver_settings.OAUTH_CIMD_MAX_CLIENTS)
    return False


def purge_unused(*, now: Any = None) -> int:
    """Delete the rows made from documents that nobody uses and that were not updated lately; their number."""
    from django.utils import timezone
    from oauth2_provider.models import (get_access_token_model, get_application_model, get_grant_model,
                                        get_refresh_token_model)
    from oauth2_provider.settings import oauth2_settings

    now = now or timezone.now()
    application_model = get_application_model()
    in_use = set(get_access_token_model().objects.filter(expires__gt=now).values_list("application_id", flat=True))
    in_use |= set(get_grant_model().objects.filter(expires__gt=now).values_list("application_id", flat=True))
    refresh_after = now - timedelta(seconds=oauth2_settings.REFRESH_TOKEN_EXPIRE_SECONDS or 0)
    in_use |= set(get_refresh_token_model().objects.filter(revoked__isnull=True, created__gt=refresh_after)
                  .values_list("application_id", flat=True))
    stale = (application_model.objects
             .filter(registration_source=application_model.RegistrationSource.CIMD,
                     updated__lt=now - timedelta(seconds=int(resolver_settings.OAUTH_CIMD_UNUSED_SECONDS)))
             .exclude(pk__in=in_use))
    deleted, _ = stale.delete()
    return deleted
