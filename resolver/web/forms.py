"""The page's forms. They check shape only; the service validates meaning, as for the API."""
from __future__ import annotations

import re

from django import forms

from resolver.domain.pipeline import MAX_TEXT_LENGTH

KIND_CHOICES = [("task", "Task"), ("event", "Event")]


class ResolveForm(forms.Form):
    # Whitespace is kept, as in the API: the service decides what is valid.
    text = forms.CharField(
        label="Reference",
        max_length=MAX_TEXT_LENGTH,
        strip=False,
        help_text="What you wrote, for example “Team offsite planning”.",
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
    next = forms.CharField(required=False, max_length=2000, widget=forms.HiddenInput)

    def clean_collections(self) -> list[str]:
        value = self.cleaned_data.get("collections") or ""
        return [part for part in re.split(r"[\s,]+", value) if part]


class SelectForm(forms.Form):
    """The choice on the clarification page; whether it is a candidate is the service's call."""

    item_id = forms.CharField(max_length=200, error_messages={"required": "Choose one of the items."})
    next = forms.CharField(required=False, max_length=2000)
