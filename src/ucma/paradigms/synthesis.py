"""Seed 000's conflict resolution matrix, as ``synthesize`` applies it; pure, no I/O.

- **Fact contradicts prediction** (trust the fact): a current fact stating what the
  predicted action leads to (``subject`` the action, ``predicate`` "leads to",
  "results in", "causes" or "produces", ``object`` the outcome, optionally "... when
  <condition> = <value> and ..." as promoted patterns say it) in a context compatible
  with the asked one, with another outcome than the predicted one: the prediction's
  confidence is multiplied by 0.5 and a caveat names the fact.
- **Strategy contradicts self-model** (trust the self-model): a strategy of a weak
  domain keeps half its score and is marked ``deprioritised``.
- **Several strategies apply**: ranked by competence x success rate.
- **Uncertain prediction**: a most likely outcome whose credible interval is wide, or
  that rests on few observations, earns the caveat to widen the interval and seek more
  facts (nothing is predicted from nothing: no observation, no prediction to trust).
- **Old fact contradicts new fact**: supersession settles it when the facts are
  written (``ucma.conflicts``); two current facts that still disagree (same subject and
  predicate, other objects: disputed, or a multi-valued predicate) are both shown, and
  the caveat says which to prefer: the more recent, unless the older one's source is
  clearly more reliable (``source_reliability`` at least ``RELIABILITY_GAP`` higher).

Goal conflicts with facts (flag, suspend) are settled when memory is written
(``ucma.engine.goals``): ``synthesize`` reads active goals only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

from ucma.paradigms.predictive_records import Simulation
from ucma.paradigms.procedural import success_rate
from ucma.paradigms.synthesis_records import RankedStrategy
from ucma.paradigms.world_model import context_weight, normal, normal_context
from ucma.retrieval.confidence import source_reliability
from ucma.types import Fact, StrategyMatch

__all__ = [
    "CONTRADICTED_FACTOR",
    "OUTCOME_PREDICATES",
    "RELIABILITY_GAP",
    "WEAK_FACTOR",
    "contradicting_facts",
    "fact_caveats",
    "rank_strategies",
    "stated_outcome",
    "uncertainty_caveat",
    "with_contradictions",
]

CONTRADICTED_FACTOR = 0.5
"""A prediction a fact contradicts keeps this share of its confidence (seed 000)."""
WEAK_FACTOR = 0.5
"""A strategy of a weak domain keeps this share of its score (seed 000)."""
RELIABILITY_GAP = 0.25
"""An older fact is preferred to a newer one only when its source is this much more
reliable (``source_reliability``)."""
OUTCOME_PREDICATES = frozenset({"leads to", "results in", "causes", "produces"})
"""Predicates by which a fact states what an action leads to."""


def stated_outcome(fact: Fact) -> tuple[str, dict[str, str]] | None:
    """The outcome a fact states of its subject (an action) and the context it states
    it in, both normal; None for a fact of another predicate. "error page when logged
    in = false" is ("error page", {"logged in": "false"})."""
    if normal(fact.predicate) not in OUTCOME_PREDICATES:
        return None
    text = fact.object
    context: dict[str, str] = {}
    head, sep, tail = text.rpartition(" when ")
    if sep:
        pairs = [part.partition(" = ") for part in tail.split(" and ")]
        if all(eq and key.strip() and value.strip() for key, eq, value in pairs):
            text = head
            context = {normal(k): normal(v) for k, _, v in pairs}
    return normal(text), context


def contradicting_facts(prediction: Simulation, facts: Iterable[Fact]) -> list[Fact]:
    """The current facts about the prediction's action, stated for a context
    compatible with the asked one, whose outcome is not the predicted one."""
    if prediction.predicted is None:
        return []
    action = normal(prediction.action)
    predicted = normal(prediction.predicted)
    asked = normal_context(prediction.context)
    found: dict[str, Fact] = {}
    for fact in facts:
        if not fact.is_current or normal(fact.subject) != action:
            continue
        stated = stated_outcome(fact)
        if stated is None:
            continue
        outcome, context = stated
        if outcome != predicted and context_weight(context, asked) > 0:
            found.setdefault(fact.id, fact)
    return list(found.values())


