"""JSON errors for every failure: ``{"error": {"code": ..., "message": ...}}``.

================================  ======  ==========================
cause                             status  code
================================  ======  ==========================
malformed JSON body               400     ``malformed_json``
body that is not valid UTF-8      400     ``invalid_utf8``
missing, unknown or revoked key   401     ``unauthorized``
wrong types, limits exceeded      422     ``validation_error``
missing or empty user_id          422     ``missing_scope``
content the privacy policy        422     ``secret_refused``,
refuses (a secret; PII set to             ``content_refused``; the body
refuse)                                   names the ``kinds``, never values
engine ValidationError/ScopeError 422     the error's code
a state that forbids the change   409     ``outcome_already_recorded``,
(second outcome, late outcome,            ``outcome_window_closed``,
resolving a settled conflict)             ``conflict_not_pending``
other UserError (ConfigError)     400     the error's code
NotFoundError, unknown route,     404     ``not_found``
another scope than the key's
body larger than the limit        413     ``payload_too_large``
import beyond a LimitsConfig      413     ``input_limit_exceeded``
bound (JSON depth, line length,
line or blank-line count)
body of the wrong media type      415     ``unsupported_media_type``
JSON body nested too deep         413     ``input_limit_exceeded``
body stalled (sent too slowly)    408     ``request_timeout``
headers larger than the limit     431     ``headers_too_large``
too many requests in progress     503     ``overloaded`` (``Retry-After``)
ProviderError                     502     ``provider_error``
EmbeddingError                    503     ``embedding_error``
StorageError, anything else       500     the error's code / ``internal_error``
================================  ======  ==========================

Submitted values are never echoed back: they may be megabytes long or private.
"""

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ucma.errors import (
    AuthenticationError,
    ConflictNotPending,
    ContentRefusedError,
    EmbeddingError,
    InputLimitError,
    NotFoundError,
    OutcomeError,
    ProviderError,
    StorageError,
    UCMAError,
    UserError,
    ValidationError,
)

__all__ = ["SCOPE_MESSAGE", "error_response", "install_error_handlers"]

logger = logging.getLogger(__name__)

SCOPE_MESSAGE = (
    "user_id is required and must be a non-empty string: every memory belongs to a user "
    '(send e.g. "user_id": "alice", or an API key bound to a user)'
)

# Most specific first: ScopeError is a ValidationError, NotFoundError a UserError.
_STATUS_BY_ERROR: tuple[tuple[type[UCMAError], int], ...] = (
    (NotFoundError, 404),
    (AuthenticationError, 401),
    (OutcomeError, 409),
    (ConflictNotPending, 409),
    (InputLimitError, 413),
    (ValidationError, 422),
    (UserError, 400),
    (ProviderError, 502),
    (EmbeddingError, 503),
    (StorageError, 500),
)

_CODE_BY_STATUS = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


def error_response(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    response = JSONResponse({"error": {"code": code, "message": message, **extra}}, status)
    if status == 401:
        response.headers["www-authenticate"] = 'Bearer realm="ucma"'
    return response


def _status_for(exc: UCMAError) -> int:
    for error_type, status in _STATUS_BY_ERROR:
        if isinstance(exc, error_type):
            return status
    return 500


async def _on_ucma_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, UCMAError)
    status = _status_for(exc)
    if status >= 500:
        logger.error("%s %s failed: %r", request.method, request.url.path, exc, exc_info=exc)
    extra = {"kinds": list(exc.kinds)} if isinstance(exc, ContentRefusedError) else {}
    return error_response(status, exc.code, str(exc) or type(exc).__name__, **extra)


def _location(error: dict[str, Any]) -> str:
    parts = [str(part) for part in error.get("loc", ()) if part != "body"]
    return ".".join(parts) or "body"


def _is_scope_error(error: dict[str, Any]) -> bool:
    loc = tuple(error.get("loc", ()))
    return bool(loc) and loc[-1] == "user_id"


def _is_json(request: Request) -> bool:
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    return media_type == "application/json" or media_type.endswith("+json")


def _is_body_shape_error(error: dict[str, Any]) -> bool:
    return tuple(error.get("loc", ())) == ("body",) and error.get("type") != "missing"


async def _on_request_validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    for error in errors:
        if error.get("type") == "json_invalid":
            reason = (error.get("ctx") or {}).get("error", "JSON decode error")
            loc = tuple(error.get("loc", ()))
            where = f" at byte {loc[-1]}" if loc and isinstance(loc[-1], int) else ""
            return error_response(
                400, "malformed_json", f"request body is not valid JSON: {reason}{where}"
            )
    if not _is_json(request) and any(_is_body_shape_error(error) for error in errors):
        return error_response(
            415,
            "unsupported_media_type",
            "send the request body as a JSON object with the header content-type: application/json",
        )
    details = [
        {"loc": list(error.get("loc", ())), "msg": error.get("msg"), "type": error.get("type")}
        for error in errors
    ]
    if any(_is_scope_error(error) for error in errors):
        return error_response(422, "missing_scope", SCOPE_MESSAGE, details=details)
    message = "; ".join(f"{_location(error)}: {error.get('msg')}" for error in errors[:5])
    return error_response(422, "validation_error", message, details=details)


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeDecodeError):
        return error_response(400, "invalid_utf8", "request body is not valid UTF-8")
    code = _CODE_BY_STATUS.get(exc.status_code, "http_error")
    response = error_response(exc.status_code, code, str(exc.detail))
    if exc.headers:
        response.headers.update(exc.headers)
    if exc.status_code == 405:
        response.headers["allow"] = ", ".join(_allowed_methods(request))
    return response


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route answers on this path (Starlette's 405 names only the
    first route's, while GET and POST of one path are separate routes here)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        regex = getattr(route, "path_regex", None)
        if regex is not None and getattr(route, "methods", None) and regex.match(request.url.path):
            methods.update(route.methods)
    return sorted(methods)


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal_error", "internal server error; see the server log")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(UCMAError, _on_ucma_error)
    app.add_exception_handler(RequestValidationError, _on_request_validation)
    app.add_exception_handler(HTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)
