"""The REST API: a thin FastAPI layer over :class:`ucma.engine.AsyncMemory`.

Contract (first cut; API keys and the full API come later):

- Routes live under ``/v1``; ``/`` is a small inspector page and ``/docs`` the OpenAPI UI.
- Every request is scoped: ``user_id`` is required and non-empty, ``agent_id`` optional. A
  missing or empty ``user_id`` is refused with 422 and the code ``missing_scope``.
- Every error is JSON, ``{"error": {"code": ..., "message": ...}}``, where ``code`` is the
  ``UCMAError.code`` of the engine error or one of the request codes below:

  ================================  ======  ==========================
  cause                             status  code
  ================================  ======  ==========================
  malformed JSON body               400     ``malformed_json``
  body that is not valid UTF-8      400     ``invalid_utf8``
  wrong types, limits exceeded      422     ``validation_error``
  missing or empty user_id          422     ``missing_scope``
  engine ValidationError/ScopeError 422     the error's code
  other UserError (ConfigError)     400     the error's code
  NotFoundError, unknown route      404     ``not_found``
  body larger than the limit        413     ``payload_too_large``
  body that is not sent as JSON     415     ``unsupported_media_type``
  ProviderError                     502     ``provider_error``
  EmbeddingError                    503     ``embedding_error``
  StorageError, anything else       500     the error's code / ``internal_error``
  ================================  ======  ==========================

- Bodies larger than ``max_body_bytes`` (1 MiB by default) are refused with 413, from the
  Content-Length header when there is one and while streaming otherwise.

This module deliberately has no ``from __future__ import annotations``: the request models
are built per app from its configured limits, and FastAPI resolves endpoint annotations
eagerly.
"""

import asyncio
import dataclasses
import html
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)
from starlette.exceptions import HTTPException

import ucma
from ucma import serialization
from ucma.config import UCMAConfig
from ucma.engine import AsyncMemory
from ucma.errors import (
    ConfigError,
    EmbeddingError,
    NotFoundError,
    ProviderError,
    StorageError,
    UCMAError,
    UserError,
    ValidationError,
)
from ucma.lifecycle.gardener import maintenance_loop

__all__ = ["DEFAULT_MAX_BODY_BYTES", "create_app"]

logger = logging.getLogger(__name__)

#: Largest request body accepted (1 MiB); larger ones get 413.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
#: Longest user_id, agent_id, session_id or source accepted.
MAX_ID_CHARS = 256

_SCOPE_MESSAGE = (
    "user_id is required and must be a non-empty string: every memory belongs to a user "
    '(send e.g. "user_id": "alice")'
)

# Most specific first: ScopeError is a ValidationError, NotFoundError a UserError.
_STATUS_BY_ERROR: tuple[tuple[type[UCMAError], int], ...] = (
    (NotFoundError, 404),
    (ValidationError, 422),
    (UserError, 400),
    (ProviderError, 502),
    (EmbeddingError, 503),
    (StorageError, 500),
)

_CODE_BY_STATUS = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
}


# --------------------------------------------------------------------------- request models


def _encodable(value: str) -> str:
    """Reject strings that cannot be stored as UTF-8 (lone surrogates sent as JSON escapes)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text must be valid Unicode (it contains a lone surrogate)") from exc
    return value


def _encodable_json(value: dict[str, Any] | None) -> dict[str, Any] | None:
    if value is not None:
        _encodable(json.dumps(value, ensure_ascii=False))
    return value


Identifier = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS), AfterValidator(_encodable)
]


class _ScopedRequest(BaseModel):
    """Fields every scoped request carries; unknown fields are refused (typo protection)."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier = Field(description="Whose memory: required and non-empty.")
    agent_id: Identifier | None = Field(
        default=None, description='Which agent of that user; the engine default is "default".'
    )


def _request_models(config: UCMAConfig) -> tuple[type[BaseModel], type[BaseModel]]:
    """Build the request bodies with this app's limits, so OpenAPI shows the real bounds."""
    limits = config.limits
    retrieval = config.retrieval

    class ObserveRequest(_ScopedRequest):
        """One observation to remember."""

        content: Annotated[
            str,
            StringConstraints(min_length=1, max_length=limits.max_content_chars),
            AfterValidator(_encodable),
        ] = Field(description="The text observed.")
        source: Identifier = Field(
            default="user", description='Who produced it: "user", "assistant", "tool_result"...'
        )
        timestamp: float | None = Field(
            default=None,
            allow_inf_nan=False,
            description="When it happened, epoch seconds (UTC); default now.",
        )
        metadata: Annotated[dict[str, Any] | None, AfterValidator(_encodable_json)] = None
        session_id: Identifier | None = Field(
            default=None, description="Session to file it under; default the current session."
        )

    class RememberRequest(_ScopedRequest):
        """A retrieval query."""

        query: Annotated[
            str,
            StringConstraints(min_length=1, max_length=limits.max_query_chars),
            AfterValidator(_encodable),
        ]
        limit: int = Field(default=retrieval.max_results, ge=1, le=retrieval.max_results_limit)
        time_range: tuple[float, float] | None = Field(
            default=None, description="[start, end] in epoch seconds; only memories in it."
        )

        @model_validator(mode="after")
        def _ordered_range(self) -> "RememberRequest":
            if self.time_range is not None and self.time_range[0] > self.time_range[1]:
                raise ValueError("time_range must be [start, end] with start <= end")
            return self

    return ObserveRequest, RememberRequest


