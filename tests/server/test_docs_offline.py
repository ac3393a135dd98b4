"""The API docs work offline: every asset /docs and /redoc reference is served by the
service itself (200, same origin); no page points to another host."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from tests.server.conftest import BASE_URL

pytestmark = pytest.mark.anyio

# Quoted URLs in inline scripts: absolute, protocol-relative or rooted paths.
_SCRIPT_URL = re.compile(r"""['"]((?:[a-z][a-z0-9+.-]*:)?//[^'"\s]+|/[^'"\s]*)['"]""", re.I)


class _References(HTMLParser):
    """Every URL a page makes the browser load or follow: attribute values that are
    URLs (src, href, spec-url, ...) and URLs quoted in inline scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._in_script = tag == "script"
        for name, value in attrs:
            if value and (name in ("src", "href", "action") or name.endswith("url")):
                self.urls.append(value)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.urls.extend(_SCRIPT_URL.findall(data))


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_every_asset_of_the_docs_is_served_locally(
    local: httpx.AsyncClient, page: str
) -> None:
    response = await local.get(page)
    assert response.status_code == 200
    assert "text/html" in response.headers["content-type"]
    parser = _References()
    parser.feed(response.text)
    urls = set(parser.urls)
    assert any(url.endswith(".js") for url in urls), urls  # the renderer itself
    assert "/openapi.json" in urls
    own = urlsplit(BASE_URL).netloc
    for url in urls:
        absolute = urljoin(BASE_URL + page, url)
        assert urlsplit(absolute).netloc == own, f"{page} points off-host: {url}"
        fetched = await local.get(absolute)
        assert fetched.status_code == 200, f"{page} references {url}: {fetched.status_code}"
        assert fetched.content, url
    assert "googleapis" not in response.text and "cdn" not in response.text.lower()
