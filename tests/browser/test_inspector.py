"""The memory inspector in a real browser (headless Chromium through Playwright) against
the real service, in local mode: every view loads on a seeded store (and is captured at
1400x900), search and open a memory, correct a fact, resolve a conflict, archive and
undo, delete. Every wait is one of Playwright's auto-waiting expectations."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import Site, choose_scope, screenshot, settle

pytestmark = [pytest.mark.integration, pytest.mark.browser]

#: (hash, heading) of every view, in the order of the navigation.
VIEWS = [
    ("scopes", "Scopes"),
    ("memories", "Memories"),
    ("memories?q=Where+does+Alice+live%3F", "Search"),
    ("memory/{color}", "Memory"),
    ("graph/{deploy}", "Graph around a memory"),
    ("timeline", "Timeline of episodes and sessions"),
    ("conflicts", "Conflicts"),
    ("decisions", "Decision traces"),
    ("decisions/{decision}", "Decision"),
    ("strategies", "Strategies and procedures"),
    ("opinions", "Opinions"),
    ("upkeep", "Sleep and gardener"),
    ("events", "Live events"),
    ("stats", "Stats"),
]


def test_every_view_loads_and_is_captured(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    for route, heading in VIEWS:
        page.goto(f"{local_site.url}/#/{route.format(**local_site.ids)}")
        expect(page.locator("main h2").first).to_have_text(heading)
        settle(page)
        if route.startswith("graph/"):
            expect(page.locator("main svg .node")).not_to_have_count(1)
        name = route.split("?")[0].split("/")[0] + ("-search" if "?q=" in route else "")
        name += "-detail" if "/" in route and not route.startswith("memory/") else ""
        screenshot(page, name)
    # the navigation lists every view (the detail pages open from the others)
    expect(page.locator("#nav a")).to_have_count(11)


def test_long_content_does_not_break_the_layout(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    page.goto(f"{local_site.url}/#/memory/{local_site.ids['long']}")
    settle(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1400, width
    page.goto(f"{local_site.url}/#/memories")
    settle(page)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1400


def test_search_and_open_a_memory(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    page.keyboard.press("/")
    search = page.get_by_role("searchbox")
    expect(search).to_be_focused()
    search.fill("When is the Kestrel deploy frozen?")
    search.press("Enter")
    settle(page)
    expect(page.locator("main h2")).to_have_text("Search")
    expect(page.locator("main .card").first).to_contain_text("cascade path")
    first = page.locator("main tbody tr").first
    expect(first).to_contain_text("frozen on Fridays")
    expect(first.locator(".channels .badge").first).to_be_visible()
    first.get_by_role("link").click()
    settle(page)
    expect(page.locator("main h2").first).to_have_text("Memory")
    expect(page.locator("[data-field=content]")).to_have_text(
        "The Kestrel deploy is frozen on Fridays."
    )
    # its salience moved with the decision's outcome, and the chart and reasons show it
    salience = page.locator("section[aria-labelledby=h-salience]")
    expect(salience.locator("tbody tr")).to_have_count(1)
    expect(salience).to_contain_text("decisions with outcomes")
    expect(page.locator("section[aria-labelledby=h-retention] svg")).to_be_visible()


def test_keyboard_moves_between_views_and_rows(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    page.keyboard.press("Alt+5")
    expect(page.locator("main h2").first).to_have_text("Conflicts")
    page.keyboard.press("Alt+2")
    settle(page)
    page.locator("main").focus()
    page.keyboard.press("j")
    expect(page.locator("main tr.row").first).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main h2").first).to_have_text("Memory")


def test_correct_a_fact_and_the_old_value_moves_to_history(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    page.goto(f"{local_site.url}/#/memory/{local_site.ids['color']}")
    settle(page)
    expect(page.locator("[data-field=content]")).to_contain_text("teal")
    page.get_by_role("button", name="Correct", exact=True).click()
    page.get_by_label("Correct value").fill("amber")
    page.locator("main form").get_by_role("button", name="Correct").click()
    dialog = page.locator("#confirm")
    expect(dialog).to_contain_text("“teal” → “amber”")
    dialog.get_by_role("button", name="Correct").click()
    expect(page.locator("[data-field=content]")).to_contain_text("amber")
    settle(page)
    history = page.locator("section[aria-labelledby=h-facts]")
    expect(history.locator("tr", has_text="teal")).to_contain_text("superseded")
    expect(history.locator("tr", has_text="amber")).not_to_contain_text("superseded")
    screenshot(page, "memory-corrected")


def test_resolve_a_conflict_from_the_queue(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    page.goto(f"{local_site.url}/#/conflicts")
    settle(page)
    card = page.locator(f"article[data-conflict={local_site.ids['conflict']}]")
    expect(card).to_contain_text("pending")
    keep = card.get_by_role("button").first
    label = keep.inner_text()
    chosen = label.removeprefix("Keep “").removesuffix("”")
    keep.click()
    dialog = page.locator("#confirm")
    expect(dialog).to_contain_text(f"= “{chosen}”")
    dialog.get_by_role("button", name=label, exact=True).click()
    expect(card).to_have_count(0)
    page.goto(f"{local_site.url}/#/conflicts?status=user_resolved")
    settle(page)
    resolved = page.locator(f"article[data-conflict={local_site.ids['conflict']}]")
    expect(resolved).to_contain_text(f"chosen “{chosen}”")


def test_archive_and_undo(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    page.goto(f"{local_site.url}/#/memory/{local_site.ids['theme']}")
    settle(page)
    page.get_by_role("button", name="Archive").click()
    page.locator("#confirm").get_by_role("button", name="Archive").click()
    expect(page.locator("main .card").first).to_contain_text("archived")
    page.locator("#toasts").get_by_role("button", name="Undo").click()
    expect(page.get_by_role("button", name="Archive")).to_be_visible()
    history = page.locator("section[aria-labelledby=h-versions]")
    expect(history).to_contain_text("restored")


def test_delete_a_memory_and_it_is_gone_from_search(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    query = "What is the parking garage code for the Kestrel office?"
    page.goto(f"{local_site.url}/#/memories?q={query}")
    settle(page)
    hit = page.locator("main tbody a", has_text="parking garage code")
    expect(hit).to_have_count(1)
    hit.click()
    settle(page)
    page.get_by_role("button", name="Delete").click()
    dialog = page.locator("#confirm")
    expect(dialog).to_contain_text("cannot be undone")
    dialog.get_by_role("button", name="Cancel").click()
    expect(page.locator("[data-field=content]")).to_contain_text("4471")
    page.get_by_role("button", name="Delete").click()
    dialog.get_by_role("button", name="Delete").click()
    expect(page.locator("main h2").first).to_have_text("Memories")
    page.goto(f"{local_site.url}/#/memories?q={query}")
    settle(page)
    expect(page.locator("main h2")).to_have_text("Search")
    expect(page.locator("main .card").first).to_contain_text("cascade path")
    expect(page.locator("main")).not_to_contain_text("4471")
    expect(page.locator("main")).not_to_contain_text("parking garage")


def test_gardener_schedule_and_a_sleep_cycle_from_the_page(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    page.goto(f"{local_site.url}/#/upkeep")
    settle(page)
    decay = page.locator("main tr", has_text="decay")
    expect(decay).to_contain_text("scopes 1")
    expect(decay).not_to_contain_text("never")
    page.get_by_role("button", name="Preview forgetting").click()
    expect(page.locator("main .card", has_text="Forgetting preview")).to_contain_text("Examined")
    page.get_by_role("button", name="Run sleep cycle…").click()
    dialog = page.locator("#confirm")
    expect(dialog).to_contain_text("Run a sleep cycle now?")
    dialog.get_by_role("button", name="Run sleep").click()
    expect(page.locator("#toasts")).to_contain_text("Sleep cycle done")
    expect(page.locator("main h3", has_text="Cycles run from this page")).to_be_visible()
    expect(page.locator("main tr", has_text="compress, abstract")).to_have_count(1)
