"""The familiar calls (add, search, get_all, update, delete_all, history) on a real SQLite
file with the real embedder: chat messages in order with their roles, run ids, metadata
filters that never miss, pages with a total, versioned updates, confirmed bulk deletes."""

from __future__ import annotations

import pytest

from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError, SecretRefusedError, ValidationError
from ucma.types import MemoryPage

pytestmark = pytest.mark.anyio

SECRET = "sk-proj-Qz7Lm2Vx9Kp4Rt8Wn3Ys6Bd1Hf5Jc0Ga"
CHAT = [
    {"role": "user", "content": "I am planning a trip to Lisbon in October."},
    {"role": "assistant", "content": "Lisbon in October is mild; pack a light jacket."},
    {"role": "user", "content": "I am vegetarian, so I need restaurant ideas without meat."},
]


async def test_add_observes_each_message_with_its_role_in_order_in_one_session(
    memory: AsyncMemory,
) -> None:
    observations = await memory.add(CHAT, run_id="trip-1", metadata={"topic": "travel"})
    assert [o.stored for o in observations] == [True, True, True]
    records = [await memory.get(o.id) for o in observations]
    assert [r.source for r in records] == ["user", "assistant", "user"]  # type: ignore[attr-defined]
    assert [r.content for r in records] == [m["content"] for m in CHAT]
    assert {r.session_id for r in records} == {"trip-1"}  # type: ignore[attr-defined]
    assert all(r.metadata == {"topic": "travel", "run_id": "trip-1"} for r in records)
    times = [r.timestamp for r in records]  # type: ignore[attr-defined]
    assert times == sorted(times)
    # A plain text works too, filed under the scope's current session.
    [one] = await memory.add("Alice's staging database moved to port 5433.")
    assert (await memory.get(one.id)).session_id == memory.session_id()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("messages", "words"),
    [
        ([], "must not be empty"),
        ([{"role": "user"}], "content must be a string"),
        ([{"role": "", "content": "hi there"}], "role must be a non-empty string"),
        ([{"role": "user", "content": "x", "tool_calls": []}], "unknown keys"),
        ([42], "must be a text or a mapping"),
        (b"bytes", "must be a text or a list"),
        ([{"role": "user", "content": ""}], "must not be empty"),
    ],
)
async def test_add_rejects_malformed_messages_and_writes_nothing(
    memory: AsyncMemory, messages: object, words: str
) -> None:
    with pytest.raises(ValidationError, match=words):
        await memory.add(messages)  # type: ignore[arg-type]
    assert (await memory.get_all()).total == 0


async def test_add_is_all_or_nothing_and_guarded(memory: AsyncMemory) -> None:
    batch = [
        {"role": "user", "content": "My favourite editor theme is solarized dark."},
        {"role": "user", "content": f"Here is the production key {SECRET}"},
    ]
    with pytest.raises(SecretRefusedError):
        await memory.add(batch)
    assert (await memory.get_all()).total == 0


async def test_search_with_filters_never_misses_a_matching_memory(memory: AsyncMemory) -> None:
    # Many memories that match the query better than the one that matches the filter.
    await memory.add(
        [f"The deploy pipeline for service {n} failed on a flaky test." for n in range(30)]
    )
    [tagged] = await memory.add(
        "Weekly planning notes: also, the deploy pipeline needs a retry.",
        metadata={"team": "platform", "priority": 2},
    )
    hits = await memory.search("deploy pipeline failed", filters={"team": "platform"})
    assert [h.id for h in hits] == [tagged.id]
    assert hits[0].source == "filtered" and 0 < hits[0].score <= 1
    assert await memory.search("deploy pipeline", filters={"team": "platform", "priority": 3}) == []
    assert await memory.search("deploy pipeline", filters={"priority": True}) == []
    # Without filters it is remember, the hybrid search.
    plain = await memory.search("deploy pipeline failed", limit=5)
    assert len(plain) == 5
    assert [h.id for h in plain] == [
        h.id for h in await memory.remember("deploy pipeline failed", limit=5)
    ]


async def test_search_by_run_id_and_bad_filters(memory: AsyncMemory) -> None:
    await memory.add(CHAT, run_id="trip-1")
    await memory.add("I am planning a trip to Oslo in March.", run_id="trip-2")
    hits = await memory.search("trip planning", run_id="trip-2")
    assert [h.content for h in hits] == ["I am planning a trip to Oslo in March."]
    with pytest.raises(ValidationError, match="filters must be a mapping"):
        await memory.search("trip", filters=["trip-1"])  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="equality on metadata"):
        await memory.search("trip", filters={"tags": ["a"]})
    with pytest.raises(ValidationError, match="differs from run_id"):
        await memory.search("trip", filters={"run_id": "a"}, run_id="b")