class HealthResponse(BaseModel):
    status: str
    version: str
    embedder: str
    database: str


class ObservationResponse(BaseModel):
    id: str
    stored: bool
    importance: float
    temporal_level: int


class RememberResponse(BaseModel):
    results: list[dict[str, Any]]


# --------------------------------------------------------------------------------- errors


def _error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status)


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
    return _error(status, exc.code, str(exc) or type(exc).__name__)


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
            return _error(400, "malformed_json", f"request body is not valid JSON: {reason}{where}")
    if not _is_json(request) and any(_is_body_shape_error(error) for error in errors):
        return _error(
            415,
            "unsupported_media_type",
            "send the request body as a JSON object with the header content-type: application/json",
        )
    # The submitted values are left out: they may be megabytes long or private.
    details = [
        {"loc": list(error.get("loc", ())), "msg": error.get("msg"), "type": error.get("type")}
        for error in errors
    ]
    if any(_is_scope_error(error) for error in errors):
        return _error(422, "missing_scope", _SCOPE_MESSAGE, details=details)
    message = "; ".join(f"{_location(error)}: {error.get('msg')}" for error in errors[:5])
    return _error(422, "validation_error", message, details=details)


async def _on_http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeDecodeError):
        return _error(400, "invalid_utf8", "request body is not valid UTF-8")
    code = _CODE_BY_STATUS.get(exc.status_code, "http_error")
    response = _error(exc.status_code, code, str(exc.detail))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _on_unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return _error(500, "internal_error", "internal server error; see the server log")


# ------------------------------------------------------------------------ body size limit

_Scope = MutableMapping[str, Any]
_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]


