"""Fixtures of the browser tests: the real service on a loopback port (uvicorn, real
SQLite, the packaged embedder), a store seeded through the public REST API, and
Playwright driving the system's headless Chromium at 1400x900.

Chromium comes from the system (``apt-get install chromium``; ``make test-browser`` and
``.ci/run`` install it when missing), never from ``playwright install``. The fixtures
are this folder's own (no pytest-playwright): its plugin would claim every test with an
argument named ``page`` and keep Playwright's event loop running for the whole session.
Screenshots of each view are written to ``.artifacts/inspector/`` (gitignored;
``UCMA_SCREENSHOTS`` moves it); docs/inspector/ holds copies.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip(
    "playwright", reason="the browser tests need the ui-tests extra (make test-browser installs it)"
)

from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

from ucma.server import create_app  # noqa: E402
from ucma.sync import Memory  # noqa: E402

LiveServer = Callable[[object], AbstractContextManager[str]]

CHROMIUM = os.environ.get("UCMA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("UCMA_SCREENSHOTS") or ROOT / ".artifacts" / "inspector")
VIEWPORT = {"width": 1400, "height": 900}

#: Words only alice's records hold: a bob page that shows one leaks.
CANARIES = ("Zephyrine", "Quokkaville", "Marrowfield")


#: Chromium's switches for these machines: no sandbox (root), no GPU, nothing fetched.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """The system Chromium, headless, for one test module: Playwright's sync API runs its
    own event loop, stopped at the module's end, before any other (async) test runs."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: run make test-browser (installs it)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context (no stored key or scope) at 1400x900."""
    context = browser.new_context(viewport=VIEWPORT, locale="en-GB", timezone_id="UTC")
    try:
        yield context.new_page()
    finally:
        context.close()


@dataclass
class Site:
    """A running service and what was seeded into it."""

    url: str
    ids: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)


def _ok(response: httpx.Response) -> Any:
    assert response.status_code < 300, (response.request.url, response.text)
    return response.json() if response.content else None


def seed(client: httpx.Client, user: str | None, words: tuple[str, str, str]) -> dict[str, str]:
    """A realistic store written through the REST API: episodes in two sessions, facts
    (one corrected, one in conflict), a decision with an outcome, a strategy, an
    opinion, a link, goals (one split into subgoals, one suspended by what memory
    says), competences with predictions and failures, a transition, a sleep cycle.
    ``words``: a person, a place and a project."""
    person, place, project = words
    scope = {"user_id": user} if user else {}
    ids: dict[str, str] = {}

    def observe(text: str, **extra: Any) -> str:
        return str(_ok(client.post("/v1/observe", json={**scope, "content": text, **extra}))["id"])

    ids["move"] = observe(f"{person} moved to {place} in March and works on the {project} project.")
    ids["theme"] = observe(f"{person} prefers dark mode in every editor.")
    ids["deploy"] = observe(f"The {project} deploy is frozen on Fridays.")
    ids["parking"] = observe(f"The parking garage code for the {project} office is 4471.")
    _ok(client.post("/v1/sessions", json=scope))
    ids["standup"] = observe(f"{person} asked to move the {project} standup to 10:00.")
    ids["long"] = observe(
        f"A very long note about {project}: "
        + " ".join(f"item{n}-without-breaks" * 3 for n in range(60))
    )
    fact = _ok(
        client.post(
            "/v1/facts",
            json={**scope, "subject": person, "predicate": "favorite_color", "object": "teal"},
        )
    )
    ids["color"] = fact["fact"]["id"]
    _ok(
        client.post(
            "/v1/facts", json={**scope, "subject": person, "predicate": "lives_in", "object": place}
        )
    )
    conflict = _ok(
        client.post(
            "/v1/facts",
            json={
                **scope,
                "subject": person,
                "predicate": "lives_in",
                "object": f"{place} Heights",
                "provenance": "inferred",
                "confidence": 0.75,
            },
        )
    )
    pending = [c for c in conflict["conflicts_detected"] if c["status"] == "pending"]
    assert pending, conflict
    ids["conflict"] = pending[0]["id"]
    decision = _ok(
        client.post(
            "/v1/decisions",
            json={
                **scope,
                "memory_ids": [ids["deploy"], ids["standup"]],
                "summary": f"Scheduled the {project} deploy for Thursday",
            },
        )
    )
    ids["decision"] = decision["id"]
    _ok(
        client.post(
            f"/v1/decisions/{decision['id']}/outcome",
            json={**scope, "quality": 0.9, "signal": "task_completed"},
        )
    )
    _ok(
        client.post(
            "/v1/trajectories",
            json={
                **scope,
                "task": f"Deploy {project} safely",
                "steps": ["Check the freeze calendar", "Run the migrations", "Deploy"],
                "success": True,
                "domain": "deploys",
            },
        )
    )
    _ok(
        client.post(
            "/v1/retain",
            json={
                **scope,
                "text": f"{person} thinks the {project} dashboard is too slow.",
                "bank": "opinion",
                "topic": f"{project} dashboard speed",
            },
        )
    )
    _ok(
        client.post(
            "/v1/links",
            json={
                **scope,
                "source_id": ids["deploy"],
                "target_id": ids["move"],
                "edge_type": "caused",
                "weight": 0.7,
            },
        )
    )
    goal = _ok(
        client.post(
            "/v1/goals",
            json={
                **scope,
                "description": f"Ship the {project} release: freeze the branch, run the "
                "migrations and announce it",
                "priority": 0.8,
                "deadline": 1_700_000_000.0,
            },
        )
    )
    ids["goal"] = goal["id"]
    subgoals = _ok(client.post(f"/v1/goals/{goal['id']}/decompose", json=scope))["items"]
    assert subgoals, goal
    _ok(client.post(f"/v1/goals/{subgoals[0]['id']}/progress", json={**scope, "progress": 1.0}))
    trip = _ok(client.post("/v1/goals", json={**scope, "description": f"Plan the {place} trip"}))
    ids["trip"] = trip["id"]
    observe(f"Heads up: the {place} trip got cancelled because of the strike.")
    for success, predicted, reason in (
        (True, 0.8, None),
        (True, 0.9, None),
        (False, 0.9, "recursive queries"),
        (False, 0.7, "recursive queries"),
        (False, 0.8, "recursive queries"),
    ):
        _ok(
            client.post(
                "/v1/self/competences",
                json={
                    **scope,
                    "capability": "sql",
                    "success": success,
                    "predicted": predicted,
                    **({"failure_reason": reason} if reason else {}),
                },
            )
        )
    _ok(client.post("/v1/self/competences", json={**scope, "capability": f"{project} deploys",
                                                 "success": True}))  # fmt: skip
    _ok(
        client.post(
            "/v1/world/transitions",
            json={
                **scope,
                "action": f"deploy {project} on a Friday",
                "outcome": "rollback",
                "context": {"freeze": True},
            },
        )
    )
    _ok(client.post("/v1/sleep", json=scope))
    return ids