def with_contradictions(
    prediction: Simulation, contradicting: Sequence[Fact]
) -> tuple[Simulation, list[str]]:
    """The prediction as the matrix leaves it: confidence x 0.5 (once, however many
    facts contradict it) and a caveat for each fact; unchanged without any."""
    if not contradicting:
        return prediction, []
    caveats = [
        f"prediction may conflict with known fact: {fact.content} (trusting the fact)"
        for fact in contradicting
    ]
    lowered = dataclasses.replace(
        prediction,
        confidence=prediction.confidence * CONTRADICTED_FACTOR,
        caveats=(*prediction.caveats, *caveats),
    )
    return lowered, caveats


def uncertainty_caveat(prediction: Simulation, width: float, support: float) -> str | None:
    """Seed 000's "uncertain prediction: widen the confidence interval, seek more
    facts", when the most likely outcome's interval is wider than ``width`` or the
    prediction rests on fewer than ``support`` observations; None otherwise."""
    if prediction.predicted is None:
        return (
            f"nothing observed of {prediction.action!r} in a compatible context: no "
            "prediction; seek facts about it before acting"
        )
    best = prediction.outcomes[0]
    if best.high - best.low <= width and prediction.support >= support:
        return None
    return (
        f"uncertain prediction for {prediction.action!r}: {prediction.predicted!r} at "
        f"{prediction.confidence:.2f}, between {best.low:.2f} and {best.high:.2f} over "
        f"{prediction.support:g} observations; treat the interval as wide and seek more "
        "facts"
    )


def rank_strategies(
    matches: Sequence[StrategyMatch],
    competence_of: Callable[[str | None], float],
    weak: Iterable[str],
) -> list[RankedStrategy]:
    """Rank by competence x success rate, a weak domain's at half (ties: the more
    relevant first, then the id)."""
    weak_keys = {normal(w) for w in weak}
    ranked = []
    for match in matches:
        p = match.procedure
        competence = competence_of(p.domain or None)
        rate = success_rate(p)
        demoted = bool(p.domain) and normal(p.domain) in weak_keys
        score = competence * rate * (WEAK_FACTOR if demoted else 1.0)
        ranked.append(
            RankedStrategy(
                procedure_id=p.id,
                name=p.name,
                text=p.content,
                domain=p.domain or None,
                kind=p.procedure_type.value,
                steps=tuple(s.description for s in p.steps),
                success_rate=rate,
                applications=p.execution_count,
                competence=competence,
                score=score,
                deprioritised=demoted,
                relevance=match.relevance,
                grounding=match.grounding,
            )
        )
    ranked.sort(key=lambda r: (-r.score, -r.relevance, r.procedure_id))
    return ranked


def _moment(fact: Fact) -> float:
    if fact.valid_from is not None:
        return fact.valid_from
    return fact.recorded_at if fact.recorded_at is not None else fact.created_at


def fact_caveats(facts: Sequence[Fact], functional: Callable[[str], bool]) -> list[str]:
    """For each (subject, single-valued predicate) two or more current facts give
    different objects for, which one to prefer and why."""
    groups: dict[tuple[str, str], list[Fact]] = {}
    for fact in facts:
        if fact.is_current and functional(fact.predicate):
            groups.setdefault((normal(fact.subject), normal(fact.predicate)), []).append(fact)
    out = []
    for group in groups.values():
        objects: dict[str, Fact] = {}
        for fact in sorted(group, key=_moment, reverse=True):
            objects.setdefault(normal(fact.object), fact)
        if len(objects) < 2:
            continue
        newest, *older = list(objects.values())
        chosen = newest
        for other in older:
            if source_reliability(other) - source_reliability(chosen) >= RELIABILITY_GAP:
                chosen = other
        rest = [f for f in objects.values() if f is not chosen]
        why = (
            "the more recent"
            if chosen is newest
            else "older, but from a clearly more reliable source"
        )
        out.append(
            f"facts disagree on {chosen.subject} {chosen.predicate}: preferring "
            f"{chosen.object!r} ({why}) over " + ", ".join(repr(f.object) for f in rest)
        )
    return out