class BodySizeLimit:
    """Refuse request bodies larger than ``max_bytes`` with 413 (pure ASGI middleware).

    A declared Content-Length is checked before the app runs; a streamed body is counted as
    it is read, and the read fails with 413 as soon as it crosses the limit.
    """

    def __init__(
        self,
        app: Callable[[_Scope, _Receive, _Send], Awaitable[None]],
        max_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _message(self) -> str:
        return f"request body is larger than the limit of {self.max_bytes} bytes"

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            response = _error(413, "payload_too_large", self._message())
            await response(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> _Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, self._message())
            return message

        await self.app(scope, limited_receive, send)


# ------------------------------------------------------------------------------ the app


def _scope_args(user_id: str, agent_id: str | None) -> dict[str, str]:
    scope = {"user_id": user_id}
    if agent_id is not None:
        scope["agent_id"] = agent_id
    return scope


def create_app(
    memory: AsyncMemory | None = None,
    *,
    home: Path | None = None,
    config: UCMAConfig | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    maintenance: bool = True,
) -> FastAPI:
    """Build the REST app over ``memory``, or over ``<home>/ucma.db`` when none is given.

    The lifespan opens the engine at startup (opening is idempotent) and, when the app
    created it, closes it at shutdown; an engine passed in stays the caller's to close.
    ASGI test transports do not run the lifespan: open the engine before the first request.
    ``config`` applies to an engine the app creates; the request limits come from the
    engine's own config. ``home`` defaults to ``~/.ucma``; the library reads no environment
    variables, the CLI does (``UCMA_HOME``). With ``maintenance`` the lifespan also runs
    the consolidation / gardener scheduler (``ucma.lifecycle.gardener.maintenance_loop``,
    every ``ConsolidationConfig.interval_seconds``) until shutdown.
    """
    owned = memory is None
    if memory is not None and config is not None:
        raise ConfigError("pass config to AsyncMemory, not to create_app, with an engine")
    if memory is None:
        home = Path(home).expanduser() if home is not None else Path.home() / ".ucma"
        memory = AsyncMemory(home / "ucma.db", config=config)
    engine: AsyncMemory = memory
    ObserveRequest, RememberRequest = _request_models(engine.config)  # noqa: N806 - classes

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await engine.open()
        stop = asyncio.Event()
        scheduler = (
            asyncio.create_task(maintenance_loop(engine, stop), name="ucma-maintenance")
            if maintenance
            else None
        )
        try:
            yield
        finally:
            stop.set()
            if scheduler is not None:
                engine.interrupt_consolidation()
                await asyncio.gather(scheduler, return_exceptions=True)
            if owned:
                await engine.close()

    app = FastAPI(
        title="UCMA",
        version=ucma.__version__,
        summary="Long-term memory for LLM agents: observe, remember, learn.",
        lifespan=lifespan,
    )
    app.state.memory = engine
    app.add_middleware(BodySizeLimit, max_bytes=max_body_bytes)
    app.add_exception_handler(UCMAError, _on_ucma_error)
    app.add_exception_handler(RequestValidationError, _on_request_validation)
    app.add_exception_handler(HTTPException, _on_http_error)
    app.add_exception_handler(Exception, _on_unexpected)

    @app.get("/v1/health", tags=["service"])
    async def health() -> HealthResponse:
        """Liveness, version, embedding model and database location."""
        return HealthResponse(
            status="ok",
            version=ucma.__version__,
            embedder=engine.embedder.model_id,
            database=os.fspath(engine.path),
        )

    @app.post("/v1/observe", status_code=201, tags=["memory"])
    async def observe(body: ObserveRequest) -> ObservationResponse:  # type: ignore[valid-type]
        """Observe one input; it is stored as an episode when it is important enough."""
        data = body.model_dump()
        observation = await engine.observe(
            data["content"],
            source=data["source"],
            timestamp=data["timestamp"],
            metadata=data["metadata"],
            session_id=data["session_id"],
            **_scope_args(data["user_id"], data["agent_id"]),
        )
        return ObservationResponse(**dataclasses.asdict(observation))

    @app.post("/v1/remember", tags=["memory"])
    async def remember(body: RememberRequest) -> RememberResponse:  # type: ignore[valid-type]
        """Retrieve the memories most relevant to a query, best first."""
        data = body.model_dump()
        hits = await engine.remember(
            data["query"],
            limit=data["limit"],
            time_range=data["time_range"],
            **_scope_args(data["user_id"], data["agent_id"]),
        )
        return RememberResponse(results=[serialization.hit_to_dict(hit) for hit in hits])

    @app.get("/v1/stats", tags=["memory"])
    async def stats(
        user_id: Annotated[str, Query(min_length=1, max_length=MAX_ID_CHARS)],
        agent_id: Annotated[str | None, Query(min_length=1, max_length=MAX_ID_CHARS)] = None,
    ) -> dict[str, Any]:
        """Counts and sizes of one scope's memory."""
        return await engine.stats(**_scope_args(user_id, agent_id))

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def inspector(
        user_id: Annotated[str | None, Query(max_length=MAX_ID_CHARS)] = None,
        agent_id: Annotated[str | None, Query(max_length=MAX_ID_CHARS)] = None,
    ) -> HTMLResponse:
        """A small page: what this service holds for one scope, and where to go next."""
        table = ""
        if user_id:
            scope_stats = await engine.stats(**_scope_args(user_id, agent_id or None))
            table = _stats_table(scope_stats, user_id, agent_id or None)
        return HTMLResponse(
            _PAGE.format(
                version=html.escape(ucma.__version__),
                database=html.escape(os.fspath(engine.path)),
                user_id=html.escape(user_id or "", quote=True),
                agent_id=html.escape(agent_id or "", quote=True),
                table=table,
            )
        )

    return app


# ------------------------------------------------------------------------ inspector page


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows: list[tuple[str, Any]] = []
        for key, item in value.items():
            rows.extend(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return rows
    return [(prefix, value)]


def _stats_table(stats: dict[str, Any], user_id: str, agent_id: str | None) -> str:
    """Memories per kind for the scope, then every other statistic, flattened."""
    scope = html.escape(f"{stats.get('user_id', user_id)} / {stats.get('agent_id', agent_id)}")
    counts = stats.get("memories") or {}
    count_rows = "".join(
        f"<tr><td>{html.escape(str(kind))}</td><td>{html.escape(str(n))}</td></tr>"
        for kind, n in counts.items()
    )
    detail_rows = "".join(
        f"<tr><td>{html.escape(key)}</td><td>{html.escape(json.dumps(value))}</td></tr>"
        for key, value in _flatten({k: v for k, v in stats.items() if k != "memories"})
    )
    return (
        f"<h2>Scope {scope}</h2>"
        f"<table><tr><th>kind</th><th>memories</th></tr>{count_rows}</table>"
        f"<details><summary>All statistics</summary><table>{detail_rows}</table></details>"
    )


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>UCMA memory</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 48rem; margin: 2rem auto; }}
table {{ border-collapse: collapse; }} td {{ border: 1px solid #ccc; padding: .2rem .6rem; }}
</style></head><body>
<h1>UCMA memory service</h1>
<p>Version {version}. Database <code>{database}</code>.
API docs: <a href="/docs">/docs</a>. Health: <a href="/v1/health">/v1/health</a>.</p>
<form method="get" action="/">
<label>user_id <input name="user_id" value="{user_id}" required></label>
<label>agent_id <input name="agent_id" value="{agent_id}" placeholder="default"></label>
<button type="submit">Show</button></form>
{table}
</body></html>
"""
