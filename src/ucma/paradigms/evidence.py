"""What observed statements do to opinions (storage thread, inside the write
transaction of the episodes that state them; the rule is ``ucma.paradigms.opinions``).

For each new statement, in order:

1. a stated preference its holder already holds (same holder, same stance: "Alice
   prefers dark mode" again) reinforces that opinion; so does a near-duplicate
   merged into the memory that states an opinion; with an explicit topic
   (``retain(..., bank="opinion", topic=...)``) the same topic and stance do;
2. otherwise, evidence against: a current opinion whose statement this one
   superseded (the engine's supersession of statements decides that they are about
   the same thing: "Alice switched to light mode" replaces "Alice prefers dark
   mode"), a negated preference ("Alice no longer likes coffee"), or an explicit
   topic held with another stance. It weakens the opinion with the weight of a stated
   change when the text marks one, else the plain weight; below the threshold the
   opinion is replaced by the stance this statement takes, which keeps the topic;
3. otherwise a statement in the opinion bank forms a new opinion, at the initial
   confidence (or the caller's).

Every change appends an event (``opinion.formed``, ``opinion.reinforced``,
``opinion.weakened``, ``opinion.replaced``) in the same transaction, so the
opinions can be rebuilt from the log (``replay_opinions``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ucma.config import OpinionConfig
from ucma.events.log import Event, EventType, is_redacted, record
from ucma.paradigms.opinions import evolve, opinion_key, stance_of_change
from ucma.serialization import opinion_to_dict
from ucma.storage.base import Storage
from ucma.types import Bank, Opinion, OpinionEvidence, OpinionStatus, Scope

__all__ = [
    "MAX_EVIDENCE",
    "PreferenceClaim",
    "StatedOpinion",
    "apply_evidence",
    "apply_statements",
    "form_opinion",
    "opinion_state",
    "replay_opinions",
]

MAX_EVIDENCE = 50
"""Evidence entries an opinion keeps (the newest); the events keep every step."""


def _new_id() -> str:
    return f"op_{uuid.uuid4().hex}"


@dataclass(frozen=True, slots=True)
class PreferenceClaim:
    """A preference read from a statement: who holds it, the predicate, the stance."""

    holder: str
    predicate: str
    stance: str
    negated: bool = False


@dataclass(frozen=True, slots=True)
class StatedOpinion:
    """A new statement as opinion evidence: its memory, text and bank, whether it
    marks a change, the preferences read from it, and the caller's topic and
    confidence when it was retained as an opinion."""

    memory_id: str
    text: str
    bank: Bank
    change: bool
    claims: Sequence[PreferenceClaim] = field(default_factory=tuple)
    topic: str | None = None
    confidence: float | None = None


def form_opinion(
    storage: Storage,
    scope: Scope,
    *,
    topic: str,
    stance: str,
    holder: str,
    confidence: float,
    evidence: OpinionEvidence,
    now: float,
    replaces: str | None = None,
) -> Opinion:
    """Write a new current opinion and its ``opinion.formed`` event."""
    opinion = Opinion(
        id=_new_id(),
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        topic=topic,
        stance=stance,
        holder=holder,
        confidence=confidence,
        evidence=[evidence],
        memory_id=evidence.memory_id,
        replaces=replaces,
        created_at=now,
        updated_at=now,
    )
    storage.opinions.put([opinion])
    record(storage, scope, EventType.OPINION_FORMED, {"opinion": opinion_to_dict(opinion)}, now)
    return opinion


def apply_evidence(
    storage: Storage,
    scope: Scope,
    opinion: Opinion,
    evidence: OpinionEvidence,
    config: OpinionConfig,
    now: float,
    *,
    new_stance: str | None = None,
) -> Opinion:
    """One piece of evidence for or against a current opinion, by the rule; returns
    the opinion current afterwards: the same one, or its replacement when its
    confidence fell below the threshold and ``new_stance`` says what replaces it
    (without one it stays current at its low confidence: ``opinions_below``)."""
    step = evolve(opinion.confidence, evidence.supports, evidence.weight, config)
    updated = replace(
        opinion,
        confidence=step.confidence,
        evidence=[*opinion.evidence, evidence][-MAX_EVIDENCE:],
        updated_at=now,
    )
    kind = EventType.OPINION_REINFORCED if evidence.supports else EventType.OPINION_WEAKENED
    payload = {
        "opinion_id": opinion.id,
        "previous": opinion.confidence,
        "confidence": step.confidence,
        "evidence": evidence.to_dict(),
    }
    if not (step.replaced and new_stance):
        storage.opinions.put([updated])
        record(storage, scope, kind, payload, now)
        return updated
    successor_id = _new_id()
    updated = replace(updated, status=OpinionStatus.REPLACED, replaced_by=successor_id)
    storage.opinions.put([updated])
    record(storage, scope, kind, payload, now)
    record(
        storage,
        scope,
        EventType.OPINION_REPLACED,
        {"opinion_id": opinion.id, "replaced_by": successor_id, "topic": opinion.topic},
        now,
    )
    successor = Opinion(
        id=successor_id,
        user_id=scope.user_id,
        agent_id=scope.agent_id,
        topic=opinion.topic,
        stance=new_stance,
        holder=opinion.holder,
        confidence=config.initial_confidence,
        evidence=[replace(evidence, supports=True)],
        memory_id=evidence.memory_id,
        replaces=opinion.id,
        created_at=now,
        updated_at=now,
    )
    storage.opinions.put([successor])
    record(storage, scope, EventType.OPINION_FORMED, {"opinion": opinion_to_dict(successor)}, now)
    if successor.memory_id:
        storage.memories.set_bank(scope, [successor.memory_id], Bank.OPINION)
    return successor


def apply_statements(
    storage: Storage,
    scope: Scope,
    statements: Sequence[StatedOpinion],
    merged: Mapping[str, str],
    texts: Mapping[str, str],
    config: OpinionConfig,
    now: float,
) -> list[Opinion]:
    """Apply new statements (and near-duplicates merged into older memories:
    ``merged`` maps the attempted id to the memory it reinforced, ``texts`` the
    attempted id to its text) to the scope's opinions; returns the opinions
    changed or formed."""
    changed: list[Opinion] = []
    if merged:
        stated = storage.opinions.current(scope, memory_ids=list(merged.values()))
        by_memory = {o.memory_id: o for o in stated}
        for attempted, existing in merged.items():
            opinion = by_memory.get(existing)
            if opinion is not None:
                evidence = OpinionEvidence(
                    texts.get(attempted, ""), True, config.plain_weight, now, existing
                )
                by_memory[existing] = apply_evidence(storage, scope, opinion, evidence, config, now)
                changed.append(by_memory[existing])
    superseded: dict[str, list[Opinion]] | None = None
    for statement in statements:
        if not _may_bear_on_opinions(statement):
            continue
        if _reinforces(storage, scope, statement, config, now, changed):
            continue
        if superseded is None:
            superseded = _superseded_opinions(storage, scope, config, now)
        against = _against(storage, scope, statement, superseded)
        if against:
            weight = config.change_weight if statement.change else config.plain_weight
            stance = _stance(statement)
            for opinion in against:
                evidence = OpinionEvidence(statement.text, False, weight, now, statement.memory_id)
                changed.append(
                    apply_evidence(
                        storage, scope, opinion, evidence, config, now, new_stance=stance
                    )
                )
            continue
        if statement.bank is Bank.OPINION:
            changed.append(_form_from(storage, scope, statement, config, now))
    return changed


def _may_bear_on_opinions(statement: StatedOpinion) -> bool:
    """Whether the statement can touch an opinion at all: it is in the opinion bank,
    marks a change, or states a preference (the cheap gate of the everyday path)."""
    return statement.bank is Bank.OPINION or statement.change or bool(statement.claims)


def _reinforces(
    storage: Storage,
    scope: Scope,
    statement: StatedOpinion,
    config: OpinionConfig,
    now: float,
    changed: list[Opinion],
) -> bool:
    """Reinforce the current opinions the statement states again; whether any was."""
    found: dict[str, Opinion] = {}
    if statement.topic is not None:
        for opinion in storage.opinions.current(
            scope,
            topic_key=opinion_key(statement.topic),
            stance_key=opinion_key(_stance(statement)),
        ):
            found[opinion.id] = opinion
    for claim in statement.claims:
        if claim.negated:
            continue
        for opinion in storage.opinions.current(
            scope, holder_key=opinion_key(claim.holder), stance_key=opinion_key(claim.stance)
        ):
            found[opinion.id] = opinion
    for opinion in found.values():
        evidence = OpinionEvidence(
            statement.text, True, config.plain_weight, now, statement.memory_id
        )
        changed.append(apply_evidence(storage, scope, opinion, evidence, config, now))
    return bool(found)


def _superseded_opinions(
    storage: Storage, scope: Scope, config: OpinionConfig, now: float
) -> dict[str, list[Opinion]]:
    """Current opinions whose statements newer memories replaced, by the replacing id."""
    current = [
        o for o in storage.opinions.current(scope, limit=config.max_candidates) if o.memory_id
    ]
    if not current:
        return {}
    gone = storage.conflicts.superseded(
        scope, [o.memory_id for o in current if o.memory_id], at=now
    )
    found: dict[str, list[Opinion]] = {}
    for opinion in current:
        by = gone.get(opinion.memory_id or "")
        if by:
            found.setdefault(by, []).append(opinion)
    return found


def _against(
    storage: Storage,
    scope: Scope,
    statement: StatedOpinion,
    superseded: Mapping[str, list[Opinion]],
) -> list[Opinion]:
    """The current opinions the statement goes against."""
    found = {o.id: o for o in superseded.get(statement.memory_id, [])}
    for claim in statement.claims:
        if claim.negated:
            for opinion in storage.opinions.current(
                scope, holder_key=opinion_key(claim.holder), stance_key=opinion_key(claim.stance)
            ):
                found[opinion.id] = opinion
    if statement.topic is not None:
        for opinion in storage.opinions.current(scope, topic_key=opinion_key(statement.topic)):
            found[opinion.id] = opinion
    return list(found.values())


def _stance(statement: StatedOpinion) -> str:
    """The stance a statement takes: what a stated change arrives at, else the
    object of the preference it states, else its text."""
    changed_to = stance_of_change(statement.text)
    if changed_to:
        return changed_to
    positive = [c for c in statement.claims if not c.negated]
    if positive and statement.topic is None:
        return positive[0].stance
    return statement.text.strip().rstrip(".!")


def _form_from(
    storage: Storage, scope: Scope, statement: StatedOpinion, config: OpinionConfig, now: float
) -> Opinion:
    positive = [c for c in statement.claims if not c.negated]
    claim = positive[0] if positive else None
    text = statement.text.strip().rstrip(".!")
    if statement.topic is not None:
        topic = statement.topic
    elif claim is not None:
        topic = f"{claim.holder} {claim.predicate} {claim.stance}"
    else:
        topic = text
    confidence = config.initial_confidence if statement.confidence is None else statement.confidence
    return form_opinion(
        storage,
        scope,
        topic=topic,
        stance=_stance(statement) if statement.topic is not None or claim is None else claim.stance,
        holder=claim.holder if claim is not None else "",
        confidence=confidence,
        evidence=OpinionEvidence(statement.text, True, 1.0, now, statement.memory_id),
        now=now,
    )


def opinion_state(opinion: Opinion) -> dict[str, Any]:
    """What ``replay_opinions`` rebuilds of an opinion, from the live one."""
    return {
        "confidence": opinion.confidence,
        "status": opinion.status.value,
        "replaced_by": opinion.replaced_by,
    }


def replay_opinions(events: Iterable[Event]) -> dict[str, dict[str, Any]]:
    """Each opinion's confidence, status and successor (``opinion_state``'s fields)
    rebuilt from a scope's events alone, in ``seq`` order: what ``replay`` compares
    with the live opinions."""
    state: dict[str, dict[str, Any]] = {}
    for event in events:
        if is_redacted(event):  # its opinion named the person forgotten, and went too
            continue
        payload = event.payload
        if event.type == EventType.OPINION_FORMED:
            o = payload["opinion"]
            state[o["id"]] = {
                "confidence": float(o["confidence"]),
                "status": o["status"],
                "replaced_by": o.get("replaced_by"),
            }
        elif payload.get("opinion_id") not in state:
            continue
        elif event.type in (EventType.OPINION_REINFORCED, EventType.OPINION_WEAKENED):
            state[payload["opinion_id"]]["confidence"] = float(payload["confidence"])
        elif event.type == EventType.OPINION_REPLACED:
            state[payload["opinion_id"]].update(
                status=OpinionStatus.REPLACED.value, replaced_by=payload["replaced_by"]
            )
    return state
