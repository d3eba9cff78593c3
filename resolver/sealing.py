"""Secrets at rest: CalDAV app passwords, encrypted with Fernet (pyca/cryptography).

Why not a ready-made encrypted model field (django-fernet-encrypted-fields):
when a value does not decrypt, that field hands back the ciphertext as if it
were the value, so after a key change the app would silently send a Fernet
token to the CalDAV server as the password; its "already decrypted" flag sits on
the shared field instance (not thread-safe); and it needs a SALT_KEY setting of
its own. Here the same primitives (Fernet: AES-128-CBC plus HMAC-SHA256, and
MultiFernet for rotation) are used directly, and a value that does not decrypt
is an error, never a password.

Keys: one Fernet key per Django key, derived with HKDF-SHA256 from SECRET_KEY
(new values) and each of SECRET_KEY_FALLBACKS (old values still decrypt), under a
purpose of their own, so the signing keys and this key never coincide. Rotating
SECRET_KEY: move the old key into SECRET_KEY_FALLBACKS, then
`manage.py calendar_accounts rotate` re-encrypts every password with the new
key; the old key can then be dropped.
"""
from __future__ import annotations

import base64
import functools

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

_PURPOSE = b"resolver.calendar_account.password.v1"


class Unsealable(Exception):
    """A stored secret that none of the configured keys decrypts (the message names no secret)."""


def _fernet_key(secret_key: str) -> bytes:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=_PURPOSE, info=b"fernet").derive(
        secret_key.encode("utf-8"))
    return base64.urlsafe_b64encode(derived)


@functools.lru_cache(maxsize=8)
def _box(keys: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(_fernet_key(key)) for key in keys])


def _current_box() -> MultiFernet:
    keys = (str(settings.SECRET_KEY), *(str(k) for k in getattr(settings, "SECRET_KEY_FALLBACKS", ()) or ()))
    return _box(keys)


def seal(secret: str) -> str:
    """The secret encrypted with the current SECRET_KEY's key."""
    return _current_box().encrypt(secret.encode("utf-8")).decode("ascii")


def unseal(sealed: str) -> str:
    try:
        return _current_box().decrypt(sealed.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError, ValueError):
        raise Unsealable("The stored secret does not decrypt with SECRET_KEY or SECRET_KEY_FALLBACKS.") from None


def reseal(sealed: str) -> str:
    """The same secret, encrypted with the current key (for rotation)."""
    try:
        return _current_box().rotate(sealed.encode("ascii")).decode("ascii")
    except (InvalidToken, UnicodeError, ValueError):
        raise Unsealable("The stored secret does not decrypt with SECRET_KEY or SECRET_KEY_FALLBACKS.") from None
