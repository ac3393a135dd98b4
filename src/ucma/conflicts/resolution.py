"""Seed 002's conflict decision tree: pure functions, no I/O.

Two beliefs about one functional (subject, predicate) with different values
go through the tree, in order, with thresholds from ``ConflictConfig``::

    memory_vs_db?                      -> trust_db         (memory decays x0.5)
    existing confidence < minimum?     -> replace_low_confidence (plain replacement)
    |valid-time gap| > 30 days?        -> keep_newest      (temporal; older superseded)
    newer, says it is a change, from
    an equally reliable source?        -> keep_newest      (temporal; older superseded)
    |confidence gap| > 0.2?            -> keep_highest_confidence (loser x0.8, conflicted)
    |reinforcement gap| >= 3?          -> keep_most_reinforced (loser conflicted)
    newer, same source, old value
    never confirmed?                   -> keep_newest      (temporal; older superseded)
    newer, more confident and more
    reinforced, all at once?           -> keep_newest      (value_mismatch; supersede_old)
    otherwise                          -> ask_user

The two "clear later statement" rules read seed 002's temporal rule as its
intent: a value that changed is not a contradiction. Thirty days is the gap at
which age alone settles it; a newer statement settles it sooner when it says
so itself ("now", "moved to", "as of 2026": ``Belief.change``) and comes from
a source at least as reliable (``Belief.reliability``: first-hand statements
over inferences over generated text), or when the same source simply states a
new value later (a person correcting their own record) and the old value was
stated once, never confirmed (a confirmed value needs the tree's other rules).
What stays ambiguous is what the seed's example 3 describes: values at about
the same time, from different sources or with the old one better confirmed,
with similar confidence.

The agreement rule (second to last) reconciles seed 002's worked example 2
with its tree: there, the newer value is also more confident (0.85 vs 0.75)
and more reinforced (2 vs 1), no single gap crosses its threshold, and the
seed still expects ``supersede_old``. When every signal points the same way
nothing is ambiguous; example 3, where reinforcement ties (2 vs 2), still
asks the user.

A belief's time is its valid-from time: when the information dates from, so
a late report of an old value loses to the newer one it contradicts.
Confidence gaps are compared after rounding to 9 decimals, so 0.85 - 0.65 is
exactly 0.2 (not above the threshold) as a person would read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ucma.config import ConflictConfig
from ucma.types import ConflictType, FactStatus, ResolutionStrategy

__all__ = [
    "Belief",
    "Decision",
    "Side",
    "decide_memory_vs_db",
    "decide_value_mismatch",
]

_DAY = 86_400.0

TRUST_DB_EXPLANATION = (
    "Database is the authoritative source of truth. Memory has been marked for decay."
)


class Side:
    """Which belief a decision keeps."""

    EXISTING = "existing"
    NEW = "new"


@dataclass(frozen=True, slots=True)
class Belief:
    """What the tree needs to know about one side of a conflict."""

    value: str
    confidence: float
    reinforcement_count: int
    observed_at: float
    source: str = ""
    reliability: int = 0
    change: bool = False


@dataclass(frozen=True, slots=True)
class Decision:
    """The tree's verdict.

    ``winner`` is ``Side.EXISTING``, ``Side.NEW`` or None (ask the user).
    The loser takes ``loser_status`` and has its confidence multiplied by
    ``loser_confidence_factor``. ``chosen_value`` is None while the user has
    to choose.
    """

    conflict_type: ConflictType
    strategy: ResolutionStrategy
    action: str
    winner: str | None
    chosen_value: str | None
    loser_status: FactStatus | None
    loser_confidence_factor: float
    rationale: str

    @property
    def asks_user(self) -> bool:
        return self.winner is None


def _gap(a: float, b: float) -> float:
    return round(abs(a - b), 9)


def decide_value_mismatch(existing: Belief, new: Belief, config: ConflictConfig) -> Decision:
    """Resolve two memories with different values for one functional predicate."""
    if existing.confidence < config.min_confidence_for_conflict:
        return Decision(
            ConflictType.VALUE_MISMATCH,
            ResolutionStrategy.REPLACE_LOW_CONFIDENCE,
            "replace",
            Side.NEW,
            new.value,
            FactStatus.SUPERSEDED,
            1.0,
            f"Existing value had confidence {existing.confidence:.2f}, below the "
            f"{config.min_confidence_for_conflict:.2f} needed to dispute a new value; replaced",
        )

    days = abs(new.observed_at - existing.observed_at) / _DAY
    if days > config.temporal_threshold_days:
        newest = Side.NEW if new.observed_at > existing.observed_at else Side.EXISTING
        return Decision(
            ConflictType.TEMPORAL,
            ResolutionStrategy.KEEP_NEWEST,
            "supersede_old",
            newest,
            (new if newest == Side.NEW else existing).value,
            FactStatus.SUPERSEDED,
            1.0,
            f"More recent information ({days:.0f} days newer)",
        )

    if _explicit_change(existing, new, config):
        return _newer_wins(
            new,
            f"A later statement says the value changed ({days:.1f} days newer, from an "
            "equally reliable source)",
        )

    if _gap(existing.confidence, new.confidence) > config.confidence_threshold:
        high = Side.NEW if new.confidence > existing.confidence else Side.EXISTING
        winner, loser = (new, existing) if high == Side.NEW else (existing, new)
        return Decision(
            ConflictType.VALUE_MISMATCH,
            ResolutionStrategy.KEEP_HIGHEST_CONFIDENCE,
            "decay_lower",
            high,
            winner.value,
            FactStatus.CONFLICTED,
            config.loser_decay_factor,
            f"Higher confidence ({winner.confidence:.2f} vs {loser.confidence:.2f})",
        )

    reinforcement_gap = abs(existing.reinforcement_count - new.reinforcement_count)
    if reinforcement_gap >= config.reinforcement_threshold:
        more = Side.NEW if new.reinforcement_count > existing.reinforcement_count else Side.EXISTING
        winner, loser = (new, existing) if more == Side.NEW else (existing, new)
        return Decision(
            ConflictType.VALUE_MISMATCH,
            ResolutionStrategy.KEEP_MOST_REINFORCED,
            "decay_lower",
            more,
            winner.value,
            FactStatus.CONFLICTED,
            1.0,
            f"More reinforced ({winner.reinforcement_count} vs {loser.reinforcement_count})",
        )

    if _restated_by_source(existing, new):
        return _newer_wins(
            new,
            f"A later statement from the same source ({new.source}) replaces its earlier "
            f"value ({days:.1f} days newer)",
        )

    agreeing = _agreeing_side(existing, new)
    if agreeing is not None:
        winner, loser = (new, existing) if agreeing == Side.NEW else (existing, new)
        return Decision(
            ConflictType.VALUE_MISMATCH,
            ResolutionStrategy.KEEP_NEWEST,
            "supersede_old",
            agreeing,
            winner.value,
            FactStatus.SUPERSEDED,
            1.0,
            "More recent information, also more confident "
            f"({winner.confidence:.2f} vs {loser.confidence:.2f}) and more reinforced "
            f"({winner.reinforcement_count} vs {loser.reinforcement_count})",
        )

    return Decision(
        ConflictType.VALUE_MISMATCH,
        ResolutionStrategy.ASK_USER,
        "ask_user",
        None,
        None,
        None,
        1.0,
        "Ambiguous conflict - need user input: both recent "
        f"({days:.0f} days apart), similar confidence ({existing.confidence:.2f} vs "
        f"{new.confidence:.2f}), similar reinforcement ({existing.reinforcement_count} vs "
        f"{new.reinforcement_count})",
    )


def _newer_wins(new: Belief, rationale: str) -> Decision:
    """A clear later statement supersedes the existing value (seed 002's temporal rule)."""
    return Decision(
        ConflictType.TEMPORAL,
        ResolutionStrategy.KEEP_NEWEST,
        "supersede_old",
        Side.NEW,
        new.value,
        FactStatus.SUPERSEDED,
        1.0,
        rationale,
    )


def _explicit_change(existing: Belief, new: Belief, config: ConflictConfig) -> bool:
    """The newer belief says it is a change, its source is at least as reliable,
    and it is not clearly less confident than what it replaces."""
    return (
        new.change
        and new.observed_at > existing.observed_at
        and new.reliability >= existing.reliability
        and round(existing.confidence - new.confidence, 9) <= config.confidence_threshold
    )


def _restated_by_source(existing: Belief, new: Belief) -> bool:
    """The same source states a new value later, and the old value was stated
    once, never confirmed."""
    return (
        bool(new.source)
        and new.source == existing.source
        and new.observed_at > existing.observed_at
        and new.reliability >= existing.reliability
        and existing.reinforcement_count == 0
    )


def _agreeing_side(existing: Belief, new: Belief) -> str | None:
    """The side that is newer, more confident and more reinforced, if one is all three."""
    for side, a, b in ((Side.NEW, new, existing), (Side.EXISTING, existing, new)):
        if (
            a.observed_at > b.observed_at
            and a.confidence > b.confidence
            and a.reinforcement_count > b.reinforcement_count
        ):
            return side
    return None


def decide_memory_vs_db(memory: Belief, db_value: str, config: ConflictConfig) -> Decision:
    """Strategy 1: the database is the source of truth; the memory decays."""
    return Decision(
        ConflictType.MEMORY_VS_DB,
        ResolutionStrategy.TRUST_DB,
        "decay_memory",
        Side.NEW,
        db_value,
        FactStatus.CONFLICTED,
        config.conflict_decay_factor,
        TRUST_DB_EXPLANATION,
    )