@pytest.fixture(scope="module")
def local_site(tmp_path_factory: pytest.TempPathFactory, live_server: LiveServer) -> Iterator[Site]:
    """The service in local mode (no keys), alice's store seeded."""
    home = tmp_path_factory.mktemp("inspector-local")
    app = create_app(home=home, require_keys=False, mcp=False, maintenance=False)
    with live_server(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        ids = seed(client, "alice", ("Alice", "Lisbon", "Kestrel"))
        with Memory(home / "ucma.db") as operator:  # what ucma serve's scheduler does
            operator.run_gardener()
        yield Site(url, ids)


@pytest.fixture(scope="module")
def keyed_site(tmp_path_factory: pytest.TempPathFactory, live_server: LiveServer) -> Iterator[Site]:
    """The service with keys required: alice (with the canary words) and bob."""
    home = tmp_path_factory.mktemp("inspector-keys")
    with Memory(home / "ucma.db") as admin:
        _, alice = admin.create_key("alice")
        _, bob = admin.create_key("bob")
    app = create_app(home=home, require_keys=True, mcp=False, maintenance=False)
    with live_server(app) as url:
        ids: dict[str, str] = {}
        for name, token, words in (
            ("alice", alice, ("Zephyrine", "Quokkaville", "Marrowfield")),
            ("bob", bob, ("Bob", "Leeds", "Heron")),
        ):
            headers = {"authorization": f"Bearer {token}"}
            with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
                ids.update({f"{name}.{k}": v for k, v in seed(client, None, words).items()})
        yield Site(url, ids, {"alice": alice, "bob": bob})


def settle(page: Page) -> None:
    """Wait until the view finished loading (no spinner) and showed no error."""
    expect(page.locator("main > section[data-ready=true]")).to_have_count(1)
    expect(page.locator("main h2").first).to_be_visible()
    expect(page.locator("main .spinner")).to_have_count(0)
    expect(page.locator("main [role=alert]")).to_have_count(0)


def screenshot(page: Page, name: str) -> Path:
    """Save the page at 1400x900 as an artifact."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def choose_scope(page: Page, site: Site, user: str = "alice") -> None:
    """Open the page and pick the user's scope from the scopes view."""
    page.goto(f"{site.url}/#/scopes")
    page.get_by_role("link", name=user, exact=True).click()
    expect(page.locator("main section[data-view=memories]")).to_be_visible()
    settle(page)


def enter_key(page: Page, token: str) -> None:
    dialog = page.locator("#key-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Key").fill(token)
    dialog.get_by_role("button", name="Use key").click()
    expect(dialog).to_be_hidden()
