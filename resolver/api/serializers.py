"""The request body's shape, for the OpenAPI document only.

Validation is `resolver.domain.requests.parse_document` (called through
`resolver.services`), the one place of the request rules for every door; this
serializer describes the same fields and limits to drf-spectacular and never
validates a request.
"""
from __future__ import annotations

from rest_framework import serializers

from resolver.conf import DEFAULTS


class ResolveInputSerializer(serializers.Serializer):
    text = serializers.CharField(
        max_length=DEFAULTS["MAX_TEXT_LENGTH"], trim_whitespace=False,
        help_text="The reference, as the person wrote it. An item ID or UID matches exactly. "
                  "At most RESOLVER['MAX_TEXT_LENGTH'] characters.",
    )
    kind = serializers.ChoiceField(choices=["task", "event"])
    collection_ids = serializers.ListField(
        child=serializers.CharField(max_length=200), required=False, allow_null=True,
        max_length=DEFAULTS["MAX_COLLECTION_IDS"],
        help_text="Search only these collections (GET /v1/collections). At most RESOLVER['MAX_COLLECTION_IDS']; "
                  "absent, null or empty: all of them.",
    )
    time_zone = serializers.CharField(
        required=False, allow_null=True, max_length=64,
        help_text="IANA zone name (e.g. Europe/Berlin) that times in the reference and floating times in the "
                  "calendar are read in. Default RESOLVER['TIME_ZONE'] (Django's TIME_ZONE). "
                  "Absent or null: that default. An unknown zone is invalid_request.",
    )
    language = serializers.CharField(
        required=False, allow_null=True, max_length=32,
        help_text="The reference's language: its stems, stopwords and time expressions (\"morgen\", \"demain\", "
                  "\"mañana\"). A Snowball name (english, german, french, spanish, ...) or en, de, fr, es. "
                  "Default RESOLVER['LANGUAGE']. An unknown language is invalid_request.",
    )
