"""Template-built answers over retrieved memories, with conflicts resolved out loud.

``compose_answer`` is pure: the engine retrieves, replaces superseded facts
by the current values, consults sources of truth, and hands everything here.
Seed 000's conflict resolution matrix, for the memory kinds UCMA stores:

- old fact contradicts new fact: use the current value (the decision tree
  already chose it), say what it replaced ("(recently updated from X)"), or
  the database's ("Status is shipped (previously in_fulfillment)");
- two values still disputed: ask the user (``disambiguation_required`` and
  the options), never pick one silently;
- a conclusion whose premise changed (a learning or fact flagged for
  review): trust the facts, keep the conclusion only with a caveat, and
  count it at half weight (seed 000: "trust fact, flag prediction",
  confidence x 0.5);
- several procedures apply: rank them by competence x success rate
  (``Procedure.ranking_score``);
- uncertain result (confidence below 0.5): say so and ask for more facts.

Confidence is the mean confidence of the facts used (flagged ones at
``review_factor`` weight), halved while a disambiguation is pending; with no
facts, the best hit's ranking score. No LLM is involved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ucma.conflicts.reports import (
    conflict_sentence,
    predicate_words,
    review_flag_to_dict,
)
from ucma.serialization import hit_to_dict, record_to_dict
from ucma.types import (
    Conflict,
    ConflictStatus,
    Fact,
    Hit,
    Learning,
    Procedure,
    ReviewFlag,
)

__all__ = ["Answer", "compose_answer"]

LOW_CONFIDENCE = 0.5
_MAX_FACT_SENTENCES = 5


@dataclass(slots=True)
class Answer:
    """What ``AsyncMemory.answer`` returns; ``to_dict`` is seed 002's response shape."""

    query: str
    response: str
    confidence: float
    facts: list[Fact] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    procedures: list[Procedure] = field(default_factory=list)
    flagged: list[ReviewFlag] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)

    @property
    def disambiguation_required(self) -> bool:
        return any(c.status is ConflictStatus.PENDING for c in self.conflicts)

    @property
    def options(self) -> list[str]:
        pending = [c for c in self.conflicts if c.status is ConflictStatus.PENDING]
        return list(dict.fromkeys(o for c in pending for o in c.options))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "query": self.query,
            "response": self.response,
            "confidence": self.confidence,
            "conflicts_detected": [c.to_dict() for c in self.conflicts],
            "disambiguation_required": self.disambiguation_required,
            "facts": [record_to_dict(f) for f in self.facts],
            "procedures": [record_to_dict(p) for p in self.procedures],
            "flagged_for_review": [review_flag_to_dict(f) for f in self.flagged],
            "caveats": list(self.caveats),
            "memories": [hit_to_dict(h) for h in self.hits],
        }
        if self.disambiguation_required:
            data["options"] = self.options
        return data


def _winning_conflict(fact: Fact, conflicts: Sequence[Conflict]) -> Conflict | None:
    """The latest settled conflict that chose this fact's value."""
    chosen = [
        c
        for c in conflicts
        if c.status in (ConflictStatus.RESOLVED, ConflictStatus.USER_RESOLVED)
        and fact.id in (c.existing_fact_id, c.new_fact_id)
        and c.chosen_value is not None
        and c.chosen_value.strip().lower() == fact.object.strip().lower()
    ]
    return max(chosen, key=lambda c: c.detected_at) if chosen else None


def _fact_sentence(fact: Fact, conflict: Conflict | None, with_subject: bool) -> str:
    if conflict is not None:
        sentence = conflict_sentence(conflict)
        return f"{fact.subject}: {sentence}" if with_subject else sentence
    return f"{fact.subject} {predicate_words(fact.predicate)} {fact.object}"


def compose_answer(
    query: str,
    hits: Sequence[Hit],
    facts: Sequence[Fact],
    conflicts: Sequence[Conflict],
    flags: Mapping[str, ReviewFlag],
    *,
    review_factor: float,
) -> Answer:
    """Build the answer from current facts, the conflicts touching them, and
    the open review flags of the memories involved (see the module docstring)."""
    pending = [c for c in conflicts if c.status is ConflictStatus.PENDING]
    disputed = {i for c in pending for i in (c.existing_fact_id, c.new_fact_id)}
    sentences: list[str] = [conflict_sentence(c) for c in pending]
    used: list[Conflict] = list(pending)
    subjects = {f.subject.strip().lower() for f in facts}
    for fact in facts:
        if fact.id in disputed or len(sentences) >= _MAX_FACT_SENTENCES + len(pending):
            continue
        winning = _winning_conflict(fact, conflicts)
        if winning is not None and winning not in used:
            used.append(winning)
        sentences.append(_fact_sentence(fact, winning, len(subjects) > 1))

    caveats: list[str] = []
    flagged = [flags[h.id] for h in hits if h.id in flags]
    flagged += [flags[f.id] for f in facts if f.id in flags and flags[f.id] not in flagged]
    for hit in hits:
        if hit.id in flags:
            label = hit.memory.title if isinstance(hit.memory, Learning) else hit.content
            caveats.append(f"'{label}' was drawn from a premise that has changed; it needs review")
    fact_ids = {f.id for f in facts}
    others = [
        h for h in hits if h.id not in fact_ids and not isinstance(h.memory, Procedure | Fact)
    ]
    trusted = [h for h in others if h.id not in flags]
    if trusted and len(sentences) < _MAX_FACT_SENTENCES:
        sentences.append(f"From memory: {trusted[0].content}")
    procedures = sorted(
        (h.memory for h in hits if isinstance(h.memory, Procedure)),
        key=lambda p: (-p.ranking_score, p.id),
    )
    if procedures:
        best = procedures[0]
        sentences.append(
            f"Suggested procedure: {best.name} (success rate {best.success_rate:.0%} over "
            f"{best.execution_count} runs)"
        )

    if facts:
        weights = [f.confidence * (review_factor if f.id in flags else 1.0) for f in facts]
        confidence = sum(weights) / len(weights)
    else:
        confidence = max((h.score for h in hits), default=0.0)
    if pending:
        confidence *= 0.5
    confidence = max(0.0, min(1.0, confidence))
    if not sentences:
        response = "I don't have anything about that yet."
    else:
        response = " ".join(s if s.endswith((".", "?", "!")) else f"{s}." for s in sentences)
    if sentences and confidence < LOW_CONFIDENCE and not pending:
        caveats.append("Confidence is low; more facts would help")
    return Answer(
        query=query,
        response=response,
        confidence=confidence,
        facts=list(facts),
        conflicts=used,
        hits=list(hits),
        procedures=procedures,
        flagged=flagged,
        caveats=caveats,
    )
