"""The service: REST under ``/v1``, MCP at ``/mcp``, an inspector page at ``/``.

A thin FastAPI layer over :class:`ucma.engine.AsyncMemory`; the routes live in
``ucma.server.routes`` (one module per resource), authentication in ``ucma.server.auth``,
errors in ``ucma.server.errors`` (every failure is ``{"error": {"code", "message"}}``),
what one request may cost (body and header sizes, JSON depth, body timeouts, requests
in progress) in ``ucma.server.limits``. OpenAPI is at ``/openapi.json``, rendered at
``/docs`` (Swagger UI) and ``/redoc`` with assets the service serves itself from the
``fastapi-offline`` package (no CDN: the docs work offline).

This package deliberately has no ``from __future__ import annotations``: FastAPI resolves
endpoint annotations eagerly.
"""

import asyncio
import dataclasses
import importlib.util
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from starlette.routing import Route

import ucma
from ucma.config import ServiceConfig, UCMAConfig
from ucma.conflicts.sources import SourceOfTruth
from ucma.embeddings.base import preload
from ucma.engine import AsyncMemory
from ucma.errors import AuthenticationError, ConfigError
from ucma.lifecycle.gardener import maintenance_loop
from ucma.server.auth import Access, authenticate, scope_for
from ucma.server.errors import error_response, install_error_handlers
from ucma.server.inspector import mount_inspector
from ucma.server.limits import RequestLimits
from ucma.server.openapi import describe_errors, require_user_id
from ucma.server.routes import ROUTERS

__all__ = ["DOCS_ASSETS", "ServiceConfig", "create_app"]

logger = logging.getLogger(__name__)

DOCS_ASSETS = "/docs-assets"
"""Where the API docs' scripts, styles and icon are served (from ``fastapi-offline``)."""

_DESCRIPTION = """\
Long-term memory for LLM agents: observe what happens, remember what matters, learn from it.

**Scope.** Every memory belongs to a user (and an agent of that user). With an API key
(`Authorization: Bearer <token>`, created with `ucma keys create --user U`) the scope comes
from the key; `user_id` may then be left out, and naming another user answers 404. In local
mode (no keys, bound to 127.0.0.1) every request names its `user_id`, and this document
says so: it is served for the mode the service is in (`user_id` required while no key
exists).

**Limits.** A request body over {max_body_bytes} bytes (an import: {max_import_bytes}),
JSON nested deeper than {max_json_depth} levels or headers over {max_header_bytes} bytes
are refused (413, 431); a body not sent within {body_timeout:g} s gets 408; a request that
arrives while {max_concurrent_requests} are in progress gets 503 with `Retry-After`.
`ucma serve` options set each limit.

**Errors** are JSON: `{{"error": {{"code": "...", "message": "..."}}}}`.

**Lists** are pages: `limit` and `offset` in, `items` and `next_offset` (null at the end) out.
"""


