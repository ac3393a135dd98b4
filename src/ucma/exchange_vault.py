"""Vault entries in an export: the originals of a scope's tokens, sealed with a transfer key.

An export carries vault entries only when its caller passes a transfer key (a Fernet key,
``ucma.privacy.vault``): each original is encrypted with it, never written in clear, and
the store's own vault key never leaves the store. The lines come right after the header,
before any memory, so an import knows every token before it writes a record::

    {"type": "vault", "token": "[email_3f2a9c1b]", "kind": "email",
     "sealed": "<Fernet token of the original under the transfer key>", "created_at": ...}

Import opens each entry with the same transfer key and enters the original into the
caller's scope under the target store's vault key (a new blind index, a new ciphertext).
A token keeps its text when the scope holds neither it nor its value, so memories carried
with it still resolve (``reveal``) and rank as they did; when the scope already holds the
value, its token is used, and when the token names another value there, the value gets a
token of its own. ``retokenise`` rewrites the imported texts for the tokens that changed.
An export with vault lines needs the transfer key to be imported: without it, or with
another key, the import is refused before anything is written. Functions taking a
``Storage`` run on the storage thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cryptography.fernet import Fernet, InvalidToken

from ucma.config import PrivacyConfig
from ucma.errors import ValidationError
from ucma.privacy.guard import screen
from ucma.privacy.kinds import PII_KINDS, ContentKind
from ucma.privacy.tokens import TOKEN_LENGTHS, TOKEN_PATTERN, blind_index, token_text
from ucma.privacy.vault import VaultCipher
from ucma.storage.base import Storage, VaultEntry
from ucma.types import Fact, Learning, MemoryRecord, Procedure, ProcedureStep, Scope

__all__ = [
    "VaultValue",
    "check_vault",
    "export_vault",
    "read_vault_line",
    "retokenise",
    "retokenise_record",
    "transfer_cipher",
    "write_vault",
]


@dataclass(frozen=True, slots=True)
class VaultValue:
    """One vault entry read from an export, opened: its token there, kind and original."""

    token: str
    kind: ContentKind
    value: str
    created_at: float


def transfer_cipher(key: str | bytes) -> Fernet:
    """The cipher of a transfer key; ValidationError when it is not a Fernet key."""
    try:
        return Fernet(key.encode("ascii") if isinstance(key, str) else key)
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise ValidationError(
            "transfer_key must be a Fernet key: 32 random bytes, urlsafe base64 (create "
            "one with `python -c 'from cryptography.fernet import Fernet; "
            "print(Fernet.generate_key().decode())'`)"
        ) from exc


def export_vault(
    storage: Storage, scope: Scope, cipher: VaultCipher, transfer: Fernet
) -> list[dict[str, Any]]:
    """The scope's vault entries as export lines (dicts), originals sealed with ``transfer``."""
    return [
        {
            "type": "vault",
            "token": entry.token,
            "kind": entry.kind,
            "sealed": transfer.encrypt(cipher.decrypt(entry.ciphertext).encode("utf-8")).decode(
                "ascii"
            ),
            "created_at": entry.created_at,
        }
        for entry in storage.vault.entries(scope)
    ]


def read_vault_line(line: Mapping[str, Any], transfer: Fernet | None) -> VaultValue:
    """A vault line (without its ``type``) opened with the transfer key."""
    if transfer is None:
        raise ValidationError(
            "the export carries vault entries sealed with a transfer key; pass the same "
            "transfer_key to import it (or export again without one)"
        )
    token, kind, sealed = line.get("token"), line.get("kind"), line.get("sealed")
    if not isinstance(token, str) or (match := TOKEN_PATTERN.fullmatch(token)) is None:
        raise ValidationError("a vault line's token must look like [email_3f2a9c1b]")
    if kind != match.group("kind") or ContentKind(kind) not in PII_KINDS:
        raise ValidationError(f"a vault line's kind {kind!r} does not match its token")
    created = line.get("created_at")
    if isinstance(created, bool) or not isinstance(created, int | float):
        raise ValidationError("a vault line's created_at must be a number")
    if not math.isfinite(created):
        raise ValidationError("a vault line's created_at must be finite")
    if not isinstance(sealed, str):
        raise ValidationError("a vault line's sealed value must be a string")
    try:
        value = transfer.decrypt(sealed.encode("ascii")).decode("utf-8")
    except (InvalidToken, UnicodeError) as exc:
        raise ValidationError("the transfer key does not open this vault entry") from exc
    return VaultValue(token, ContentKind(kind), value, float(created))


def check_vault(values: Sequence[VaultValue], policy: PrivacyConfig) -> None:
    """The originals through the content guard's policy, as every write's text: a
    secret among them (or a kind the deployment refuses) refuses the import, typed
    (``ucma.privacy.guard.screen``), before anything is written."""
    screen([v.value for v in values], policy, [f"vault entry {v.token}" for v in values])


def write_vault(
    storage: Storage, scope: Scope, values: Sequence[VaultValue], cipher: VaultCipher
) -> dict[str, str]:
    """Enter the values into the scope's vault under ``cipher``'s key, in one transaction;
    returns {token in the export: token in the scope} for every value (tokens are
    distinct, ``LineReader`` refuses a repeated one)."""
    with storage.transaction():
        digests = {v.token: blind_index(cipher.index_key, scope, v.kind, v.value) for v in values}
        known = storage.vault.tokens_for(scope, sorted(set(digests.values())))
        mapping: dict[str, str] = {}
        entries: list[VaultEntry] = []
        for value in values:
            digest = digests[value.token]
            if digest not in known:
                candidates = [value.token]
                candidates += [token_text(value.kind, digest, n) for n in TOKEN_LENGTHS]
                taken = storage.vault.taken(scope, candidates) | set(mapping.values())
                token = next(c for c in candidates if c not in taken)
                ciphertext = cipher.encrypt(value.value)
                entries.append(
                    VaultEntry(token, value.kind.value, digest, ciphertext, value.created_at)
                )
                known[digest] = token
            mapping[value.token] = known[digest]
        storage.vault.add(scope, entries)
    return mapping


def retokenise(text: str, mapping: Mapping[str, str]) -> str:
    """``text`` with each token of ``mapping`` replaced by its token in the scope."""
    if not mapping or "[" not in text:
        return text
    return TOKEN_PATTERN.sub(lambda m: mapping.get(m.group(), m.group()), text)


def retokenise_record(record: MemoryRecord, mapping: Mapping[str, str]) -> MemoryRecord:
    """``record`` with its texts retokenised (the fields the content guard reads); the
    same object when nothing changed."""
    changes: dict[str, Any] = {}
    names = ["content", "summary"]
    if isinstance(record, Fact):
        names += ["subject", "object"]
    elif isinstance(record, Procedure):
        names += ["name", "description"]
    elif isinstance(record, Learning):
        names.append("title")
    for name in names:
        old = getattr(record, name, None)
        if isinstance(old, str) and (new := retokenise(old, mapping)) != old:
            changes[name] = new
    if isinstance(record, Procedure):
        steps = [
            replace(s, description=retokenise(s.description, mapping))
            if isinstance(s, ProcedureStep)
            else s
            for s in record.steps
        ]
        if steps != list(record.steps):
            changes["steps"] = steps
    return replace(record, **changes) if changes else record