async def test_get_all_pages_with_a_total_and_never_stops_silently(memory: AsyncMemory) -> None:
    await memory.add([f"Inventory note {n}: shelf {n} holds part P-{n:03d}." for n in range(130)])
    first = await memory.get_all(limit=100)
    assert isinstance(first, MemoryPage)
    assert (len(first), first.total, first.next_offset, first.has_more) == (100, 130, 100, True)
    second = await memory.get_all(limit=100, offset=first.next_offset)
    assert (len(second), second.next_offset, second.has_more) == (30, None, False)
    assert len({r.id for r in [*first, *second]}) == 130
    filtered = await memory.get_all(filters={"missing": 1})
    assert (filtered.total, filtered.items, filtered.next_offset) == (0, [], None)
    with pytest.raises(ValidationError):
        await memory.get_all(limit=1001)


async def test_update_is_versioned_reembedded_and_in_history(memory: AsyncMemory) -> None:
    [obs] = await memory.add("Bob's favourite drink is green tea.")
    updated = await memory.update(obs.id, "Bob's favourite drink is black coffee.")
    assert updated.content == "Bob's favourite drink is black coffee."
    again = await memory.update(obs.id, "Bob's favourite drink is espresso.")
    assert (await memory.get(obs.id)).content == again.content
    changes = [h for h in await memory.history(obs.id) if h.event == "updated"]
    assert [(h.details["previous"], h.details["new"], h.details["version"]) for h in changes] == [
        ("Bob's favourite drink is green tea.", "Bob's favourite drink is black coffee.", 2),
        ("Bob's favourite drink is black coffee.", "Bob's favourite drink is espresso.", 3),
    ]
    # Re-embedded: a search in the new words finds it first.
    await memory.add("The office plant needs water on Mondays.")
    hits = await memory.search("espresso", limit=1)
    assert hits[0].id == obs.id
    assert [e.payload["version"] for e in await memory.events(types=["memory.updated"])] == [2, 3]
    # Unchanged text changes nothing.
    await memory.update(obs.id, "Bob's favourite drink is espresso.")
    assert len([h for h in await memory.history(obs.id) if h.event == "updated"]) == 2


async def test_update_refuses_bad_input_and_leaves_the_memory_as_it_was(
    memory: AsyncMemory,
) -> None:
    [obs] = await memory.add("The build server is called hopper.")
    with pytest.raises(SecretRefusedError):
        await memory.update(obs.id, f"The build server key is {SECRET}")
    with pytest.raises(ValidationError):
        await memory.update(obs.id, "   ")
    with pytest.raises(NotFoundError):
        await memory.update("ep_missing", "anything at all")
    with pytest.raises(NotFoundError):
        await memory.update(obs.id, "Another text", user_id="bob")
    fact = await memory.assert_fact("Alice", "prefers", "dark mode")
    with pytest.raises(ValidationError, match="assert_fact"):
        await memory.update(fact.id, "Alice prefers light mode")
    assert (await memory.get(obs.id)).content == "The build server is called hopper."
    assert [h for h in await memory.history(obs.id) if h.event == "updated"] == []


async def test_delete_all_needs_confirmation_and_deletes_a_scope_or_a_run(
    memory: AsyncMemory,
) -> None:
    await memory.add(CHAT, run_id="trip-1")
    await memory.add("Bob keeps the spare keys.", user_id="bob")
    [kept] = await memory.add("The team standup is at 9:30.")
    with pytest.raises(ValidationError, match="confirm=True"):
        await memory.delete_all()
    assert await memory.delete_all(run_id="trip-1", confirm=True) == 3
    # The run's episodes are gone; a fact read from them carries no run id and stays.
    assert [r.id for r in await memory.get_all(kind="episodic")] == [kept.id]
    left = (await memory.get_all()).total
    assert await memory.delete_all(confirm=True) == left
    assert (await memory.get_all(include_archived=True)).total == 0
    assert (await memory.get_all(user_id="bob")).total >= 1  # other scopes untouched
    deleted = await memory.events(types=["memory.deleted"])
    assert len(deleted) == 3 + left


def test_the_sync_facade_has_the_same_calls(sync_memory: object) -> None:
    from ucma.sync import Memory

    assert isinstance(sync_memory, Memory)
    [obs] = sync_memory.add([{"role": "user", "content": "Carol's birthday is on 4 June."}])
    sync_memory.update(obs.id, "Carol's birthday is on 5 June.")
    assert sync_memory.get_all(kind="episodic").total == 1
    assert sync_memory.search("birthday", filters={"missing": "x"}) == []
    assert sync_memory.history(obs.id)[-1].details["new"] == "Carol's birthday is on 5 June."
    total = sync_memory.get_all().total
    assert sync_memory.delete_all(confirm=True) == total