def create_app(
    memory: AsyncMemory | None = None,
    *,
    home: Path | None = None,
    database: str | os.PathLike[str] | None = None,
    config: UCMAConfig | None = None,
    require_keys: bool | None = None,
    limits: ServiceConfig | None = None,
    mcp: bool | None = None,
    host: str = "127.0.0.1",
    maintenance: bool = True,
    sources: Sequence[SourceOfTruth] = (),
) -> FastAPI:
    """Build the service over ``memory``, or when none is given over the store
    ``database`` names (a file path or URL, ``AsyncMemory``), by default ``<home>/ucma.db``.

    ``require_keys`` chooses the authentication mode (see ``ucma.server.auth``): True
    always needs a key, False never (local mode), None (the default) needs one as soon as
    the database holds a live key, checked on every request, so a key created by another
    process (``ucma keys create``) applies from the next request. ``mcp`` mounts the MCP
    tools at ``/mcp``: True needs the ``mcp`` extra, None (the default) mounts them when it
    is installed. ``host`` is where the server binds, for the MCP transport's DNS rebinding
    protection (on for loopback hosts).

    The lifespan opens the engine at startup (opening is idempotent), prepares the search
    of large scopes and loads the embedding model in the background
    (``AsyncMemory.prepare_large_scopes``, ``Embedder.warm_up``), runs the MCP
    session manager, and, when the app created the engine, closes it at shutdown; an engine passed
    in stays the caller's to close. ASGI test transports do not run the lifespan: open the
    engine before the first request (MCP needs the lifespan and a real server). ``config``
    applies to an engine the app creates. ``home`` defaults to ``~/.ucma``; the library
    reads no environment variables, the CLI does (``UCMA_HOME``). With ``maintenance`` the
    lifespan also runs the consolidation / gardener scheduler
    (``ucma.lifecycle.gardener.maintenance_loop``, every
    ``ConsolidationConfig.interval_seconds``) until shutdown. ``sources`` are sources of
    truth attached to the engine (``ucma.conflicts.source_file.load_sources`` reads them
    from a file), so memory-versus-database conflicts work for the service's users.
    ``limits`` bound each request's size and time and the requests in progress
    (``ucma.config.ServiceConfig``; its defaults when None).
    """
    owned = memory is None
    if memory is not None and config is not None:
        raise ConfigError("pass config to AsyncMemory, not to create_app, with an engine")
    if database is not None and (memory is not None or home is not None):
        raise ConfigError("give create_app one of memory, home and database")
    if memory is None:
        if database is None:
            home = Path(home).expanduser() if home is not None else Path.home() / ".ucma"
            database = home / "ucma.db"
        memory = AsyncMemory(database, config=config)
    engine: AsyncMemory = memory
    for source in sources:
        engine.add_source_of_truth(source)
    access = Access(engine, require_keys)
    limits = limits or ServiceConfig()
    if mcp is None:
        mcp = importlib.util.find_spec("mcp") is not None
    mcp_server = _mcp_server(access, host) if mcp else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The embedding model loads in the background from the first moment (it takes the
        # longest), so the first observe or recall does not wait for it.
        model = asyncio.create_task(preload(engine.embedder), name="ucma-load-model")
        try:
            await engine.open()
        except BaseException:
            model.cancel()
            await asyncio.gather(model, return_exceptions=True)
            raise
        stop = asyncio.Event()
        scheduler = (
            asyncio.create_task(maintenance_loop(engine, stop), name="ucma-maintenance")
            if maintenance
            else None
        )
        # Large scopes' caches and HNSW graphs, built while the service already answers.
        warm_up = asyncio.create_task(engine.prepare_large_scopes(), name="ucma-prepare-search")
        try:
            async with AsyncExitStack() as stack:
                if mcp_server is not None:
                    await stack.enter_async_context(mcp_server.session_manager.run())
                yield
        finally:
            stop.set()
            warm_up.cancel()
            model.cancel()
            await asyncio.gather(warm_up, model, return_exceptions=True)
            if scheduler is not None:
                engine.interrupt_consolidation()
                await asyncio.gather(scheduler, return_exceptions=True)
            if owned:
                await engine.close()

    # FastAPIOffline: FastAPI with /docs (Swagger UI) and /redoc served from the
    # fastapi-offline package's own copies of the assets, not a CDN, so both work offline.
    app = FastAPIOffline(
        static_url=DOCS_ASSETS,
        title="UCMA",
        version=ucma.__version__,
        summary="Long-term memory for LLM agents: observe, remember, learn.",
        description=_DESCRIPTION.format(
            max_json_depth=engine.config.limits.max_json_depth, **dataclasses.asdict(limits)
        ),
        lifespan=lifespan,
    )
    app.state.memory = engine
    app.state.access = access
    app.add_middleware(
        RequestLimits,
        limits=limits,
        max_json_depth=engine.config.limits.max_json_depth,
    )
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    generate = app.openapi
    documents: dict[bool, dict[str, Any]] = {}

    def document(local: bool) -> dict[str, Any]:
        """The OpenAPI document of local mode (user_id required) or of keyed mode."""
        if local not in documents:
            keyed = documents.get(False) or describe_errors(generate())
            documents[False] = keyed
            documents[True] = require_user_id(keyed)
        return documents[local]

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(local=require_keys is False)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    if require_keys is None:
        _serve_document_of_the_mode(app, access, document)
    if mcp_server is not None:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

        endpoint = StreamableHTTPASGIApp(mcp_server.session_manager)
        app.router.routes.append(Route("/mcp", endpoint=_KeyGate(endpoint, access)))

    mount_inspector(app)
    return app


def _serve_document_of_the_mode(
    app: FastAPI, access: Access, document: Callable[[bool], dict[str, Any]]
) -> None:
    """Serve ``/openapi.json`` for the mode the service is in when it is asked: local
    (user_id required) while the database holds no live key, keyed once one exists."""
    url = app.openapi_url
    app.router.routes[:] = [r for r in app.router.routes if getattr(r, "path", None) != url]

    async def openapi_document(request: Request) -> JSONResponse:
        return JSONResponse(document(not await access.keys_required()))

    app.router.routes.insert(0, Route(url or "/openapi.json", endpoint=openapi_document))


def _mcp_server(access: Access, host: str) -> Any:
    """The MCP tools with each call's scope taken from its HTTP headers."""
    from mcp.server.transport_security import TransportSecuritySettings

    from ucma.mcp import create_mcp_server

    async def scope(ctx: Any) -> dict[str, str]:
        headers = ctx.headers or {}
        key = await authenticate(access, headers.get("authorization"))
        return scope_for(key, headers.get("x-ucma-user-id"), headers.get("x-ucma-agent-id"))

    server = create_mcp_server(access.engine, scope)
    loopback = host in ("127.0.0.1", "localhost", "::1")
    security = (
        None  # the SDK's default for loopback hosts: DNS rebinding protection on
        if loopback
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    server.streamable_http_app(streamable_http_path="/mcp", transport_security=security, host=host)
    return server


class _KeyGate:
    """Refuse MCP requests without a valid key (when keys are required) before the MCP
    transport sees them; the tools still resolve each call's scope from the key."""

    def __init__(self, app: Any, access: Access) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            await authenticate(self.access, headers.get("authorization"))
        except AuthenticationError as exc:
            await error_response(401, exc.code, str(exc))(scope, receive, send)
            return
        await self.app(scope, receive, send)
