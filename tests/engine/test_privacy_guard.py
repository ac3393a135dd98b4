"""The content guard through the public API on a real SQLite file: secrets refused and
nowhere in the file, PII tokenised in get/recall/export and revealed to its owner only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ucma.config import PrivacyConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError, NotFoundError, SecretRefusedError
from ucma.privacy.tokens import TOKEN_PATTERN

pytestmark = pytest.mark.anyio

SECRET = "sk-proj-Qz7Lm2Vx9Kp4Rt8Wn3Ys6Bd1Hf5Jc0Ga"
EMAIL = "greta.lindqvist@example.org"
PHONE = "+46 70 123 45 67"


def file_bytes(db: Path) -> bytes:
    """The database file and its write-ahead log, as written so far."""
    data = b""
    for path in (db, db.with_name(db.name + "-wal")):
        if path.exists():
            data += path.read_bytes()
    return data


@pytest.fixture
async def mem(tmp_path: Path, local_embedder: LocalEmbedder) -> AsyncIterator[AsyncMemory]:
    async with AsyncMemory(tmp_path / "m.db", user_id="alice", embedder=local_embedder) as memory:
        yield memory


async def test_a_secret_is_refused_and_nothing_of_it_is_in_the_file(
    mem: AsyncMemory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await mem.observe("Greta prefers tea in the morning")
    before = len(await mem.list())
    calls = [
        mem.observe(f"the deploy key is {SECRET}"),
        mem.assert_fact("deploy", "uses_key", SECRET),
        mem.learn(f"rotate {SECRET} monthly"),
        mem.add_procedure("deploy", f"export OPENAI_API_KEY={SECRET} then run make"),
    ]
    for call in calls:
        with pytest.raises(SecretRefusedError) as caught:
            await call
        assert caught.value.kinds == ("model_key",)
        assert SECRET not in str(caught.value)
    assert SECRET.encode() not in file_bytes(tmp_path / "m.db")
    assert SECRET not in caplog.text
    assert len(await mem.list()) == before


async def test_a_batch_with_one_secret_writes_nothing(mem: AsyncMemory, tmp_path: Path) -> None:
    items = [f"note {i}: Greta mailed {EMAIL} about the trip" for i in range(5)]
    items.append("and the database is postgres://admin:Wint3rIsComing@db.internal/prod")
    with pytest.raises(SecretRefusedError) as caught:
        await mem.observe_many(items)
    assert caught.value.kinds == ("connection_string",)
    assert caught.value.places == ("items[5].content",)
    assert await mem.list() == []
    data = file_bytes(tmp_path / "m.db")
    assert b"Wint3rIsComing" not in data
    assert EMAIL.encode() not in data


async def test_pii_is_tokenised_in_get_recall_and_export_and_found_by_the_original(
    mem: AsyncMemory, tmp_path: Path
) -> None:
    observed = await mem.observe(f"Greta's email is {EMAIL} and her phone is {PHONE}")
    stored = await mem.get(observed.id)
    assert EMAIL not in stored.content and PHONE not in stored.content
    tokens = TOKEN_PATTERN.findall(stored.content)
    assert [kind for kind, _ in tokens] == ["email", "phone"]
    # The same value in the same scope gets the same token.
    again = await mem.observe(f"Remind me to write to {EMAIL.upper()} on Friday")
    assert stored.content.split()[3] in (await mem.get(again.id)).content

    hits = await mem.remember(f"what is the phone number of {EMAIL}?")
    assert hits and hits[0].memory.id == observed.id
    assert all(EMAIL not in h.memory.content for h in hits)

    export = tmp_path / "export.jsonl"
    await mem.export_jsonl(export)
    text = export.read_text()
    assert EMAIL not in text and stored.content.split()[3] in text
    assert EMAIL.encode() not in file_bytes(tmp_path / "m.db")
    key_file = tmp_path / "m.db.vault-key"
    assert key_file.exists() and (key_file.stat().st_mode & 0o077) == 0


async def test_originals_are_revealed_for_the_owner_and_for_no_other_scope(
    mem: AsyncMemory,
) -> None:
    observed = await mem.observe(f"Greta's email is {EMAIL}")
    content = (await mem.get(observed.id)).content
    [token] = [m.group() for m in TOKEN_PATTERN.finditer(content)]
    assert await mem.reveal(token) == EMAIL
    assert await mem.detokenise(content) == f"Greta's email is {EMAIL}"
    for other in ({"user_id": "mallory"}, {"user_id": "alice", "agent_id": "other"}):
        with pytest.raises(NotFoundError) as theirs:
            await mem.reveal(token, **other)
        with pytest.raises(NotFoundError) as unknown:
            await mem.reveal("[email_0123abcd]", **other)
        assert str(theirs.value).replace(token, "T") == str(unknown.value).replace(
            "[email_0123abcd]", "T"
        )
        assert await mem.detokenise(content, **other) == content


async def test_facts_decisions_and_imports_are_guarded(mem: AsyncMemory, tmp_path: Path) -> None:
    fact = await mem.assert_fact("Greta", "email", EMAIL)
    assert EMAIL not in fact.object and TOKEN_PATTERN.fullmatch(fact.object)
    same = await mem.assert_fact("Greta", "email", EMAIL)
    assert same.id == fact.id
    trace = await mem.decide([fact.id], summary=f"wrote to {EMAIL}")
    assert EMAIL not in trace.summary

    # Exports made without a guard (an older version, or policy "allow") are guarded
    # on import: PII tokenised, a secret refuses its chunk.
    raw = UCMAConfig(privacy=PrivacyConfig(pii="allow", secrets="allow"))
    old_db, export = tmp_path / "old.db", tmp_path / "old.jsonl"
    async with AsyncMemory(old_db, user_id="alice", embedder=mem.embedder, config=raw) as old:
        await old.observe(f"Imported: Greta lives at 12 Elm Street, Springfield, mails {EMAIL}")
        await old.export_jsonl(export)
        assert EMAIL in export.read_text()
        await old.observe(f"Imported too: the token ghp_{'A1b2C3d4E5' * 4} deploys")
        await old.export_jsonl(tmp_path / "secret.jsonl")
    await mem.import_jsonl(export)
    imported = [r for r in await mem.list() if r.content.startswith("Imported")]
    assert imported and all(EMAIL not in r.content for r in imported)
    assert all("Elm Street" not in r.content for r in imported)
    with pytest.raises(SecretRefusedError):
        await mem.import_jsonl(tmp_path / "secret.jsonl")
    assert b"ghp_A1b2" not in file_bytes(tmp_path / "m.db")


async def test_a_wrong_vault_key_is_refused(tmp_path: Path, local_embedder: LocalEmbedder) -> None:
    from cryptography.fernet import Fernet

    db = tmp_path / "k.db"
    key = Fernet.generate_key().decode()
    config = UCMAConfig(privacy=PrivacyConfig(vault_key=key))
    async with AsyncMemory(db, user_id="a", embedder=local_embedder, config=config) as memory:
        await memory.observe(f"my email is {EMAIL}")
    assert not (tmp_path / "k.db.vault-key").exists()
    other = UCMAConfig(privacy=PrivacyConfig(vault_key=Fernet.generate_key().decode()))
    async with AsyncMemory(db, user_id="a", embedder=local_embedder, config=other) as memory:
        with pytest.raises(ConfigError):
            await memory.observe(f"again {EMAIL}")
