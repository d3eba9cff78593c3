from django.apps import AppConfig


class ResolverConfig(AppConfig):
    name = "resolver"
    verbose_name = "Reference resolver"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from resolver import checks  # noqa: F401  (registers system checks)
        from resolver import redaction

        # No authorization code, token, password or Authorization header in any log
        # line of the process, at any level, whoever logs it (resolver/redaction.py).
        redaction.install()
        from resolver.accounts import NamespaceRegistry
        from resolver.encoders import EncoderRegistry
        from resolver.judges.registry import JudgeRegistry
        from resolver.rankers import RelevanceModelRegistry

        # The process's state is here, in registries of one convention (resolver/registry.py):
        # bounded, thread-safe, each value built on first use. Tests put fresh ones in place.
        # The process's judges, one per configuration (resolver/judges/registry.py).
        self.judges = JudgeRegistry()
        # The semantic signal's encoders, one per dotted path (services.semantic_encoder):
        # each loads its weights once, on its first encode.
        self.encoders = EncoderRegistry()
        # The relevance models, one per file (services.relevance_model): read once, immutable.
        self.relevance_models = RelevanceModelRegistry()

        # The per-user accounts' namespaced items (resolver/accounts.py): the process's
        # state, owned here rather than by a module global; tests swap it (use_namespaces).
        self.namespaces = NamespaceRegistry()
        # One CalDAV reader per account (resolver/calendars/caldav/registry.py): its memo,
        # sync states and connections; tests and benchmarks swap it (use_registry).
        from resolver.calendars.caldav.registry import ReaderRegistry

        self.readers = ReaderRegistry()
