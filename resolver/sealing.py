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

Bound to their row: a sealed value is opened only for the context it was
sealed with (for an account: its user, its ID, its URL and its username).
Fernet has no associated data of its own, so the SHA-256 digest of the
context is encrypted with the secret (Fernet authenticates all of it) and
compared when opening: someone who can write the database but lacks the key
cannot move a sealed password to their own row, URL or user and have it sent
to their server; it fails to open (`credentials_unreadable`). Values sealed
this way start with `v2$`; the unbound form before them (a Fernet token of the
bare secret) is read only by the data migration that re-seals it.
"""
from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
from typing import Sequence

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

_PURPOSE = b"resolver.calendar_account.password.v1"
_BOUND = "v2$"
_DIGEST_BYTES = 32


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


def account_context(user_id: object, account_id: object, url: str, username: str) -> tuple[object, ...]:
    """What a CalDAV account's password is bound to (the model and its data migration both use this)."""
    return ("calendar_account", user_id, account_id, url, username)


def _digest(context: Sequence[object]) -> bytes:
    canonical = json.dumps(["resolver.sealed.v2", *[str(part) for part in context]], separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).digest()


def _unreadable() -> Unsealable:
    return Unsealable("The stored secret does not decrypt with SECRET_KEY or SECRET_KEY_FALLBACKS "
                      "for this record.")


def seal(secret: str, *, context: Sequence[object]) -> str:
    """The secret encrypted with the current SECRET_KEY's key, bound to `context`."""
    token = _current_box().encrypt(_digest(context) + secret.encode("utf-8"))
    return _BOUND + token.decode("ascii")


def unseal(sealed: str, *, context: Sequence[object]) -> str:
    """The secret, if `sealed` was sealed for exactly this context with a configured key; else Unsealable."""
    if not sealed.startswith(_BOUND):
        raise _unreadable()
    try:
        plain = _current_box().decrypt(sealed[len(_BOUND):].encode("ascii"))
        digest, secret = plain[:_DIGEST_BYTES], plain[_DIGEST_BYTES:].decode("utf-8")
    except (InvalidToken, UnicodeError, ValueError):
        raise _unreadable() from None
    if not hmac.compare_digest(digest, _digest(context)):
        raise _unreadable()
    return secret


def reseal(sealed: str) -> str:
    """The same sealed value (secret and binding), encrypted with the current key (for rotation)."""
    if not sealed.startswith(_BOUND):
        raise _unreadable()
    try:
        return _BOUND + _current_box().rotate(sealed[len(_BOUND):].encode("ascii")).decode("ascii")
    except (InvalidToken, UnicodeError, ValueError):
        raise _unreadable() from None


def unseal_unbound(sealed: str) -> str:
    """A value sealed before binding (a Fernet token of the bare secret): for the data migration only."""
    try:
        return _current_box().decrypt(sealed.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError, ValueError):
        raise _unreadable() from None


def seal_unbound(secret: str) -> str:
    """The form before binding, for reversing the data migration only."""
    return _current_box().encrypt(secret.encode("utf-8")).decode("ascii")
