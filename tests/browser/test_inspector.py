"""The memory inspector in a real browser (headless Chromium through Playwright) against
the real service, in local mode: every view loads on a seeded store (and is captured at
1400x900), search and open a memory, correct a fact, resolve a conflict, archive and
undo, delete, the graph's typed links, goals (resume a suspended one), the self-model,
the stored sleep cycles. Every wait is one of Playwright's auto-waiting expectations."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from .conftest import Site, choose_scope, screenshot, settle

pytestmark = [pytest.mark.integration, pytest.mark.browser]

#: (hash, heading, screenshot name) of every view, in the order of the navigation.
VIEWS = [
    ("scopes", "Scopes", "scopes"),
    ("memories", "Memories", "memories"),
    ("memories?q=Where+does+Alice+live%3F", "Search", "memories-search"),
    ("memory/{color}", "Memory", "memory"),
    ("graph/{deploy}", "Graph around a memory", "graph-detail"),
    ("timeline", "Timeline of episodes and sessions", "timeline"),
    ("conflicts", "Conflicts", "conflicts"),
    ("decisions", "Decision traces", "decisions"),
    ("decisions/{decision}", "Decision", "decisions-detail"),
    ("strategies", "Strategies and procedures", "strategies"),
    ("opinions", "Opinions", "opinions"),
    ("goals", "Goals", "goals"),
    ("goals/{goal}", "Goal", "goals-detail"),
    ("goals/{trip}", "Goal", "goals-suspended"),
    ("self", "Self-model", "self"),
    ("upkeep", "Sleep and gardener", "upkeep"),
    ("events", "Live events", "events"),
    ("stats", "Stats", "stats"),
]


def test_every_view_loads_and_is_captured(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    for route, heading, name in VIEWS:
        page.goto(f"{local_site.url}/#/{route.format(**local_site.ids)}")
        expect(page.locator("main h2").first).to_have_text(heading)
        settle(page)
        if route.startswith("graph/"):
            expect(page.locator("main svg .node")).not_to_have_count(1)
        screenshot(page, name)
    # the navigation lists every view (the detail pages open from the others)
    expect(page.locator("#nav a")).to_have_count(13)


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
    settle(page)
    # Every cycle of the scope is stored, newest first: this one, the gardener's, the
    # seed's, and the one its new session started.
    runs = page.locator("main table", has=page.locator("th", has_text="what changed")).locator(
        "tbody tr"
    )
    expect(runs).to_have_count(4)
    expect(runs.nth(0)).to_contain_text("asked")
    expect(runs.nth(0)).to_contain_text("done")
    expect(runs.nth(1)).to_contain_text("gardener")
    expect(runs.nth(2)).to_contain_text("asked")
    expect(runs.nth(3)).to_contain_text("new session")
    expect(runs.nth(3)).to_contain_text("reinforce: memories ranked")


def test_the_graph_draws_typed_links_asking_once_per_node(page: Page, local_site: Site) -> None:
    choose_scope(page, local_site)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(f"{local_site.url}/#/graph/{local_site.ids['move']}")
    settle(page)
    # the session order (followed by) shows with its type; one request drew the node
    expect(page.locator("main svg line title", has_text="followed_by")).not_to_have_count(0)
    assert [u for u in asked if "/related" in u] == []
    assert len([u for u in asked if "/links" in u]) == 1, asked
    # expanding a neighbour asks once more, and the link the seed made (caused) shows
    page.goto(f"{local_site.url}/#/graph/{local_site.ids['deploy']}")
    settle(page)
    expect(page.locator("main svg line title", has_text="caused")).to_have_count(1)
    before = len([u for u in asked if "/links" in u])
    page.locator("main svg .node").nth(1).focus()
    page.keyboard.press(" ")  # Space expands the focused node
    expect(page.locator("main svg .node circle[fill='#2456a6']")).to_have_count(1)
    assert len([u for u in asked if "/links" in u]) == before + 1


def test_goals_show_what_blocks_them_and_a_suspended_goal_resumes(
    page: Page, local_site: Site
) -> None:
    choose_scope(page, local_site)
    page.goto(f"{local_site.url}/#/goals")
    settle(page)
    ship = page.locator("main tbody tr", has_text="Ship the Kestrel release").first
    expect(ship.locator("td")).to_contain_text(["0.80", "active", "33 %", "(late)"])
    subgoals = page.locator("main tbody tr", has_text="↳")
    expect(subgoals).not_to_have_count(0)
    expect(subgoals.first).to_contain_text("completed")
    trip = page.locator("main tbody tr", has_text="Plan the Lisbon trip")
    expect(trip.locator("td")).to_contain_text(["Plan the Lisbon trip", "suspended", "0 %"])
    expect(trip).to_contain_text("ended: memory says this ended")
    trip.get_by_role("link").click()
    settle(page)
    reasons = page.locator("main table", has=page.locator("th", has_text="detail"))
    expect(reasons).to_contain_text("got cancelled because of the strike")
    page.get_by_role("button", name="Resume…").click()
    dialog = page.locator("#confirm")
    expect(dialog).to_contain_text("Resume this goal?")
    dialog.get_by_role("button", name="Resume").click()
    expect(page.locator("#toasts")).to_contain_text("Goal resumed")
    settle(page)
    expect(page.locator("main .card").first).to_contain_text("active")
    expect(page.get_by_role("button", name="Resume…")).to_have_count(0)


def test_the_self_model_shows_accuracy_calibration_and_what_to_learn(
    page: Page, local_site: Site
) -> None:
    choose_scope(page, local_site)
    page.goto(f"{local_site.url}/#/self")
    settle(page)
    sql = page.locator("main tbody tr", has_text="sql").first
    # Beta(1, 1) after 2 of 5 is 3 / 7; predictions averaged 0.82 against 0.40
    expect(sql.locator("td")).to_contain_text(
        ["weak domain", "2 / 5", "0.43", "overconfident", "recursive queries ×3"]
    )
    expect(page.locator("main .card", has_text="What to learn next")).to_contain_text(
        "recursive queries"
    )
    expect(page.locator("main .card", has_text="World model")).to_contain_text("rollback")
