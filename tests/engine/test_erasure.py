"""Forgetting a person or a scope on a real SQLite file: afterwards no identifier of that
person is anywhere in the database file, its write-ahead log, its shared-memory index or
a fresh export, while everyone else's memories are intact and still recalled."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ucma.config import PrivacyConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError, ValidationError
from ucma.privacy.tokens import TOKEN_PATTERN

pytestmark = pytest.mark.anyio

NAME = "Greta Lindqvist"
EMAIL = "Greta.Lindqvist@example.org"
PHONE = "+46 70 123 45 67"
CUSTOMER = "CUST-99812"
IDENTIFIERS = [NAME, "Greta", EMAIL, PHONE, CUSTOMER]
#: Every spelling of them the test writes: none may survive the erasure.
STORED_FORMS = [
    NAME,
    NAME.lower(),
    NAME.upper(),
    "Greta",
    "greta",
    "Lindqvist",
    EMAIL,
    EMAIL.lower(),
    PHONE,
    "+46701234567",
    "070-123 45 67",
    CUSTOMER,
    CUSTOMER.lower(),
]
OTHER_EMAIL = "dana.okafor@example.com"


def files(db: Path) -> dict[str, bytes]:
    return {
        path.name: path.read_bytes()
        for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm"))
        if path.exists()
    }


def leftovers(blobs: dict[str, bytes], forms: list[str]) -> list[tuple[str, str]]:
    found = []
    for name, blob in blobs.items():
        low = blob.lower()
        for form in forms:
            for encoded in (form.encode(), form.encode("utf-16-le")):
                if encoded.lower() in low:
                    found.append((name, form))
    return found


@pytest.fixture
async def mem(tmp_path: Path, local_embedder: LocalEmbedder) -> AsyncIterator[AsyncMemory]:
    # Phone numbers stored as written (allowed), emails tokenised: both paths are tested.
    config = UCMAConfig(privacy=PrivacyConfig(kinds={"phone": "allow"}))
    async with AsyncMemory(
        tmp_path / "m.db", user_id="alice", embedder=local_embedder, config=config
    ) as memory:
        yield memory


async def write_people(mem: AsyncMemory) -> dict[str, str]:
    ids = {}
    ids["moved"] = (await mem.observe(f"{NAME} moved to Uppsala last spring.")).id
    await mem.observe(f"Greta's email is {EMAIL}, write to her about the invoice.")
    await mem.observe(f"Call greta on {PHONE} after lunch; her mobile 070-123 45 67 is off.")
    await mem.observe(f"GRETA LINDQVIST is customer {CUSTOMER} and pays by invoice.")
    await mem.assert_fact(NAME, "works_at", "Copperleaf")
    await mem.assert_fact(NAME, "lives_in", "Uppsala")
    await mem.assert_fact(NAME, "lives_in", "Stockholm")
    await mem.assert_fact(f"customer {CUSTOMER}", "email", EMAIL)
    lesson = await mem.learn(f"{NAME} prefers written summaries over calls")
    await mem.add_procedure(
        "invoice follow-up", f"Email {EMAIL} a reminder, then call +46701234567."
    )
    trace = await mem.decide([lesson.id], [0.9], summary=f"Sent {NAME} the summary by email")
    await mem.outcome(trace.id, 0.8, "user_accepted", feedback="Greta liked it")
    # Other people, who must stay.
    ids["bob"] = (await mem.observe("Bob Marley likes reggae and lives in Kingston.")).id
    ids["dana"] = (await mem.observe("Dana is allergic to peanuts and avoids satay.")).id
    ids["dana_mail"] = (await mem.observe(f"Dana's email is {OTHER_EMAIL}.")).id
    await mem.assert_fact("Dana", "works_at", "Harbour Labs")
    await mem.remember("Where did Greta Lindqvist move?")
    await mem.recall("What is Greta's email?")
    return ids


async def test_forgetting_a_person_leaves_no_identifier_in_the_files_or_an_export(
    mem: AsyncMemory, tmp_path: Path
) -> None:
    ids = await write_people(mem)
    db = tmp_path / "m.db"
    [greta_token] = {
        m.group() for r in await mem.list(limit=1000) for m in TOKEN_PATTERN.finditer(r.content)
    } - {TOKEN_PATTERN.search((await mem.get(ids["dana_mail"])).content).group()}
    assert await mem.reveal(greta_token) == EMAIL
    others = {
        r.id: r.content
        for r in await mem.list(limit=1000)
        if not any(w in r.content.lower() for w in ("greta", "cust-", greta_token, "invoice"))
    }
    dana_facts = [f.id for f in await mem.facts_about("Dana")]
    await mem.stats()  # the forms are really in the files before
    assert len(leftovers(files(db), [NAME, CUSTOMER, "+46701234567", "070-123 45 67"])) >= 4

    report = await mem.forget_person(IDENTIFIERS)

    assert report.target == "person"
    assert report.checkpointed and report.vacuumed
    assert report.counts["episodic"] == 4
    assert report.counts["semantic"] >= 4
    assert report.counts["learning"] == 1 and report.counts["procedural"] == 1
    assert report.counts["vault_entries"] == 1
    assert report.counts["decisions"] == 1
    with pytest.raises(NotFoundError):
        await mem.reveal(greta_token)
    export = tmp_path / "after.jsonl"
    await mem.export_jsonl(export)
    blobs = files(db) | {"export": export.read_bytes()}
    assert leftovers(blobs, [*STORED_FORMS, greta_token]) == []

    # Everyone else is intact, and still found.
    assert {"bob", "dana", "dana_mail"} <= {k for k, v in ids.items() if v in others}
    assert {r.id: r.content for r in await mem.list(limit=1000)} == others
    hits = await mem.remember("What is Dana allergic to?")
    assert hits[0].id == ids["dana"]
    token = TOKEN_PATTERN.search((await mem.get(ids["dana_mail"])).content).group()
    assert await mem.reveal(token) == OTHER_EMAIL
    assert [f.id for f in await mem.facts_about("Dana")] == dana_facts
    assert await mem.facts_about(NAME) == []


async def test_the_erasure_is_atomic_and_the_event_log_stays_gapless(
    mem: AsyncMemory, tmp_path: Path
) -> None:
    await write_people(mem)
    await mem.forget_person([NAME, "Greta", EMAIL])
    conn = sqlite3.connect(tmp_path / "m.db")
    try:
        seqs = [r[0] for r in conn.execute("SELECT seq FROM events ORDER BY seq")]
        assert seqs == list(range(1, len(seqs) + 1))
        [(target, counts)] = conn.execute("SELECT target, counts FROM erasures").fetchall()
        assert target == "person" and json.loads(counts)["episodic"] >= 3
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("UPDATE events SET payload = '{}'")
        with pytest.raises(sqlite3.DatabaseError, match="immutable"):
            conn.execute("DELETE FROM events")
    finally:
        conn.close()


async def test_forgetting_a_scope_erases_all_of_it_and_no_other(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    db = tmp_path / "m.db"
    async with AsyncMemory(db, user_id="greta.scope", embedder=local_embedder) as mem:
        notes = await mem.observe(f"{NAME} keeps her notes here; mail {EMAIL}.")
        await mem.assert_fact(NAME, "lives_in", "Uppsala")
        trace = await mem.decide([notes.id], summary=f"Answered {NAME} by mail")
        await mem.outcome(trace.id, 0.5, "user_accepted")
        kept = await mem.observe("Bob Marley likes reggae.", user_id="bob")
        await mem.remember("notes", user_id="greta.scope")

        report = await mem.forget_scope(user_id="greta.scope")

        assert report.target == "scope" and report.checkpointed and report.vacuumed
        assert report.counts["episodic"] >= 1 and report.counts["events"] >= 3
        assert await mem.list(user_id="greta.scope") == []
        assert await mem.events(user_id="greta.scope") == []
        assert (await mem.get(kept.id, user_id="bob")).content.startswith("Bob")
        assert leftovers(files(db), [NAME, EMAIL, "greta.scope", "Lindqvist"]) == []
        # The scope can be used again, and its search sees only the new memory.
        again = await mem.observe("A fresh start in Lund.", user_id="greta.scope")
        hits = await mem.remember("fresh start", user_id="greta.scope")
        assert [h.id for h in hits] == [again.id]


async def test_identifiers_that_name_nobody_are_refused(mem: AsyncMemory) -> None:
    for bad in ([], [""], ["a"], [" - "], [3], ["x" * 300], {"a": 1}, None):
        with pytest.raises(ValidationError):
            await mem.forget_person(bad)  # type: ignore[arg-type]
