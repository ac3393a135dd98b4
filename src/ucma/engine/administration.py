"""Export and import, and the unscoped administration of a database: the API
keys of the service (``ucma keys``, ``ucma.server.auth``) and the scopes it holds."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from ucma import apikeys, exchange, exchange_records, exchange_vault
from ucma.engine.privacy import PrivacyGuard
from ucma.errors import AuthenticationError, NotFoundError
from ucma.types import ApiKey, ImportReport, Scope
from ucma.validation import check_content, check_id, check_limit, check_scope

__all__ = ["Administration"]

T = TypeVar("T")

logger = logging.getLogger(__name__)


class Administration(PrivacyGuard):
    """export / import, API keys, scopes, authenticate."""

    # -- exchange -----------------------------------------------------------------

    async def export_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        transfer_key: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> int:
        """Write the scope's memories, vectors, edges and retention as JSON Lines.
        Archived memories are included. With ``transfer_key`` the vault's originals go
        too, sealed with it (see ``export_lines``). Returns the number of memories exported."""
        scope = self._scope(user_id, agent_id)
        vault = await self._export_vault(scope, transfer_key)
        storage = await self._ready()
        embedder = self._inner_embedder
        return await self._run(
            exchange.export_scope,
            storage,
            scope,
            Path(path),
            embedder.model_id,
            embedder.dimension,
            vault,
        )

    async def export_lines(
        self,
        *,
        transfer_key: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> AsyncIterator[str]:
        """The scope's export, line by line (each ends with a newline), read a page at a
        time: the header, each memory followed by its retention state, then the edges.

        Without ``transfer_key`` an export holds tokens only, never the originals of the
        content guard. With one (a Fernet key), the scope's vault entries follow the
        header, each original encrypted with that key (``ucma.exchange_vault``): an
        import given the same key re-encrypts them with its own store's vault key, so
        the tokens of the memories still resolve. Keep the transfer key apart from the file.

        Pages are read by offset, so records written or deleted while an export streams
        may be missed or repeated; import skips repeats.
        """
        scope = self._scope(user_id, agent_id)
        vault = await self._export_vault(scope, transfer_key)
        storage = await self._ready()
        embedder = self._inner_embedder
        yield exchange.export_header(scope, embedder.model_id, embedder.dimension)
        for entry in vault:
            yield json.dumps(entry) + "\n"
        offset = 0
        while True:
            page = await self._run(exchange.export_page, storage, scope, offset)
            for line in page.lines:
                yield line
            offset += page.count
            if page.count < exchange.CHUNK:
                break
        for line in await self._run(exchange.export_edges, storage, scope):
            yield line
        logger.info("export: %d records and %d vault entries of %s", offset, len(vault), scope)

    async def _export_vault(self, scope: Scope, transfer_key: str | None) -> list[dict[str, Any]]:
        """The scope's vault lines sealed with ``transfer_key`` (none without one)."""
        if transfer_key is None:
            return []
        transfer = exchange_vault.transfer_cipher(transfer_key)
        cipher = await self._cipher(create=False)
        if cipher is None:  # no vault key yet: nothing was ever tokenised
            return []
        storage = await self._ready()
        return await self._run(exchange_vault.export_vault, storage, scope, cipher, transfer)

    async def import_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        transfer_key: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> int:
        """Load an export file into the scope (see ``import_lines``); returns records imported."""
        report = await self.import_lines(
            exchange.iter_lines(Path(path), self.config.limits.max_import_line_bytes),
            source=os.fspath(path),
            transfer_key=transfer_key,
            user_id=user_id,
            agent_id=agent_id,
        )
        return report.imported

    async def import_lines(
        self,
        lines: Iterable[str | bytes] | AsyncIterable[str | bytes],
        *,
        source: str = "input",
        progress: Callable[[ImportReport], object] | None = None,
        transfer_key: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> ImportReport:
        """Load an export into the scope, streaming: a chunk of records at a time is
        validated, embedded if needed and written in one transaction.

        Ids the scope owns are kept, every other record gets an id derived from the
        scope and its original (``ucma.exchange.ScopeIds``), so what an import does never
        depends on another scope. Records already present are skipped (neither embedded
        nor written), so re-running an interrupted import resumes it. Vectors from another
        embedding model are recomputed. ``progress`` is called after each chunk with
        the totals so far. A bad line raises ValidationError naming it; the chunks
        before it stay written.

        An export made with a transfer key carries the originals of its tokens; they
        are entered into this scope's vault (under this store's vault key) before any
        record, so the tokens resolve here too (``ucma.exchange_vault``). Such an export
        needs the same ``transfer_key``: without it, or with another, ValidationError
        before anything is written.
        """
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        transfer = None if transfer_key is None else exchange_vault.transfer_cipher(transfer_key)
        reader = exchange.LineReader(self.config.limits, source=source, transfer=transfer)
        ids = exchange.ScopeIds(scope)
        totals = {"records": 0, "imported": 0, "skipped": 0, "vault_entries": 0}
        written: set[str] = set()
        tokens: dict[str, str] | None = None  # export's token -> the scope's

        async def vault() -> dict[str, str]:
            """The vault lines (all read before the first memory) into the scope."""
            nonlocal tokens
            if tokens is None:
                tokens = {}
                exchange_vault.check_vault(reader.vault, self.config.privacy)
                cipher = await self._cipher() if reader.vault else None
                if cipher is not None:
                    tokens = await self._run(
                        exchange_vault.write_vault, storage, scope, reader.vault, cipher
                    )
                    totals["vault_entries"] = len(reader.vault)
            return tokens

        async def write(read: exchange.ImportChunk) -> None:
            chunk = ids.chunk(read)
            mapping = await vault()
            moved = [exchange_vault.retokenise_record(r, mapping) for r in chunk.records]
            guarded = await self._guard_records(scope, moved)
            for old, new_record in zip(chunk.records, guarded, strict=True):
                if new_record is not old:  # its text changed: its vector was of the old one
                    chunk.vectors.pop(new_record.id, None)
            chunk.records = guarded
            new = await self._run(exchange.new_ids, storage, scope, chunk)
            same_model = reader.model == self._inner_embedder.model_id
            missing = chunk.needing_vectors(new, same_model, self._inner_embedder.dimension)
            if missing:
                vectors = await self._embed([r.content for r in missing])
                chunk.vectors.update(zip((r.id for r in missing), vectors, strict=True))
            written.update(r.id for r in new)
            states = [s for memory_id, s in chunk.retention.items() if memory_id in written]
            await self._run(exchange.write_chunk, storage, scope, new, chunk.vectors, states)
            self._names.pop(scope, None)
            self._instructions.pop(scope, None)
            totals["records"] += len(chunk.records)
            totals["imported"] += len(new)
            totals["skipped"] += len(chunk.records) - len(new)
            if progress is not None:
                progress(ImportReport(lines=reader.number, **totals))

        if isinstance(lines, AsyncIterable):
            async for raw in lines:
                ready = reader.feed(raw)
                if ready is not None:
                    await write(ready)
        else:
            for raw in lines:
                ready = reader.feed(raw)
                if ready is not None:
                    await write(ready)
        last = reader.finish()
        await write(last)
        moved = [ids.edge(e) for e in last.edges]
        edges = await self._run(exchange.write_edges, storage, scope, moved)
        records = await self._guard_scope_records(scope, reader.records, await vault())
        carried = await self._run(
            exchange_records.write_records, storage, scope, records, ids.reference
        )
        logger.info("import: %s beside the memories of %s", carried, scope)
        report = ImportReport(lines=reader.number, edges=edges, **totals)
        if progress is not None:
            progress(report)
        logger.info(
            "import: %d records into %s (%d new, %d present)",
            report.records,
            scope,
            report.imported,
            report.skipped,
        )
        return report

    async def _guard_scope_records(
        self, scope: Scope, records: exchange_records.ScopeRecords, tokens: dict[str, str]
    ) -> exchange_records.ScopeRecords:
        """The imported decisions', conflicts' and flags' texts with the export's tokens
        renamed as ``tokens`` says, then through the content guard, as every write's: a
        secret refuses the import, PII becomes tokens."""
        records = await self._guard_contexts(scope, records, tokens)
        fields: list[tuple[object, str]] = []
        for trace, _ in records.decisions:
            fields += [(trace, "summary"), (trace, "outcome_feedback")]
        for conflict in records.conflicts:
            fields += [
                (conflict, name)
                for name in ("subject", "existing_value", "new_value", "chosen_value")
            ]
            fields.append((conflict, "explanation"))
        fields += [(flag, "reason") for flag in records.flags]
        fields += [(entry, "reason") for entry in records.supersessions]
        for opinion in records.opinions:
            fields += [(opinion, name) for name in ("topic", "stance", "holder")]
            fields += [(entry, "text") for entry in opinion.evidence]
        fields += [(t, name) for t in records.transitions for name in ("action", "outcome")]
        for competence in records.competences:
            fields.append((competence, "capability"))
            fields += [(mode, "mode") for mode in competence.failure_modes]
            fields += [(entry, "reason") for entry in competence.evidence]
        present = [(obj, name) for obj, name in fields if getattr(obj, name)]
        texts = [str(getattr(obj, name)) for obj, name in present]
        where = [f"imported {type(obj).__name__.lower()} {name}" for obj, name in present]
        renamed = [exchange_vault.retokenise(text, tokens) for text in texts]
        guarded = await self._guard(scope, renamed, where)
        changed = {
            (id(obj), name): new
            for (obj, name), old, new in zip(present, texts, guarded, strict=True)
            if old != new
        }
        if not changed:
            return records

        def moved(obj: T) -> T:
            names = {n: v for (key, n), v in changed.items() if key == id(obj)}
            return replace(obj, **names) if names else obj  # type: ignore[type-var]

        return dataclasses.replace(
            records,
            decisions=[(moved(t), u) for t, u in records.decisions],
            conflicts=[moved(c) for c in records.conflicts],
            flags=[moved(f) for f in records.flags],
            supersessions=[moved(s) for s in records.supersessions],
            opinions=[
                replace(moved(o), evidence=[moved(e) for e in o.evidence]) for o in records.opinions
            ],
            transitions=[moved(t) for t in records.transitions],
            competences=[
                replace(
                    moved(c),
                    failure_modes=[moved(m) for m in c.failure_modes],
                    evidence=[moved(e) for e in c.evidence],
                )
                for c in records.competences
            ],
        )

    async def _guard_contexts(
        self, scope: Scope, records: exchange_records.ScopeRecords, tokens: dict[str, str]
    ) -> exchange_records.ScopeRecords:
        """The imported transitions' contexts (condition and value texts), renamed and
        guarded like every other imported text."""
        flat = [text for t in records.transitions for pair in t.context.items() for text in pair]
        if not flat:
            return records
        renamed = [exchange_vault.retokenise(text, tokens) for text in flat]
        guarded = iter(
            await self._guard(scope, renamed, ["imported transition context"] * len(flat))
        )
        moved = [
            replace(t, context={next(guarded): next(guarded) for _ in range(len(t.context))})
            for t in records.transitions
        ]
        return dataclasses.replace(records, transitions=moved)

    # -- administration: API keys of the service ------------------------------------

    async def create_key(
        self, user_id: str, *, agent_id: str | None = None, label: str | None = None
    ) -> tuple[ApiKey, str]:
        """A new API key bound to ``user_id`` (and to ``agent_id`` when given).

        Returns the key and its token; the token is not stored (only its sha256) and
        cannot be shown again.
        """
        scope = check_scope(user_id, agent_id)
        if label is not None:
            label = check_content(label, self.config.limits, "label")
        key = ApiKey(
            id=apikeys.new_key_id(),
            user_id=scope.user_id,
            agent_id=scope.agent_id if agent_id is not None else None,
            label=label,
            created_at=self._clock(),
        )
        token = apikeys.new_token(key.id)
        storage = await self._ready()
        await self._run(storage.keys.add, key, apikeys.hash_token(token))
        logger.info("created API key %s for user %s", key.id, key.user_id)
        return key, token

    async def list_keys(self, *, include_revoked: bool = False) -> list[ApiKey]:
        """API keys, oldest first (never their tokens)."""
        storage = await self._ready()
        return await self._run(storage.keys.list, include_revoked=include_revoked)

    async def count_keys(self) -> int:
        """Number of API keys that are not revoked."""
        storage = await self._ready()
        return await self._run(storage.keys.count)

    async def revoke_key(self, key_id: str) -> ApiKey:
        """Revoke a key for good; NotFoundError if unknown. Revoking twice is harmless."""
        storage = await self._ready()
        key = await self._run(storage.keys.revoke, check_id(key_id, "key_id"), self._clock())
        if key is None:
            raise NotFoundError("API key", key_id)
        logger.info("revoked API key %s", key.id)
        return key

    async def scopes(
        self, *, limit: int = 1000, user_id: str | None = None, agent_id: str | None = None
    ) -> list[tuple[Scope, dict[str, int]]]:
        """Scopes that hold memories, with their counts per kind, ordered by user and
        agent. Without ``user_id`` this lists every user (administration: local tools
        and local mode only); with it, that user's agents (only ``agent_id`` if given)."""
        storage = await self._ready()
        maximum = check_limit(limit, 100_000)
        user = None if user_id is None else check_id(user_id, "user_id")
        agent = None if agent_id is None else check_id(agent_id, "agent_id")

        def gather() -> list[tuple[Scope, dict[str, int]]]:
            found = sorted(
                (
                    s
                    for s in storage.memories.scopes()
                    if (user is None or s.user_id == user)
                    and (agent is None or s.agent_id == agent)
                ),
                key=lambda s: (s.user_id, s.agent_id),
            )
            return [
                (scope, {k.value: n for k, n in storage.memories.count(scope).items()})
                for scope in found[:maximum]
            ]

        return await self._run(gather)

    async def authenticate(self, token: str) -> ApiKey:
        """The live key a token belongs to; AuthenticationError otherwise (the same
        message whatever was wrong, so a caller learns nothing from it)."""
        key_id = apikeys.parse_key_id(token) if isinstance(token, str) else None
        if key_id is not None:
            storage = await self._ready()
            found = await self._run(storage.keys.lookup, key_id)
            if found is not None:
                key, stored_hash = found
                if apikeys.token_matches(token, stored_hash) and not key.revoked:
                    return key
        raise AuthenticationError("invalid or revoked API key")
