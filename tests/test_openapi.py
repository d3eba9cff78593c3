"""The OpenAPI description (resolver/openapi.py): below the doors, served by the API, cut into the MCP tools."""
from __future__ import annotations

from resolver import openapi


def test_openapi__the_api_serves_the_same_description():
    """/v1/schema/ is built with these settings; a host's SPECTACULAR_SETTINGS may still name the API's module."""
    from resolver.api import schema

    assert schema.SchemaApi.custom_settings is openapi.SPECTACULAR_SETTINGS
    assert schema.BAD_REQUEST_CODES is openapi.BAD_REQUEST_CODES
    assert "invalid_request" in openapi.BAD_REQUEST_CODES


def test_openapi__the_mcp_tools_take_their_schemas_from_its_document():
    from resolver.mcp import schemas

    body = openapi.api_document()["components"]["schemas"]["ResolveInputRequest"]
    assert set(schemas.resolve_input()["properties"]) == set(body["properties"])
    assert schemas.resolve_input()["additionalProperties"] is False
