"""Forgetting a person or a whole scope, for good (issue 13), and the online backup.

``forget_person(identifiers)`` erases what a scope holds about someone named by any of
the identifiers (emails, names, numbers ...): every memory mentioning one, in any of
its fields, or carrying a content-guard token whose original is one (the vault is
decrypted and compared, so "[email_3f2a9c1b]" goes with "alice@example.com"); the
records that name it (conflicts, decisions, history, ...); the vault entries of those
tokens and of tokens only the erased memories used; matching event payloads; the
embedding caches. ``forget_scope`` erases everything of a scope. Both then scrub the
database's files (``ErasureStore.scrub``) so a byte search of the file and its
write-ahead log finds nothing, and return an ``ErasureReport`` of counts per kind.

In-process state follows: the scope's search caches are dropped, matching sensory and
working-memory items removed, the query-embedding LRU emptied. An erasure holds the
scope's sleep-cycle lock, so no consolidation writes back what it read before.

``backup(path)`` copies the whole store online (``Storage.backup``), every scope: an
operator's tool (the service offers it only to local callers).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ucma.engine.privacy import PrivacyGuard
from ucma.errors import ValidationError
from ucma.memory.working import ZONES
from ucma.memory_ids import owned_by
from ucma.privacy.erasure import ErasureReport, IdentifierMatcher, check_identifiers
from ucma.privacy.kinds import ContentKind
from ucma.privacy.tokens import TOKEN_PATTERN, normalise
from ucma.types import BackupReport, Scope

__all__ = ["Erasure"]

logger = logging.getLogger(__name__)


class Erasure(PrivacyGuard):
    """forget_person, forget_scope, backup."""

    async def forget_person(
        self,
        identifiers: str | Sequence[str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> ErasureReport:
        """Erase everything the scope holds about the person these identifiers name
        (an email, a name, a phone number ...: give every one you know; matching is
        case-insensitive, on word boundaries, numbers in any grouping). Returns the
        counts per kind of record erased; other people's memories are untouched."""
        scope = self._scope(user_id, agent_id)
        names = check_identifiers(identifiers)
        storage = await self._ready()
        tokens = await self._tokens_naming(scope, names)
        matcher = IdentifierMatcher(names, tokens)
        async with self._cycle_lock(scope):
            self._drop_cached_vectors()
            counts = await self._run(
                storage.erasure.erase_matching,
                scope,
                matcher,
                tokens,
                self._clock(),
                _tokens_in,
            )
            self._forget_in_process(scope, matcher)
            checkpointed, vacuumed = await self._run(storage.erasure.scrub)
        report = ErasureReport("person", counts, checkpointed, vacuumed)
        logger.info(
            "forget_person: %d identifiers, %d records erased (user=%s)",
            len(names),
            report.total,
            scope.user_id,
        )
        return report

    async def forget_scope(
        self, *, user_id: str | None = None, agent_id: str | None = None
    ) -> ErasureReport:
        """Erase every record of the scope (memories, facts, decisions, conflicts,
        history, events, vault ...). The scope can be written again afterwards; its API
        keys are not revoked (``revoke_key``)."""
        scope = self._scope(user_id, agent_id)
        storage = await self._ready()
        async with self._cycle_lock(scope):
            self._drop_cached_vectors()
            counts = await self._run(storage.erasure.erase_scope, scope, self._clock())
            self._forget_in_process(scope, None)
            checkpointed, vacuumed = await self._run(storage.erasure.scrub)
        report = ErasureReport("scope", counts, checkpointed, vacuumed)
        logger.info("forget_scope: %d records erased (user=%s)", report.total, scope.user_id)
        return report

    async def backup(self, path: str | os.PathLike[str]) -> BackupReport:
        """Copy the whole store (every scope) to the new file ``path`` while writes go
        on: a consistent snapshot with every write acknowledged before the call,
        integrity-checked. Restore with ``ucma.restore_backup``. The vault key is not
        in the database: keep it with the backup."""
        target = Path(path)
        if self.path is not None and target.absolute() == self.path.absolute():
            raise ValidationError("a backup cannot overwrite the database it copies")
        storage = await self._ready()
        size = await self._run(storage.backup, os.fspath(target))
        logger.info("backup: %d bytes to %s", size, target)
        return BackupReport(path=os.fspath(target), bytes=size)

    # -- helpers ----------------------------------------------------------------

    async def _tokens_naming(self, scope: Scope, names: Sequence[str]) -> list[str]:
        """Tokens of the scope's vault whose original is, or mentions, one of ``names``
        (compared in the kind's normal form, so "+44 20 7946 0958" finds the token of
        "0044 20 7946 0958")."""
        cipher = await self._cipher(create=False)
        if cipher is None:
            return []
        storage = await self._ready()
        entries = await self._run(storage.vault.entries, scope)
        plain = IdentifierMatcher(names)
        found = []
        for entry in entries:
            value = cipher.decrypt(entry.ciphertext)
            try:
                kind = ContentKind(entry.kind)
            except ValueError:
                kind = None
            same = kind is not None and any(
                normalise(kind, value) == normalise(kind, name) for name in names
            )
            if same or plain(value):
                found.append(entry.token)
        return found

    def _drop_cached_vectors(self) -> None:
        for cached in (self._embedder, self._derived_embedder):
            if cached is not None:
                cached.clear()

    def _forget_in_process(self, scope: Scope, matcher: IdentifierMatcher | None) -> None:
        """Drop the scope's in-process state about what was erased (everything of the
        scope when ``matcher`` is None)."""
        self._names.pop(scope, None)
        self._instructions.pop(scope, None)
        self._synthesis.pop(scope, None)
        for key in [k for k in self._last_episode if k[0] == scope]:
            del self._last_episode[key]
        working = self._working.get(scope)
        if matcher is None:
            self._working.pop(scope, None)
            self._sessions.pop(scope, None)
            self.sensory.discard(lambda entry: _in_scope(entry.metadata, scope))
            return
        if working is not None:
            for zone in ZONES:
                for item in working.items(zone):
                    if matcher(item.content):
                        working.remove(item.item_id)
        self.sensory.discard(lambda entry: matcher(entry.content))


def _tokens_in(text: str) -> list[str]:
    return [m.group() for m in TOKEN_PATTERN.finditer(text)]


def _in_scope(metadata: Mapping[str, object], scope: Scope) -> bool:
    """Whether a sensory entry is of the scope: its memory id is sealed to it."""
    memory_id = metadata.get("memory_id")
    return isinstance(memory_id, str) and owned_by(memory_id, scope)
