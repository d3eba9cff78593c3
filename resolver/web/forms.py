"""The page's forms. They check shape only: the request rules (limits, kinds, time zones)
are resolver.domain.requests', applied by the service as for every other door."""
from __future__ import annotations

import re

from django import forms

KIND_CHOICES = [("task", "Task"), ("event", "Event")]


class ResolveForm(forms.Form):
    # Whitespace is kept, as in the API: the service decides what is valid.
    text = forms.CharField(
        label="Reference",
        strip=False,
        # A title from the demo calendar (lifeproject/seeding.py), so the example works as printed.
        help_text="What you wrote, for example “portfolio” or “Design review”.",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    kind = forms.ChoiceField(label="Kind", choices=KIND_CHOICES, initial="task", widget=forms.RadioSelect)
    collections = forms.CharField(
        label="Collections (optional)",
        required=False,
        max_length=2000,
        help_text="Collection IDs separated by commas or spaces. Leave empty to search all.",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    time_zone = forms.CharField(
        label="Time zone (optional)",
        required=False,
        max_length=64,
        help_text="An IANA name such as Europe/Berlin, for times in the reference. Leave empty for the default.",
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    next = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)

    def clean_collections(self) -> list[str]:
        value = self.cleaned_data.get("collections") or ""
        return [part for part in re.split(r"[\s,]+", value) if part]


class SelectForm(forms.Form):
    """The choice on the clarification page; whether it is a candidate is the service's call."""

    item_id = forms.CharField(max_length=200, error_messages={"required": "Choose one of the items."})
    next = forms.CharField(required=False, max_length=2000)
