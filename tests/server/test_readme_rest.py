"""The README's REST examples (curl commands) run as written against the service in
local mode: each request as curl would send it, over the app's ASGI transport."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from tests.readme_blocks import shell_commands

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


def _request(words: list[str]) -> tuple[httpx.Request, str | None]:
    """The request a README curl command sends, and the file it writes (``> file``)."""
    assert words[0] == "curl", words
    method, headers, body, url, out = "GET", {}, None, None, None
    rest = iter(words[1:])
    for word in rest:
        if word == "-s":
            continue
        if word == "-X":
            method = next(rest)
        elif word == "-H":
            name, value = next(rest).split(":", 1)
            headers[name.strip()] = value.strip()
        elif word == "-d":
            body = next(rest)
        elif word == ">":
            out = next(rest)
        else:
            assert url is None, f"unexpected word {word!r} in {words}"
            url = word
    assert url is not None
    if body is not None and method == "GET":
        method = "POST"  # curl's -d alone posts
    return httpx.Request(method, url, headers=headers, content=body), out


async def test_the_rest_examples_run_as_written(local: httpx.AsyncClient, tmp_path: Path):
    statuses = []
    for words in shell_commands("## REST API"):
        request, out = _request(words)
        response = await local.send(
            local.build_request(
                request.method,
                request.url.copy_with(scheme="http", host="ucma.test", port=None),
                headers=request.headers,
                content=request.content,
            )
        )
        assert response.is_success, (words, response.status_code, response.text)
        statuses.append((request.url.path, response))
        if out is not None:
            (tmp_path / out).write_bytes(response.content)
        else:
            json.loads(response.text)
    paths = [path for path, _ in statuses]
    assert paths[:2] == ["/v1/health", "/v1/observe"]
    recall = next(r for p, r in statuses if p == "/v1/recall").json()
    assert "dark mode" in recall["results"][0]["content"]
    exported = (tmp_path / "alice.jsonl").read_text().splitlines()
    assert any("dark mode" in line for line in exported)
