"""Opinion evolution, pure (seed 000, Conflict Resolution Matrix: "Belief
contradicts new evidence: apply opinion evolution rules; gradual belief update,
not sudden reversal").

The rule, with ``rate`` r and evidence weight w in (0, 1] (``OpinionConfig``):

- evidence for an opinion moves its confidence c a share of the way to 1:
  ``c + r * w * (1 - c)``; it only approaches 1 (no opinion becomes certain);
- evidence against it takes a share of it away: ``c * (1 - r * w)``; it only
  approaches 0;
- an opinion whose confidence falls below ``replace_below`` is replaced by the
  stance the evidence stated, formed at the initial confidence, and kept as
  history (``Opinion.replaced_by``).

Weights: evidence that merely agrees or disagrees counts ``plain_weight``; a
change its holder states ("switched to", "no longer", "now prefers") counts
``change_weight``. With the defaults (r 0.5, plain 0.5, change 1.0, replace
below 0.35, initial 0.6), one plain contrary statement never replaces an
opinion held at 0.47 or more and two replace one held at 0.6; a stated change
replaces an opinion held below 0.7, and a firmer one (reinforced twice) needs a
second: belief moves by evidence, in steps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ucma.config import OpinionConfig

__all__ = [
    "PREFERENCE_PREDICATES",
    "Evolution",
    "evolve",
    "opinion_key",
    "reinforced",
    "stance_of_change",
    "weakened",
]

PREFERENCE_PREDICATES = frozenset(
    {"prefers", "likes", "loves", "enjoys", "hates", "dislikes", "favorite", "favourite"}
)
"""Predicates of the rule extractor's claims that state an opinion of their subject."""

_KEY = re.compile(r"[^\w]+")

# "switched to X", "moved over to X", "now prefers X", "went with X": the stance a
# stated change arrives at (the rest of the sentence, up to a clause break).
_CHANGE_TO = re.compile(
    r"\b(?:switched|moved|changed|converted|went|migrated|swapped|turned)\s+"
    r"(?:over\s+|back\s+)?(?:to|with)\s+(?P<to>[^.;!?]+)"
    r"|\bnow\s+(?:prefers?|likes?|loves?|uses?|wants?)\s+(?P<now>[^.;!?]+)",
    re.IGNORECASE,
)
_TRAILING = re.compile(r"\s+(?:instead|now|these days|lately|from now on)\s*$", re.IGNORECASE)


def opinion_key(text: str) -> str:
    """``text`` folded for lookups: lower case, runs of punctuation and spaces as one space."""
    return _KEY.sub(" ", text.casefold()).strip()


def reinforced(confidence: float, weight: float, rate: float) -> float:
    """Confidence after evidence for the opinion: a share of the way to 1."""
    return confidence + rate * weight * (1.0 - confidence)


def weakened(confidence: float, weight: float, rate: float) -> float:
    """Confidence after evidence against the opinion: a share of it taken away."""
    return confidence * (1.0 - rate * weight)


@dataclass(frozen=True, slots=True)
class Evolution:
    """One step of the rule: the new confidence and whether the opinion is replaced."""

    confidence: float
    replaced: bool


def evolve(confidence: float, supports: bool, weight: float, config: OpinionConfig) -> Evolution:
    """Apply one piece of evidence of ``weight`` (in (0, 1]) to ``confidence``."""
    if not 0.0 < weight <= 1.0:
        raise ValueError(f"evidence weight must be in (0, 1], got {weight!r}")
    if supports:
        return Evolution(reinforced(confidence, weight, config.rate), False)
    after = weakened(confidence, weight, config.rate)
    return Evolution(after, after < config.replace_below)


def stance_of_change(text: str) -> str | None:
    """The stance a stated change arrives at ("Alice switched to light mode" ->
    "light mode"), or None when the text states no such change."""
    match = _CHANGE_TO.search(text)
    if match is None:
        return None
    stance = (match.group("to") or match.group("now") or "").strip()
    stance = _TRAILING.sub("", stance).strip(" ,")
    return stance or None
