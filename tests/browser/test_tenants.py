"""The inspector with API keys required, two tenants on one database: the page asks for
a key, refuses a wrong one, and with bob's key no view (nor a detail page opened with
alice's ids) shows anything of alice's; with alice's key her data shows, so the check can
fail."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from .conftest import CANARIES, Site, enter_key, screenshot, settle

pytestmark = [pytest.mark.integration, pytest.mark.browser]

#: Every view, detail pages with ids filled in per tenant ("{x}" -> that tenant's x).
ROUTES = [
    "scopes",
    "memories",
    "memories?q=Where does the user live and which project is frozen?",
    "memories?kind=semantic&archived=1",
    "memory/{move}",
    "graph/{deploy}",
    "graph",
    "timeline",
    "conflicts",
    "conflicts?status=",
    "decisions",
    "decisions/{decision}",
    "strategies",
    "strategies?task=Deploy the project safely",
    "opinions",
    "opinions?replaced=1",
    "goals",
    "goals/{goal}",
    "goals/{trip}",
    "self",
    "upkeep",
    "events",
    "stats",
]


def _leaks(page: Page) -> list[str]:
    html = page.content()
    return [word for word in CANARIES if word in html]


def test_a_key_is_asked_for_and_a_wrong_one_refused(page: Page, keyed_site: Site) -> None:
    page.goto(f"{keyed_site.url}/#/memories")
    dialog = page.locator("#key-dialog")
    expect(dialog).to_be_visible()
    dialog.get_by_label("Key").fill("ucma_not_a_real_key")
    dialog.get_by_role("button", name="Use key").click()
    expect(dialog.locator("#key-error")).to_contain_text("invalid or revoked API key")
    assert _leaks(page) == []
    enter_key_again = dialog.get_by_label("Key")
    enter_key_again.fill(keyed_site.tokens["bob"])
    dialog.get_by_role("button", name="Use key").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#auth-state")).to_contain_text("user bob")
    settle(page)
    expect(page.locator("main tbody")).to_contain_text("Heron")
    screenshot(page, "keyed-memories")


def test_no_view_shows_another_tenants_data(page: Page, keyed_site: Site) -> None:
    page.goto(f"{keyed_site.url}/#/scopes")
    enter_key(page, keyed_site.tokens["bob"])
    settle(page)
    expect(page.locator("main tbody tr")).to_have_count(1)
    expect(page.locator("main tbody")).to_contain_text("bob")
    for tenant_ids in ("bob", "alice"):
        ids = {k.split(".", 1)[1]: v for k, v in keyed_site.ids.items() if k.startswith(tenant_ids)}
        for route in ROUTES:
            page.goto(f"{keyed_site.url}/#/{route.format(**ids)}")
            expect(page.locator("main > section[data-ready=true]")).to_have_count(1)
            expect(page.locator("main .spinner")).to_have_count(0)
            assert _leaks(page) == [], (tenant_ids, route)
            if tenant_ids == "alice" and "{" in route:
                # alice's ids under bob's key: not found, like ids that exist nowhere
                expect(page.locator("main [role=alert]").first).to_contain_text(
                    re.compile(r"no \w+ with id .* in this scope|not found")
                )

    # the same views with alice's key show her data: the check above can fail
    page.locator("#key-button").click()
    enter_key(page, keyed_site.tokens["alice"])
    page.goto(f"{keyed_site.url}/#/memories")
    settle(page)
    expect(page.locator("main tbody")).to_contain_text("Zephyrine")
    assert _leaks(page) != []
