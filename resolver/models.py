"""Configuration that people approve; the pipeline only reads it.

An `ApprovedThreshold` says: for this question wording (fingerprint) and this
model (as responses name it), a top probability of at least `threshold` may
resolve a reference without asking the user. Rows come from an evaluation run
with their evidence; a staff member activates one with the admin action.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from resolver.domain.judgment import QUESTION_ID

if TYPE_CHECKING:
    from resolver.connected import ConnectedAccount

_UNIT_INTERVAL = [MinValueValidator(0.0), MaxValueValidator(1.0)]


class ApprovedThreshold(models.Model):
    question = models.CharField(max_length=100, default=QUESTION_ID)
    model = models.CharField(
        max_length=200, help_text="The model name as Jev responses report it (not an alias)."
    )
    fingerprint = models.CharField(max_length=64, help_text="The judge's prompt fingerprint when evaluated.")
    backend = models.CharField(max_length=20, default="jev",
                               help_text="The judge backend evaluated: jev or openai.")
    probability_source = models.CharField(
        max_length=20, default="service",
        help_text="service (Jev's distribution), logprobs, or none: advice only, which no threshold may use.",
    )
    threshold = models.FloatField(validators=_UNIT_INTERVAL)
    cases = models.PositiveIntegerField(help_text="Evaluation cases behind this threshold.")
    admitted_accuracy = models.FloatField(validators=_UNIT_INTERVAL)
    coverage = models.FloatField(validators=_UNIT_INTERVAL)
    risk_upper_bound = models.FloatField(null=True, blank=True, validators=_UNIT_INTERVAL)
    evaluated_at = models.DateTimeField()
    evidence = models.JSONField(default=dict, blank=True)
    plot_png = models.BinaryField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=False)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    approved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["question", "model", "fingerprint", "active"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(threshold__gte=0.0) & models.Q(threshold__lte=1.0),
                name="resolver_threshold_in_unit_interval",
            ),
            # The database itself refuses an active row nobody approved.
            models.CheckConstraint(
                condition=models.Q(active=False) | models.Q(approved_at__isnull=False),
                name="resolver_threshold_active_requires_approval",
            ),
        ]

    def __str__(self) -> str:
        state = "active" if self.active else "inactive"
        return f"{self.question} {self.model} >= {self.threshold:.3f} ({state})"


class ProvenanceEntry(models.Model):
    """No table: a handle so the admin can list the cached provenance entries."""

    class Meta:
        managed = False
        verbose_name = "judgment provenance entry"
        verbose_name_plural = "judgment provenance (recent, cached)"
        default_permissions = ()


class CalendarAccount(models.Model):
    """One person's CalDAV account (RESOLVER["ACCOUNT_BACKEND"] = "resolver.accounts.PerUserAccounts").

    The app password is stored encrypted (resolver/sealing.py) and read only to
    talk to the account's own server: never in a repr, a log line, a response,
    an admin page or an error. `slug` prefixes the account's collection IDs
    (resolver/accounts.py says the rule) and never changes once chosen.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calendar_accounts")
    slug = models.SlugField(max_length=40, help_text="Prefixes this account's collection IDs: <slug>/<collection>.")
    label = models.CharField(max_length=100, blank=True)
    url = models.URLField(max_length=500, help_text="The CalDAV server (its principal is discovered).")
    username = models.CharField(max_length=200)
    password_sealed = models.TextField(editable=False, help_text="The app password, encrypted.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "slug"], name="resolver_account_user_slug")]
        ordering = ["user_id", "slug"]

    def __str__(self) -> str:
        return f"{self.slug} ({self.username} at {self.url})"

    def __repr__(self) -> str:
        return f"<CalendarAccount {self.pk}: {self.slug}>"

    def seal_context(self) -> tuple[object, ...]:
        """What the sealed password is bound to: copied to another row, user, URL or username, it does not open."""
        from resolver.sealing import account_context

        return account_context(self.user_id, self.pk, self.url, self.username)

    def set_password(self, password: str) -> None:
        """Seal `password` for this row, which must be saved already (the binding includes its ID)."""
        from resolver.sealing import seal

        if self.pk is None or self.user_id is None:
            raise ValueError("Save the account first: its password is bound to its ID.")
        self.password_sealed = seal(password, context=self.seal_context())

    def as_account(self) -> "ConnectedAccount":
        """The account for the calendar layer; CalendarUnavailable if its password no longer decrypts."""
        from resolver.connected import ConnectedAccount
        from resolver.domain.errors import CalendarUnavailable
        from resolver.sealing import Unsealable, unseal

        try:
            password = unseal(self.password_sealed, context=self.seal_context())
        except Unsealable:
            raise CalendarUnavailable(
                "The stored password of a connected calendar account cannot be read; connect the account again.",
                details={"reason": "credentials_unreadable"}) from None
        return ConnectedAccount(key=f"account:{self.pk}", url=self.url, username=self.username, password=password,
                             slug=self.slug, label=self.label)


class DocumentClient(models.Model):
    """An OAuth client made from a Client ID Metadata Document: who used it last, and when.

    Keyed by the client's URL rather than a foreign key to the application, so
    the app's models load without the OAuth server (`manage.py resolve` runs
    without it). Rows made from documents are purged by `last_used`, and one
    person may hold only RESOLVER["OAUTH_CIMD_MAX_CLIENTS_PER_PERSON"] of them
    (resolver/oauth/clients.py).
    """

    client_id = models.CharField(max_length=255, unique=True)
    used_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")
    last_used = models.DateTimeField(db_index=True)

    class Meta:
        default_permissions = ()

    def __str__(self) -> str:
        return self.client_id
