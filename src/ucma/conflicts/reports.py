"""What conflict-aware writes and reads hand back, and how conflicts are phrased.

``assert_fact`` keeps returning the ``Fact`` (existing callers are
unchanged); ``assert_fact_detailed`` and ``resolve_conflict`` return a
``FactAssertion`` with the conflicts the write detected or settled and the
memories it flagged for review. ``facts_about`` returns a ``FactList``: a
plain ``list`` of facts that also carries ``.conflicts``, the conflicts
touching those facts, so a read never hides a disagreement.

``to_dict`` methods produce seed 002's JSON shape: ``response``,
``conflicts_detected`` (each with ``resolution_strategy`` and
``explanation``), and ``disambiguation_required`` / ``options`` when the
user has to choose. Sentences are templates, no LLM:

- trust_db:     "Status is shipped (previously in_fulfillment)"
- supersede:    "Delivery preference is Friday (recently updated from Thursday)"
- kept old:     "Delivery preference stays Thursday (higher confidence ...); Friday was not adopted"
- ask_user:     "I have conflicting information about delivery preference: 'Thursday' vs
                'Friday'. Which is correct?"
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ucma.serialization import record_to_dict
from ucma.types import Conflict, ConflictStatus, Fact, ResolutionStrategy, ReviewFlag

__all__ = [
    "FactAssertion",
    "FactList",
    "conflict_sentence",
    "predicate_words",
    "review_flag_to_dict",
]

_ABBREVIATIONS = {
    "pref": "preference",
    "prefs": "preferences",
    "addr": "address",
    "dob": "birth date",
}


def predicate_words(predicate: str) -> str:
    """``delivery_pref`` -> ``delivery preference``: a predicate as words."""
    words = predicate.replace("-", " ").replace("_", " ").split()
    return " ".join(_ABBREVIATIONS.get(w.lower(), w) for w in words) or predicate


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def conflict_sentence(conflict: Conflict) -> str:
    """One sentence telling the user what was found and which value is used."""
    what = predicate_words(conflict.predicate)
    old, new = conflict.existing_value, conflict.new_value
    if conflict.status is ConflictStatus.PENDING:
        return f"I have conflicting information about {what}: '{old}' vs '{new}'. Which is correct?"
    chosen = conflict.chosen_value
    if conflict.status is ConflictStatus.OBSOLETE:
        return f"{_capitalised(what)}: '{old}' vs '{new}' was overtaken by a later value"
    if conflict.resolution_strategy is ResolutionStrategy.TRUST_DB:
        return f"{_capitalised(what)} is {chosen} (previously {old})"
    if chosen is not None and chosen == old:
        return (
            f"{_capitalised(what)} stays {old} ({conflict.explanation.lower()}); "
            f"{new} was not adopted"
        )
    return f"{_capitalised(what)} is {chosen} (recently updated from {old})"


def review_flag_to_dict(flag: ReviewFlag) -> dict[str, Any]:
    return {
        "memory_id": flag.memory_id,
        "premise_id": flag.premise_id,
        "conflict_id": flag.conflict_id,
        "reason": flag.reason,
        "flagged_at": flag.flagged_at,
        "cleared_at": flag.cleared_at,
    }


def _conflict_fields(conflicts: Iterable[Conflict]) -> dict[str, Any]:
    listed = list(conflicts)
    pending = [c for c in listed if c.status is ConflictStatus.PENDING]
    data: dict[str, Any] = {
        "conflicts_detected": [c.to_dict() for c in listed],
        "disambiguation_required": bool(pending),
    }
    if pending:
        data["options"] = list(dict.fromkeys(o for c in pending for o in c.options))
    return data


@dataclass(slots=True)
class FactAssertion:
    """The result of a fact write: the fact as stored, the conflicts this write
    detected or settled, and the memories flagged because a premise changed.

    ``fact`` is the asserted fact after resolution (for ``resolve_conflict``,
    the chosen one); if it lost, its ``status`` says so.
    """

    fact: Fact
    conflicts: list[Conflict] = field(default_factory=list)
    flagged: list[ReviewFlag] = field(default_factory=list)

    @property
    def disambiguation_required(self) -> bool:
        return any(c.status is ConflictStatus.PENDING for c in self.conflicts)

    @property
    def response(self) -> str:
        if not self.conflicts:
            f = self.fact
            return f"Noted: {f.subject} {predicate_words(f.predicate)} {f.object}"
        return ". ".join(conflict_sentence(c) for c in self.conflicts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "response": self.response,
            "fact": record_to_dict(self.fact),
            **_conflict_fields(self.conflicts),
            "flagged_for_review": [review_flag_to_dict(f) for f in self.flagged],
        }


class FactList(list[Fact]):
    """Facts returned by a read, with the conflicts that touch them (``conflicts``).

    It is a ``list`` in every other respect, so code written for
    ``list[Fact]`` keeps working.
    """

    conflicts: list[Conflict]

    def __init__(self, facts: Iterable[Fact] = (), conflicts: Iterable[Conflict] = ()) -> None:
        super().__init__(facts)
        self.conflicts = list(conflicts)

    def to_dict(self) -> dict[str, Any]:
        return {"facts": [record_to_dict(f) for f in self], **_conflict_fields(self.conflicts)}
