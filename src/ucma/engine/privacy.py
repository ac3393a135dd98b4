"""The content guard on the engine's write and read paths (seed 003 R3, issue 13).

Every write with content calls ``_guard`` before anything is stored: secrets (and
whatever else ``PrivacyConfig`` refuses) raise ``ContentRefusedError`` /
``SecretRefusedError`` for the whole batch, and personal data is replaced by per-scope
tokens whose originals go to the vault, encrypted (``ucma.privacy.vault``). Reads
tokenise the query the same way (``_tokenise_query``), so a question naming a person's
email finds the memory that holds its token. ``reveal`` and ``detokenise`` give the
originals back to the scope that wrote them; another scope gets the same
``NotFoundError`` as for a token that never existed.

The vault entries of a write are committed before its memories (the guard runs first,
and a refused batch writes nothing at all): a write that fails later, at embedding or
in its own transaction, leaves entries no memory uses, which reveal nothing new.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from ucma.engine.base import EngineBase
from ucma.errors import ConfigError, NotFoundError, ValidationError
from ucma.privacy.detection import scan
from ucma.privacy.guard import replace_findings, screen
from ucma.privacy.kinds import ContentKind, Finding
from ucma.privacy.tokens import TOKEN_LENGTHS, TOKEN_PATTERN, blind_index, token_text
from ucma.privacy.vault import VaultCipher, default_key_path, load_or_create_key
from ucma.storage.base import Storage, VaultEntry
from ucma.types import Fact, Learning, MemoryRecord, Procedure, ProcedureStep, Scope

__all__ = ["PrivacyGuard"]

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=MemoryRecord)


class PrivacyGuard(EngineBase):
    """_guard (writes), _tokenise_query (reads), reveal and detokenise."""

    _cipher_cache: VaultCipher | None = None
    _cipher_lock: asyncio.Lock | None = None

    # -- writes -------------------------------------------------------------------

    async def _guard(
        self, scope: Scope, texts: Sequence[str], where: Sequence[str] = ()
    ) -> list[str]:
        """``texts`` as they may be stored: refused whole (typed error, nothing written)
        when the policy refuses anything in any of them, PII replaced by tokens."""
        screening = screen(texts, self.config.privacy, where)
        if screening.clean:
            return list(texts)
        cipher = await self._cipher()
        storage = await self._ready()
        wanted: dict[str, tuple[ContentKind, str]] = {}
        digest_of: dict[Finding, str] = {}
        for findings in screening.to_tokenise:
            for finding in findings:
                digest = blind_index(cipher.index_key, scope, finding.kind, finding.value)
                digest_of[finding] = digest
                wanted.setdefault(digest, (finding.kind, finding.value))
        tokens = await self._run(_assign_tokens, storage, scope, wanted, cipher, self._clock())
        guarded = [
            replace_findings(text, findings, {f: tokens[digest_of[f]] for f in findings})
            for text, findings in zip(texts, screening.to_tokenise, strict=True)
        ]
        logger.info(
            "privacy: %d values tokenised in %d texts (user=%s)",
            sum(len(f) for f in screening.to_tokenise),
            sum(1 for f in screening.to_tokenise if f),
            scope.user_id,
        )
        return guarded

    async def _guard_items(self, scope: Scope, items: Sequence[object]) -> None:
        """Guard a batch of prepared items' ``content`` in place (observe_many)."""
        texts = [str(item.content) for item in items]  # type: ignore[attr-defined]
        where = [f"items[{i}].content" for i in range(len(items))]
        for item, text in zip(items, await self._guard(scope, texts, where), strict=True):
            item.content = text  # type: ignore[attr-defined]

    async def _guard_text(self, scope: Scope, text: str, where: str = "content") -> str:
        [guarded] = await self._guard(scope, [text], [where])
        return guarded

    async def _guard_records(self, scope: Scope, records: Sequence[T]) -> list[T]:
        """Imported records with their text fields guarded: content and summary of
        every kind, a fact's subject and object, a procedure's name, description,
        steps, failure modes and preconditions, a learning's title. A record whose text
        changed needs a new vector."""
        fields: list[tuple[int, str, int | None]] = []
        texts: list[str] = []
        for i, record in enumerate(records):
            for name, value, step in _text_fields(record):
                fields.append((i, name, step))
                texts.append(value)
        where = [f"record {records[i].id} {name}" for i, name, _ in fields]
        guarded = await self._guard(scope, texts, where)
        changes: dict[int, dict[str, object]] = {}
        for (i, name, step), old, new in zip(fields, texts, guarded, strict=True):
            if old == new:
                continue
            change = changes.setdefault(i, {})
            if step is None:
                change[name] = new
            elif name == "steps":
                steps = change.setdefault("steps", list(records[i].steps))  # type: ignore[attr-defined]
                steps[step] = replace(steps[step], description=new)  # type: ignore[index]
            elif name == "failure_modes":
                modes = change.setdefault("failure_modes", list(records[i].failure_modes))  # type: ignore[attr-defined]
                modes[step] = new  # type: ignore[index]
            else:  # preconditions.subject / preconditions.object
                conditions = change.setdefault(
                    "preconditions",
                    list(records[i].preconditions),  # type: ignore[attr-defined]
                )
                part = name.split(".")[1]
                conditions[step] = replace(conditions[step], **{part: new})  # type: ignore[index]
        return [replace(r, **changes[i]) if i in changes else r for i, r in enumerate(records)]

    # -- reads --------------------------------------------------------------------

    async def _tokenise_query(self, scope: Scope, text: str) -> str:
        """``text`` with each value the scope's vault holds replaced by its token, so
        a query naming the original finds what was stored under the token. Values the
        vault does not hold are left as written (nothing was stored under them)."""
        findings = [f for f in scan(text) if self.config.privacy.action(f.kind) == "tokenise"]
        if not findings:
            return text
        cipher = await self._cipher(create=False)
        if cipher is None:
            return text
        storage = await self._ready()
        digests = {f: blind_index(cipher.index_key, scope, f.kind, f.value) for f in findings}
        known = await self._run(storage.vault.tokens_for, scope, sorted(set(digests.values())))
        present = [f for f in findings if digests[f] in known]
        return replace_findings(text, present, {f: known[digests[f]] for f in present})

    async def reveal(
        self, token: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> str:
        """The original value of a token of this scope; NotFoundError for a token
        this scope does not hold (another scope's tokens included)."""
        scope = self._scope(user_id, agent_id)
        if not isinstance(token, str) or TOKEN_PATTERN.fullmatch(token.strip()) is None:
            raise ValidationError("token must look like [email_3f2a9c1b]")
        token = token.strip()
        revealed = await self._reveal(scope, [token])
        if token not in revealed:
            raise NotFoundError("token", token)
        logger.info("reveal: 1 token (user=%s)", scope.user_id)
        return revealed[token]

    async def detokenise(
        self, text: str, *, user_id: str | None = None, agent_id: str | None = None
    ) -> str:
        """``text`` with every token of this scope's vault replaced by its original;
        tokens the scope does not hold stay as they are."""
        scope = self._scope(user_id, agent_id)
        if not isinstance(text, str):
            raise ValidationError("text must be a string")
        tokens = sorted({m.group() for m in TOKEN_PATTERN.finditer(text)})
        if not tokens:
            return text
        revealed = await self._reveal(scope, tokens)
        logger.info("detokenise: %d tokens (user=%s)", len(revealed), scope.user_id)
        return TOKEN_PATTERN.sub(lambda m: revealed.get(m.group(), m.group()), text)

    async def _reveal(self, scope: Scope, tokens: Sequence[str]) -> dict[str, str]:
        cipher = await self._cipher(create=False)
        if cipher is None:
            return {}
        storage = await self._ready()
        entries = await self._run(storage.vault.get, scope, list(tokens))
        return {token: cipher.decrypt(entry.ciphertext) for token, entry in entries.items()}

    # -- the key ------------------------------------------------------------------

    async def _cipher(self, *, create: bool = True) -> VaultCipher | None:
        """The vault's cipher, its key resolved once (``PrivacyConfig``). Without a
        configured key and without a key file, ``create=False`` gives None (no vault
        can exist yet) and ``create=True`` makes the key file."""
        if self._cipher_cache is not None:
            return self._cipher_cache
        if self._cipher_lock is None:
            self._cipher_lock = asyncio.Lock()
        async with self._cipher_lock:
            if self._cipher_cache is not None:
                return self._cipher_cache
            config = self.config.privacy
            storage = await self._ready()
            if config.vault_key is not None:
                key = config.vault_key.encode("ascii", "replace")
            else:
                if config.vault_key_file:
                    path = Path(config.vault_key_file)
                elif self.path is not None:
                    path = default_key_path(self.path)
                elif not create:
                    return None
                else:
                    raise ConfigError(
                        f"{self.location} is not a local file, so the vault key has no "
                        "default place beside it: set PrivacyConfig.vault_key "
                        "(UCMA_VAULT_KEY) or vault_key_file"
                    )
                if not path.exists() and not create:
                    return None
                key = await asyncio.to_thread(load_or_create_key, path)
            cipher = VaultCipher(key)
            recorded = await self._run(storage.vault.key_fingerprint)
            if recorded is not None and recorded != cipher.fingerprint:
                raise ConfigError(
                    "the vault key is not the one this database's vault was written with; "
                    "set PrivacyConfig.vault_key (UCMA_VAULT_KEY) or vault_key_file to it"
                )
            if recorded is None:
                await self._run(
                    storage.vault.set_key_fingerprint, cipher.fingerprint, self._clock()
                )
            self._cipher_cache = cipher
            return cipher


def _assign_tokens(
    storage: Storage,
    scope: Scope,
    wanted: dict[str, tuple[ContentKind, str]],
    cipher: VaultCipher,
    now: float,
) -> dict[str, str]:
    """{digest: token} for every wanted value: the vault's token when it holds the
    value, else a new entry (the shortest token not taken in the scope). One
    transaction, so concurrent writers agree on one token per value."""
    with storage.transaction():
        known = storage.vault.tokens_for(scope, list(wanted))
        new = [d for d in wanted if d not in known]
        candidates = {d: token_text(wanted[d][0], d) for d in new}
        taken = storage.vault.taken(scope, list(candidates.values()))
        used: set[str] = set()
        entries = []
        for digest in new:
            kind, value = wanted[digest]
            token = candidates[digest]
            for length in TOKEN_LENGTHS[1:]:
                if token not in taken and token not in used:
                    break
                token = token_text(kind, digest, length)
                taken |= storage.vault.taken(scope, [token])
            used.add(token)
            entries.append(VaultEntry(token, kind.value, digest, cipher.encrypt(value), now))
        storage.vault.add(scope, entries)
        return known | {e.digest: e.token for e in entries}


def _text_fields(record: MemoryRecord) -> list[tuple[str, str, int | None]]:
    fields: list[tuple[str, str, int | None]] = [("content", record.content, None)]
    summary = getattr(record, "summary", None)  # episodes carry one, other kinds not
    if summary:
        fields.append(("summary", summary, None))
    if isinstance(record, Fact):
        fields += [("subject", record.subject, None), ("object", record.object, None)]
    elif isinstance(record, Procedure):
        fields += [("name", record.name, None), ("description", record.description, None)]
        fields += [
            ("steps", step.description, i)
            for i, step in enumerate(record.steps)
            if isinstance(step, ProcedureStep)
        ]
        fields += [("failure_modes", mode, i) for i, mode in enumerate(record.failure_modes)]
        for i, condition in enumerate(record.preconditions):
            fields.append(("preconditions.subject", condition.subject, i))
            fields.append(("preconditions.object", condition.object, i))
    elif isinstance(record, Learning) and record.title:
        fields.append(("title", record.title, None))
    return fields
