"""Secrets kept out of every log line, at every level, whoever wrote the line.

At DEBUG, libraries the site runs on log what they hold: oauthlib logs each
authorization code grant and token it creates as a dict
(`Created authorization code grant {'code': ...}`), urllib3 logs request
lines with their query strings, caldav logs URLs. A host that turns root
logging to DEBUG to chase a bug would then write authorization codes,
access and refresh tokens into its log store.

`redact(text)` replaces the value of every secret it recognises with
`[redacted]`, keeping the name so the line still says what was there:

- `Authorization` / `Proxy-Authorization` header values, and any
  `Bearer ...` / `Basic ...` credential;
- a token or code named in words (`refresh token abc...`, as oauthlib writes);
- the values of keys that name a secret (SECRET_KEYS: code, access_token,
  refresh_token, id_token, token, password, client_secret, code_verifier,
  api_key, ...) as a query or form parameter (`code=...`), a Python or JSON
  mapping entry (`'code': '...'`, `"password": "..."`) or a keyword (`token='...'`);
- the password in a URL's userinfo (`https://user:...@host`).

`RedactSecrets` is the logging filter that applies it to a record: its
message (formatted with its arguments), its `extra` fields (a field named
after a secret loses its value) and its traceback text. It never drops a
record. The app installs it for the whole process when it loads
(`install()`, from ResolverConfig.ready): every record any logger creates is
redacted then, whatever handlers, levels or LOGGING the host configured. A
host's LOGGING can also name it on its handlers (docs/security.md), which
covers `extra` fields added after a record is made.
"""
from __future__ import annotations

import logging
import re
from typing import Any, Callable

REDACTED = "[redacted]"

SECRET_KEYS = (
    "code", "access_token", "refresh_token", "id_token", "token", "device_code", "code_verifier",
    "client_secret", "password", "passwd", "secret", "api_key", "apikey", "authorization",
    "proxy-authorization", "assertion", "password_sealed", "csrfmiddlewaretoken", "sessionid",
)
_KEYS = "|".join(re.escape(key) for key in sorted(SECRET_KEYS, key=len, reverse=True))

_PATTERNS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    # 'code': 'abc', "password": "x y", b'...' values: a mapping's repr or JSON (the quote closes it).
    (re.compile(rf"""(?i)(?<![\w-])(["']?(?:{_KEYS})["']?\s*:\s*b?)(["'])((?:\\.|(?!\2).)*)\2"""),
     lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}{m.group(2)}"),
    # Authorization: Basic abc / authorization=Bearer abc (a header line, a dict without quotes).
    (re.compile(r"(?i)(?<![\w-])((?:proxy-)?authorization\s*[:=]\s*)(?!\[redacted\])(?:(\w+)\s+)?([^\s,;&'\"}\])]+)"),
     lambda m: f"{m.group(1)}{m.group(2) + ' ' if m.group(2) else ''}{REDACTED}"),
    # code=abc&state=..., token='abc' (a query string, a form body, a keyword in a repr).
    (re.compile(rf"""(?i)(?<![\w-])((?:{_KEYS})=)(["']?)(?!\[redacted\])([^\s&"',;)}}\]]+)"""),
     lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}"),
    # "Validating refresh token abc for client", "Invalid refresh token, abc," (oauthlib's words).
    (re.compile(r"(?i)\b((?:refresh|access|id|bearer)[ _-]token|authorization code)(,?\s+)(?!\[redacted\])"
                r"(['\"]?)([A-Za-z0-9._~+/=-]{16,})"),
     lambda m: f"{m.group(1)}{m.group(2)}{m.group(3)}{REDACTED}"),
    # Bearer abc / Basic abc anywhere else.
    (re.compile(r"(?i)\b(bearer|basic)\s+(?!\[redacted\])([A-Za-z0-9._~+/=-]{6,})"),
     lambda m: f"{m.group(1)} {REDACTED}"),
    # https://user:secret@host
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)(?!\[redacted\])[^/\s@]+@"),
     lambda m: f"{m.group(1)}{REDACTED}@"),
]
_SECRET_FIELD = re.compile(rf"(?i)^(?:{_KEYS})$")
# Attributes every LogRecord has; anything else on a record came from `extra`.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


def redact(text: str) -> str:
    """`text` with the value of every secret it recognises replaced by `[redacted]` (module docstring)."""
    for pattern, replace in _PATTERNS:
        text = pattern.sub(replace, text)
    return text


def redact_record(record: logging.LogRecord) -> None:
    """Redact one record in place: message and arguments, `extra` fields, traceback text."""
    try:
        message = record.getMessage()
    except Exception:  # a call with the wrong arguments: logging reports it itself, later
        message = None
    if message is not None:
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
    for name, value in list(vars(record).items()):
        if name in _RECORD_ATTRIBUTES or name.startswith("_"):
            continue
        if _SECRET_FIELD.match(name) and value is not None:
            setattr(record, name, REDACTED)
        elif isinstance(value, str):
            clean = redact(value)
            if clean != value:
                setattr(record, name, clean)
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        record.exc_text = logging.Formatter().formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


class RedactSecrets(logging.Filter):
    """A logging filter that redacts each record (`redact_record`) and keeps it."""

    def filter(self, record: logging.LogRecord) -> bool:
        redact_record(record)
        return True


def install() -> None:
    """Redact every record the process creates, from here on (wraps the log record factory; idempotent)."""
    previous = logging.getLogRecordFactory()
    if getattr(previous, "redacts_secrets", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        redact_record(record)
        return record

    factory.redacts_secrets = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)
