"""The tools' JSON Schemas, taken from the OpenAPI document the API serves.

`resolver/openapi.py` is the one description of the request and the envelope,
below the doors; the MCP tools publish the same shapes as the API, so a field
added there reaches agents without a second definition. The document is
generated once per process by drf-spectacular (over the host's URLconf, where
the API's operations are) and each operation's schema is inlined (MCP clients
resolve `$ref` only within the tool's own schema, and some not at all).
"""
from __future__ import annotations

import copy
import functools
from typing import Any

_REF_PREFIX = "#/components/schemas/"
# OpenAPI vocabulary that is not JSON Schema: dropped so validators see plain 2020-12.
_OPENAPI_ONLY = ("discriminator", "example", "examples", "externalDocs", "xml")


@functools.cache
def _document() -> dict[str, Any]:
    from resolver.openapi import api_document

    return api_document()


def _operation(operation_id: str) -> dict[str, Any]:
    for path_item in _document()["paths"].values():
        for operation in path_item.values():
            if isinstance(operation, dict) and operation.get("operationId") == operation_id:
                return operation
    raise LookupError(f"No operation {operation_id!r} in the OpenAPI document.")


def _inline(schema: Any, components: dict[str, Any]) -> Any:
    if isinstance(schema, list):
        return [_inline(part, components) for part in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
        # The envelope's components are not recursive, so plain inlining terminates.
        target = _inline(components[ref[len(_REF_PREFIX):]], components)
        siblings = {k: _inline(v, components) for k, v in schema.items() if k != "$ref"}
        return {**target, **siblings}
    return {k: _inline(v, components) for k, v in schema.items() if k not in _OPENAPI_ONLY}


def _json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    inlined = _inline(copy.deepcopy(schema), _document()["components"]["schemas"])
    # MCP requires an object at the root; a oneOf of envelopes is one.
    inlined.setdefault("type", "object")
    return inlined


def _request_body(operation_id: str) -> dict[str, Any]:
    return _operation(operation_id)["requestBody"]["content"]["application/json"]["schema"]


def _ok_response(operation_id: str) -> dict[str, Any]:
    return _operation(operation_id)["responses"]["200"]["content"]["application/json"]["schema"]


@functools.cache
def resolve_input() -> dict[str, Any]:
    return _json_schema(_request_body("resolve"))


@functools.cache
def resolve_output() -> dict[str, Any]:
    return _json_schema(_ok_response("resolve"))


def collections_input() -> dict[str, Any]:
    # GET /v1/collections takes nothing; so does the tool.
    return {"type": "object", "properties": {}, "additionalProperties": False}


@functools.cache
def collections_output() -> dict[str, Any]:
    return _json_schema(_ok_response("collections_list"))
