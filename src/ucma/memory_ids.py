"""Memory ids sealed to their scope, so an id reveals and claims nothing across tenants.

Ids are unique across the whole database (one ``memories`` table), but a scope may
only ever hold ids that are provably its own; otherwise an import could probe for
another tenant's id (a refusal means "someone holds it") or claim it first, after which
the owner's next write under that id fails.

A new memory id is ``<prefix>_<32 random hex><16 hex seal>``; the seal is a hash of the
scope and the rest of the id, so ``owned_by(id, scope)`` checks it without reading the
database. A fact's deterministic id (``fact_id_for``) is owned by the scope it names.
Import keeps an id its scope owns and gives every other one ``foreign_id``: an id
derived from the scope and the original, sealed to the scope, the same on every run (so
an interrupted import resumes) and never one that another scope can hold. Which id a
record gets therefore depends on the file and the caller's scope alone, never on what
other scopes hold.
"""

from __future__ import annotations

import hashlib
import re
import uuid

from ucma.types import Scope

__all__ = ["foreign_id", "new_memory_id", "owned_by"]

_SEALED = re.compile(r"([a-z]{1,16})_([0-9a-f]{32})([0-9a-f]{16})")
_PREFIX = re.compile(r"[a-z]{1,16}(?=_)")


def _seal(prefix: str, body: str, scope: Scope) -> str:
    key = "\x1f".join(("ucma-memory-id", scope.user_id, scope.agent_id, prefix, body))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _sealed(prefix: str, body: str, scope: Scope) -> str:
    return f"{prefix}_{body}{_seal(prefix, body, scope)}"


def new_memory_id(prefix: str, scope: Scope) -> str:
    """A fresh random id for a memory of ``scope`` (``prefix``: ep, fact, proc, lrn)."""
    return _sealed(prefix, uuid.uuid4().hex, scope)


def owned_by(memory_id: str, scope: Scope) -> bool:
    """Whether ``memory_id`` carries ``scope``'s seal (a pure check, no database read)."""
    match = _SEALED.fullmatch(memory_id)
    return match is not None and match[3] == _seal(match[1], match[2], scope)


def foreign_id(memory_id: str, scope: Scope, prefix: str | None = None) -> str:
    """The id an imported ``memory_id`` gets in ``scope``: itself when the scope owns
    it, else one derived from both and sealed to the scope (deterministic).

    ``prefix`` defaults to the original's own (``ep`` of ``ep_...``), else ``mem``.
    """
    if owned_by(memory_id, scope):
        return memory_id
    if prefix is None:
        found = _PREFIX.match(memory_id)
        prefix = found[0] if found is not None else "mem"
    key = "\x1f".join(("ucma-imported-id", scope.user_id, scope.agent_id, memory_id))
    return _sealed(prefix, hashlib.sha256(key.encode("utf-8")).hexdigest()[:32], scope)
