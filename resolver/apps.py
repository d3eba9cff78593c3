import threading
from typing import Any

from django.apps import AppConfig
from django.utils.module_loading import import_string


class ResolverConfig(AppConfig):
    name = "resolver"
    verbose_name = "Reference resolver"
    default_auto_field = "django.db.models.BigAutoField"

    # The process's state is here, in registries of one convention (resolver/registry.py):
    # bounded, thread-safe, each value built on first use. Tests put fresh ones in place
    # (registry.swap). Each registry is created on its first use too, not in ready(): the
    # readers' module imports the CalDAV reader and icalendar, about 0.17 s of a fresh
    # `manage.py resolve`, which a process that reads another calendar backend need not pay
    # (docs/performance.md, "Issue 37, thirteenth round").
    registries = {
        # The process's judges, one per configuration (resolver/judges/registry.py).
        "judges": "resolver.judges.registry.JudgeRegistry",
        # The semantic signal's encoders, one per dotted path (services.semantic_encoder):
        # each loads its weights once, on its first encode.
        "encoders": "resolver.encoders.EncoderRegistry",
        # The relevance models, one per file (services.relevance_model): read once, immutable.
        "relevance_models": "resolver.rankers.RelevanceModelRegistry",
        # The per-user accounts' namespaced items (resolver/accounts.py).
        "namespaces": "resolver.accounts.NamespaceRegistry",
        # One CalDAV reader per account (resolver/calendars/caldav/registry.py): its memo,
        # sync states and connections.
        "readers": "resolver.calendars.caldav.registry.ReaderRegistry",
    }
    # Held while a registry is created: two threads asking at once get one (reentrant: a
    # registry whose constructor asked for another would otherwise wait on itself).
    _first_use = threading.RLock()

    def ready(self) -> None:
        from resolver import checks  # noqa: F401  (registers system checks)
        from resolver import redaction

        # No authorization code, token, password or Authorization header in any log
        # line of the process, at any level, whoever logs it (resolver/redaction.py).
        redaction.install()

    def __getattr__(self, name: str) -> Any:
        # Only called for an attribute not set: a registry on its first use (one swapped
        # in by a test is an instance attribute, found before this is asked).
        path = type(self).registries.get(name)
        if path is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        with self._first_use:
            if name not in self.__dict__:
                self.__dict__[name] = import_string(path)()
            return self.__dict__[name]
