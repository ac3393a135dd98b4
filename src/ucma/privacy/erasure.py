"""Forgetting a person: which texts mention them, and the report of an erasure (pure).

``IdentifierMatcher`` decides whether a stored text is about a person named by some
identifiers (an email, a name, a phone number ...) or carries one of the content
guard's tokens for them. It matches case-insensitively, on word boundaries (so "Ann"
does not match "Anna" or "planning"), lets the words of a name be separated by any
whitespace, finds a number however its digits are grouped ("+1 555 010 9999" finds
"555-010-9999" only when every digit is there), and reads JSON text (event payloads,
metadata) both as stored and with its ``\\uXXXX`` escapes decoded.

The engine (``ucma.engine.erasure``) builds one from the caller's identifiers and the
tokens the scope's vault holds for them; the store deletes what it matches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ucma.errors import ValidationError

__all__ = ["MAX_IDENTIFIERS", "ErasureReport", "IdentifierMatcher", "check_identifiers"]

MAX_IDENTIFIERS = 50
"""Identifiers one erasure accepts."""

_MAX_IDENTIFIER_CHARS = 256
_MIN_DIGITS = 6
_NUMBER = re.compile(r"\+?[\d\s().\-/]+")


def check_identifiers(identifiers: object) -> list[str]:
    """The identifiers of a person to forget, stripped; ValidationError when there are
    none, too many, or one is too short to name anyone (fewer than 2 letters or digits:
    it would match almost every text)."""
    if isinstance(identifiers, str):
        identifiers = [identifiers]
    if not isinstance(identifiers, Iterable) or isinstance(identifiers, Mapping | bytes):
        raise ValidationError("identifiers must be a list of strings (emails, names, numbers)")
    found: list[str] = []
    for value in identifiers:
        if not isinstance(value, str):
            raise ValidationError("each identifier must be a string")
        text = " ".join(value.split())
        if len(text) > _MAX_IDENTIFIER_CHARS:
            raise ValidationError(f"an identifier has more than {_MAX_IDENTIFIER_CHARS} characters")
        if sum(c.isalnum() for c in text) < 2:
            raise ValidationError(
                f"identifier {text!r} is too short to name a person: give at least "
                "two letters or digits"
            )
        if text not in found:
            found.append(text)
    if not found:
        raise ValidationError("give at least one identifier of the person to forget")
    if len(found) > MAX_IDENTIFIERS:
        raise ValidationError(f"at most {MAX_IDENTIFIERS} identifiers per erasure")
    return found


def _pattern(identifier: str) -> str:
    words = [re.escape(w) for w in identifier.split()]
    body = r"\s+".join(words)
    start = r"(?<!\w)" if identifier[:1].isalnum() or identifier[:1] == "_" else ""
    end = r"(?!\w)" if identifier[-1:].isalnum() or identifier[-1:] == "_" else ""
    return start + body + end


def _digits_pattern(identifier: str) -> str | None:
    """A number written with other grouping: its digits with any separators between."""
    if _NUMBER.fullmatch(identifier) is None:
        return None
    digits = re.sub(r"\D", "", identifier)
    if len(digits) < _MIN_DIGITS:
        return None
    return r"(?<!\d)" + r"[\s().\-/]*".join(digits) + r"(?!\d)"


class IdentifierMatcher:
    """Whether a text mentions any of ``identifiers`` or holds any of ``tokens``."""

    def __init__(self, identifiers: Sequence[str], tokens: Sequence[str] = ()) -> None:
        parts = [_pattern(i) for i in identifiers if i.strip()]
        parts += [p for p in map(_digits_pattern, identifiers) if p is not None]
        parts += [re.escape(t) for t in tokens]
        if not parts:
            raise ValidationError("nothing to match: no identifiers or tokens")
        self.identifiers = tuple(identifiers)
        self.tokens = tuple(tokens)
        self._regex = re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)

    def __call__(self, text: str) -> bool:
        if self._regex.search(text) is not None:
            return True
        if "\\u" in text or "\\U" in text:
            return self._regex.search(_unescaped(text)) is not None
        return False


def _unescaped(text: str) -> str:
    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except ValueError:
        return text.encode("utf-8", "surrogatepass").decode("unicode_escape", "replace")


@dataclass(frozen=True, slots=True)
class ErasureReport:
    """What an erasure removed, per kind of record (never the values themselves).

    ``target`` is "person" or "scope". Memory counts are per kind ("episodic",
    "semantic", "procedural", "learning"); the others name the record kind
    ("vault_entries", "conflicts", "decisions", "events_redacted", ...). ``checkpointed``
    says the write-ahead log was emptied into the database file and truncated, and
    ``vacuumed`` that the file was rewritten without free pages: both together mean no
    erased byte is left in either file. They are False only when another connection
    held the database busy past the timeout; run the erasure again, or ``scrub()``.
    """

    target: str
    counts: Mapping[str, int] = field(default_factory=dict)
    checkpointed: bool = False
    vacuumed: bool = False

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "counts": dict(sorted(self.counts.items())),
            "total": self.total,
            "checkpointed": self.checkpointed,
            "vacuumed": self.vacuumed,
        }
