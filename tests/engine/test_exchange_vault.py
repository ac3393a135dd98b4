"""Vault entries in an export (``ucma.exchange_vault``): sealed with a transfer key, entered
into the importing scope under its store's own key, tokens renamed where the scope already
uses them, never written in clear, refused without the key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError, SecretRefusedError, ValidationError

pytestmark = pytest.mark.anyio

KEY = Fernet.generate_key().decode()
EMAIL = "ana.ribeiro@example.org"
TOKEN = re.compile(r"\[email_[0-9a-f]+\]")


async def exported(tmp_path: Path, embedder: LocalEmbedder) -> tuple[Path, str]:
    """An export of a scope holding one tokenised email; returns it and the token."""
    async with AsyncMemory(tmp_path / "a.db", user_id="maya", embedder=embedder) as source:
        observation = await source.observe(f"Ana's work email is {EMAIL}, she reads it daily.")
        token = TOKEN.findall((await source.get(observation.id)).content)[0]
        await source.export_jsonl(tmp_path / "a.jsonl", transfer_key=KEY)
    return tmp_path / "a.jsonl", token


async def test_a_value_the_scope_already_holds_keeps_the_scopes_token(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    path, theirs = await exported(tmp_path, local_embedder)
    async with AsyncMemory(tmp_path / "b.db", user_id="maya", embedder=local_embedder) as copy:
        mine = await copy.observe(f"Write to {EMAIL} about the dinner.")
        [ours] = TOKEN.findall((await copy.get(mine.id)).content)
        assert ours != theirs  # another store, another vault key, another token
        report = await copy.import_lines(path.read_bytes().splitlines(), transfer_key=KEY)
        assert report.vault_entries == 1 and report.imported >= 1
        [imported] = [r for r in await copy.list(kind="episodic") if "daily" in r.content]
        assert TOKEN.findall(imported.content) == [ours]  # renamed to the scope's token
        assert await copy.reveal(ours) == EMAIL
        with pytest.raises(NotFoundError):
            await copy.reveal(theirs)  # no second entry for one value
        hits = await copy.remember(f"What does Ana read at {EMAIL}?", limit=3)
        assert imported.id in [h.id for h in hits]


async def test_a_token_taken_by_another_value_gets_a_new_one(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    path, theirs = await exported(tmp_path, local_embedder)
    async with AsyncMemory(tmp_path / "b.db", user_id="maya", embedder=local_embedder) as copy:
        other = await copy.observe("Rui's email is rui.costa@example.net for the invoices.")
        [taken] = TOKEN.findall((await copy.get(other.id)).content)
        # The export names its value with the token this scope uses for Rui's address.
        (tmp_path / "clash.jsonl").write_text(
            path.read_text(encoding="utf-8").replace(theirs, taken), encoding="utf-8"
        )
        await copy.import_jsonl(tmp_path / "clash.jsonl", transfer_key=KEY)
        [imported] = [r for r in await copy.list(kind="episodic") if "daily" in r.content]
        [new] = TOKEN.findall(imported.content)
        assert new not in (taken, theirs)
        assert await copy.reveal(new) == EMAIL
        assert await copy.reveal(taken) == "rui.costa@example.net"


async def test_vault_lines_are_sealed_and_read_only_before_the_memories(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    path, _ = await exported(tmp_path, local_embedder)
    lines = path.read_text(encoding="utf-8").splitlines()
    vault = json.loads(lines[1])
    assert vault["type"] == "vault" and EMAIL not in lines[1]
    assert Fernet(KEY.encode()).decrypt(vault["sealed"].encode()).decode() == EMAIL
    moved = "\n".join([lines[0], *lines[2:], lines[1]]) + "\n"
    async with AsyncMemory(tmp_path / "b.db", user_id="maya", embedder=local_embedder) as copy:
        with pytest.raises(ValidationError, match="right after the header"):
            await copy.import_lines(moved.splitlines(), transfer_key=KEY)
        with pytest.raises(ValidationError, match="Fernet key"):
            await copy.import_lines(lines, transfer_key="not a key")
        with pytest.raises(ValidationError, match="Fernet key"):
            await copy.export_jsonl(tmp_path / "b.jsonl", transfer_key="not a key")
        assert not (tmp_path / "b.jsonl").exists()
        # A store that never tokenised anything exports no vault lines, key or not.
        await copy.export_jsonl(tmp_path / "b.jsonl", transfer_key=KEY)
        assert b'"vault"' not in (tmp_path / "b.jsonl").read_bytes()


async def test_vault_lines_pass_the_content_guard_and_are_checked(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    path, token = await exported(tmp_path, local_embedder)
    header, vault, *rest = path.read_text(encoding="utf-8").splitlines()
    secret = "ghp_" + "Zq8xW3vN7kR2mT5yB9cD1fG4hJ6lP0sA8uE2"
    sealed = Fernet(KEY.encode()).encrypt(secret.encode()).decode()
    forged = json.dumps({**json.loads(vault), "sealed": sealed})
    endless = json.dumps({**json.loads(vault), "created_at": float("inf")})
    async with AsyncMemory(tmp_path / "b.db", user_id="maya", embedder=local_embedder) as copy:
        with pytest.raises(SecretRefusedError) as refused:
            await copy.import_lines([header, forged, *rest], transfer_key=KEY)
        assert secret not in str(refused.value)
        with pytest.raises(ValidationError, match="repeats the token"):
            await copy.import_lines([header, vault, vault, *rest], transfer_key=KEY)
        with pytest.raises(ValidationError, match="finite"):
            await copy.import_lines([header, endless, *rest], transfer_key=KEY)
        assert await copy.list(include_archived=True) == []
        with pytest.raises(NotFoundError):
            await copy.reveal(token)
