"""Request shapes for the API. Types are checked strictly: JSON `1` is not a text."""
from __future__ import annotations

from typing import Any

from rest_framework import serializers

from resolver.domain.pipeline import MAX_COLLECTION_IDS, MAX_TEXT_LENGTH


class StrictCharField(serializers.CharField):
    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class ResolveInputSerializer(serializers.Serializer):
    # Whitespace is kept: an item ID or UID must match exactly.
    text = StrictCharField(max_length=MAX_TEXT_LENGTH, trim_whitespace=False)
    kind = serializers.ChoiceField(choices=["task", "event"])
    collection_ids = serializers.ListField(
        child=StrictCharField(max_length=200), required=False, max_length=MAX_COLLECTION_IDS
    )

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError({"non_field_errors": ["Expected a JSON object."]})
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)
