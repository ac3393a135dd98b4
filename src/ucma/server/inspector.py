"""The memory inspector: a web page at ``/`` where a person sees, searches and corrects
what an agent remembers.

The page is static (``static/``: one HTML shell, a style sheet and plain JavaScript
modules, shipped in the package; no CDN, no build step). It reads and changes memory
only through the public REST API under ``/v1``, with the API key a person enters once in
the page (kept in that browser tab), or none in local mode: it can see exactly what that
key can, and nothing is rendered on the server, so no data reaches a browser that did not
ask with a valid key. ``main.js`` lists the views; each is a module in ``static/views/``,
loaded when first shown, so the first view downloads only the shell and its own module.
"""

import os
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

__all__ = ["ASSETS", "STATIC", "mount_inspector"]

STATIC = Path(__file__).with_name("static")
"""The page's files."""

ASSETS = "/inspector"
"""Where the page's scripts and styles are served."""

_HEADERS = {
    # Scripts and styles from this service only; style attributes set by the scripts.
    "content-security-policy": (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}


def mount_inspector(app: FastAPI) -> None:
    """Serve the page at ``/`` and its files under ``ASSETS``."""

    @app.get("/", include_in_schema=False)
    async def inspector() -> FileResponse:
        """The memory inspector (its data comes from /v1 with the reader's own key)."""
        return FileResponse(STATIC / "index.html", media_type="text/html", headers=_HEADERS)

    app.mount(ASSETS, _Assets(directory=STATIC), name="inspector")


class _Assets(StaticFiles):
    """The page's files with the page's security headers (and revalidated on each load,
    so an upgraded service never runs an old script against a new API)."""

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers.update(_HEADERS)
        if os.fspath(full_path).endswith(".js"):  # not left to the system's MIME table
            response.headers["content-type"] = "text/javascript; charset=utf-8"
        return response
