"""The OpenAPI document states every error the service answers, with its body.

FastAPI documents only what a route declares (its success and a 422 in FastAPI's own
shape). The service answers more: every failure is the envelope
``{"error": {"code", "message"}}`` (``ucma.server.errors``), and some statuses can come
from any route (a missing key, another scope, a malformed body). ``describe_errors``
adds those to each operation of the generated document, so a client generated from it,
or a contract test (schemathesis), sees what the service really does.
"""

import copy
from typing import Any

from ucma.server.schemas import ErrorBody

__all__ = ["ERROR_STATUSES", "describe_errors", "require_user_id"]

_ENVELOPE = "#/components/schemas/ErrorBody"

#: Status -> description, for every operation (``_ANY``), operations with a request
#: body (``_WITH_BODY``) and every operation that needs a key (``_KEYED``).
_ANY = {
    "400": "Bad request: the body is not valid JSON or not UTF-8 "
    "(`malformed_json`, `invalid_utf8`), or the request is refused by configuration.",
    "408": "The request body stalled: it did not arrive within the service's body timeout "
    "or paused too long (`request_timeout`); the connection is closed.",
    "431": "The request headers are larger than the service accepts (`headers_too_large`).",
    "500": "Internal error (`internal_error`, `storage_error`); see the server log.",
    "503": "The service is at its limit of requests in progress (`overloaded`; retry after "
    "the seconds in `Retry-After`), or the embedding model could not be loaded or run "
    "(`embedding_error`).",
}
#: Headers of an error status, where it has any.
_HEADERS = {
    "503": {
        "Retry-After": {
            "description": "Seconds to wait before retrying (sent with `overloaded`).",
            "schema": {"type": "integer", "minimum": 1},
        }
    }
}
_KEYED = {
    "401": "Missing, unknown or revoked API key (`unauthorized`).",
    "404": "Not found (`not_found`): an id this scope does not hold, or a scope other "
    "than the API key's. Both answer alike, so nothing is learnt about other scopes.",
    "422": "Invalid request (`validation_error`, `missing_scope`, `content_refused`, "
    "`secret_refused`): the message says what to fix; `details` lists the fields.",
}
_WITH_BODY = {
    "413": "The body is larger than the service accepts (`payload_too_large`), or it "
    "(or an import line) breaks an input limit such as the JSON nesting depth "
    "(`input_limit_exceeded`).",
    "415": "The body is not of a media type the operation reads (`unsupported_media_type`).",
}
ERROR_STATUSES = frozenset({*_ANY, *_KEYED, *_WITH_BODY, "409"})
_UNKEYED = frozenset({"/v1/health"})


def _error(status: str, description: str) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": _ENVELOPE}}},
    }
    if status in _HEADERS:
        response["headers"] = _HEADERS[status]
    return response


def describe_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the error statuses and the envelope to every operation of ``schema``."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    envelope = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
    components.update(envelope.pop("$defs", {}))
    components["ErrorBody"] = envelope
    for path, operations in schema.get("paths", {}).items():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            statuses = dict(_ANY)
            if path not in _UNKEYED:
                statuses.update(_KEYED)
            if "requestBody" in operation:
                statuses.update(_WITH_BODY)
            for status, description in statuses.items():
                documented = responses.get(status, {})
                if status != "422" and "content" in documented:
                    continue  # a route's own answer for this status
                if status != "422" and documented.get("description"):
                    description = documented["description"]  # the route says more
                responses[status] = _error(status, description)
            for status, response in responses.items():
                if status in ERROR_STATUSES and "content" not in response:
                    responses[status] = _error(status, response.get("description", ""))
    for unused in ("HTTPValidationError", "ValidationError"):
        components.pop(unused, None)
    return schema


def require_user_id(schema: dict[str, Any]) -> dict[str, Any]:
    """The document of local mode (no API keys), where every request names its user:
    a copy of ``schema`` in which ``user_id`` is required and not null, in the query and
    in every body, and bodies that carry only a scope are required too. A request that
    does send a key is held to the key's scope instead (``ucma.server.auth``)."""
    local = copy.deepcopy(schema)
    for component in local.get("components", {}).get("schemas", {}).values():
        properties = component.get("properties", {})
        if "user_id" in properties:
            properties["user_id"] = _named_user(properties["user_id"])
            required = component.setdefault("required", [])
            if "user_id" not in required:
                required.insert(0, "user_id")
    for operations in local.get("paths", {}).values():
        for operation in operations.values():
            scoped = False
            for parameter in operation.get("parameters", []):
                if parameter.get("name") == "user_id" and parameter.get("in") == "query":
                    parameter["required"] = True
                    parameter["schema"] = _named_user(parameter["schema"])
                    parameter["description"] = _LOCAL_USER
                    scoped = True
            body = operation.get("requestBody")
            if body is not None and not body.get("required") and not scoped:
                for media in body.get("content", {}).values():
                    media["schema"] = _without_null(media["schema"])
                body["required"] = True
    return local


_LOCAL_USER = "Whose memory: required, since no API key fixes it (local mode)."


def _named_user(schema: dict[str, Any]) -> dict[str, Any]:
    named = _without_null(schema)
    named.pop("default", None)
    named["description"] = _LOCAL_USER
    return named


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its ``null`` alternative (``anyOf: [X, null]`` becomes X)."""
    branches = [b for b in schema.get("anyOf", []) if b != {"type": "null"}]
    if len(branches) != 1 or len(schema.get("anyOf", [])) != 2:
        return dict(schema)
    kept = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
    return {**branches[0], **kept}
