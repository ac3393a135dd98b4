"""Temporal level (seed 003 R1), initial salience (R2) and outcome dampening (R17).

Temporal levels: 1 immediate (hours), 2 situational (days to weeks), 3 seasonal (months),
4 identity (years). The level sets the decay rate (R19, see ``ucma.memory.retention``) and
how strongly outcomes move salience (R17, ``TEMPORAL_DAMPENING``).

Level selection (``select_temporal_level``)
-------------------------------------------
Markers are whole words or phrases, matched case-insensitively, in two tiers:

- qualifiers state a duration outright:
  level 1 "right now", "currently", "this session", "at the moment", "for now", "today" ...;
  level 2 "this week", "this month", "these days", "lately", "recently" ...;
  level 3 "typically", "usually", "every <period>", "each <period>", "regularly", "weekly" ...;
  level 4 "always", "never";
- topical words only suggest one:
  level 2 "working on", "project", "current", "ongoing", "in progress" ...;
  level 3 "pattern", "habit", "routine";
  level 4 "is a", "values", "believes", "prefers", "likes", "favorite", "my name is" ...

Level-4 markers (qualifiers and topical) count only for the content types ``fact`` and
``preference`` (R1: "fact (about identity), preference (permanent)"): "the build never
finished" is an event, not an identity. All other markers count for every content type.

Precedence: if any qualifier matches, the lowest level among the matching qualifiers wins;
otherwise the lowest level among the matching topical words; otherwise the content type's
default. Qualifiers beat topical words because they state the duration ("usually works on
projects" is a recurring pattern, level 3). The lowest level wins a tie of evidence because a
wrong promotion costs more than a wrong demotion: a level-4 memory decays 1 % a year (R19),
moves at a tenth of the rate on outcomes (R17) and is never pruned automatically (R21), while a
memory placed too low decays sooner and is re-learned if it is observed again.

Type defaults: ``preference`` 4 (R1 lists permanent preferences at level 4; a preference scoped
in time carries a marker that overrides this), ``goal`` 2 (R1 lists goals at level 2),
``fact``, ``event`` and ``observation`` 1 (R1's default).

Initial salience (``initial_salience``)
---------------------------------------
R2's scale is 1.0 explicit user statement, 0.8 strong observation with evidence, 0.6 reasonable
inference, 0.4 weak signal or guess, 0.2 background context. Rules, first match wins:

1. provenance ``user_stated`` or ``observed`` and the text is an explicit first-person
   statement ("I want", "I'd like", "I prefer", "I need", "remember that", "don't forget",
   "my ... is/are") -> 1.0;
2. ``user_stated`` otherwise -> 0.8: the user's own words are strong evidence about the user;
3. ``inferred`` -> 0.6;
4. ``generated`` (LLM output) -> 0.4: a guess until something confirms it;
5. ``observed`` otherwise -> the seed 001 heuristic ``importance`` passed in (DESIGN: importance
   is base salience), clamped to R2's band for observations, [0.2, 0.8]: an observation is at
   least background context and at most a strong observation, so it never outranks an explicit
   statement. The seed heuristic itself lies in [0.15, 0.74]; the clamp also bounds the score
   of an optional LLM importance classifier.

Rule 1 also fires for ``observed`` text because user messages usually arrive through
``observe(..., source="user")``; the engine should record the provenance ``user_stated`` when it
knows the text is the user's own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from types import MappingProxyType
from typing import Literal, get_args

from ucma.errors import ValidationError

__all__ = [
    "CONTENT_TYPES",
    "ContentType",
    "PROVENANCES",
    "SALIENCE_BACKGROUND",
    "SALIENCE_EXPLICIT",
    "SALIENCE_INFERRED",
    "SALIENCE_STRONG",
    "SALIENCE_WEAK",
    "TEMPORAL_DAMPENING",
    "TEMPORAL_LEVEL_NAMES",
    "initial_salience",
    "is_explicit_statement",
    "select_temporal_level",
    "temporal_dampening",
]

TEMPORAL_LEVEL_NAMES: MappingProxyType[int, str] = MappingProxyType(
    {1: "immediate", 2: "situational", 3: "seasonal", 4: "identity"}
)

# R17's table. R15 writes the dampening as 1 / temporal_level, which gives 0.333 and 0.25 for
# levels 3 and 4; R17's explicit table (0.25, 0.1) wins because it is the rule that names the
# values and it keeps identity memories an order of magnitude more stable.
TEMPORAL_DAMPENING: MappingProxyType[int, float] = MappingProxyType(
    {1: 1.0, 2: 0.5, 3: 0.25, 4: 0.1}
)

ContentType = Literal["fact", "preference", "event", "goal", "observation"]
"""Seed 003 R1's content types: what an input is, read for its temporal level."""
CONTENT_TYPES: frozenset[str] = frozenset(get_args(ContentType))
PROVENANCES: frozenset[str] = frozenset({"observed", "user_stated", "inferred", "generated"})

SALIENCE_EXPLICIT = 1.0
SALIENCE_STRONG = 0.8
SALIENCE_INFERRED = 0.6
SALIENCE_WEAK = 0.4
SALIENCE_BACKGROUND = 0.2

_IDENTITY_TYPES = frozenset({"fact", "preference"})
_TYPE_DEFAULT_LEVEL = MappingProxyType(
    {"preference": 4, "goal": 2, "fact": 1, "event": 1, "observation": 1}
)

_PERIODS = (
    r"(?:\d+\s+)?(?:other\s+)?"
    r"(?:day|morning|afternoon|evening|night|week|weekend|fortnight|month|quarter|year|"
    r"season|sprint|release|cycle|time|monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday)s?"
)


def _phrases(words: Iterable[str]) -> re.Pattern[str]:
    """One case-insensitive pattern matching any of ``words`` as whole words or phrases."""
    ordered = sorted(words, key=len, reverse=True)
    alternatives = "|".join(word.replace(" ", r"\s+") for word in ordered)
    return re.compile(rf"(?<![\w'])(?:{alternatives})(?![\w'])", re.IGNORECASE)


_QUALIFIERS: tuple[tuple[int, re.Pattern[str]], ...] = (
    (1, _phrases([
        r"right now", r"currently", r"this session", r"this conversation", r"at the moment",
        r"for now", r"just now", r"at present", r"today", r"tonight", r"this morning",
        r"this afternoon", r"this evening",
    ])),
    (2, _phrases([
        r"this week", r"this month", r"this sprint", r"these days", r"lately", r"recently",
        r"for the time being", r"for a few days", r"for a few weeks", r"next week",
    ])),
    (3, _phrases([
        r"typically", r"usually", r"generally", r"normally", r"regularly", r"routinely",
        r"habitually", r"tends? to", r"daily", r"weekly", r"monthly", r"quarterly",
        r"yearly", r"annually", rf"(?:every|each)\s+{_PERIODS}",
    ])),
    (4, _phrases([r"always", r"never"])),
)  # fmt: skip

_TOPICAL: tuple[tuple[int, re.Pattern[str]], ...] = (
    (2, _phrases([
        r"working on", r"works on", r"work on", r"projects?", r"current", r"ongoing",
        r"in progress", r"focus(?:ing|ed)? on",
    ])),
    (3, _phrases([r"patterns?", r"habits?", r"routines?"])),
    (4, _phrases([
        r"is an?", r"am an?", r"values", r"believes?", r"beliefs?",
        r"prefers?", r"preferences?", r"likes", r"loves", r"hates", r"dislikes",
        r"favou?rite", r"identity", r"identifies as", r"personality", r"principles?",
        r"(?:my|their|his|her|user's) name is",
    ])),
)  # fmt: skip

_EXPLICIT_STATEMENT = re.compile(
    r"(?<![\w'])(?:"
    r"i\s+(?:really\s+|strongly\s+|do\s+|always\s+|also\s+)?(?:want|prefer|need)"
    r"|i(?:'d|\s+would)\s+(?:like|prefer|rather)"
    r"|(?:please\s+)?remember\s+(?:that|this)"
    r"|don't\s+forget|do\s+not\s+forget"
    r"|my(?:\s+[\w'-]+){1,4}?\s+(?:is|are)"
    r")(?![\w'])",
    re.IGNORECASE,
)


def _normalise(content: str) -> str:
    return content.replace("\u2019", "'").replace("\u2018", "'")


def _check_level(temporal_level: object) -> int:
    if (
        isinstance(temporal_level, bool)
        or not isinstance(temporal_level, int)
        or temporal_level not in TEMPORAL_DAMPENING
    ):
        raise ValidationError(f"temporal_level must be 1, 2, 3 or 4, got {temporal_level!r}")
    return temporal_level


def _matching_levels(
    tier: tuple[tuple[int, re.Pattern[str]], ...], text: str, identity_allowed: bool
) -> list[int]:
    return [
        level
        for level, pattern in tier
        if (level != 4 or identity_allowed) and pattern.search(text)
    ]


def select_temporal_level(content: str, content_type: str, *, default: int | None = None) -> int:
    """The temporal level (1 to 4) of a new memory, by R1 and the module's precedence.

    ``content_type`` is one of ``CONTENT_TYPES`` (case-insensitive); anything else raises
    ``ValidationError``. ``default`` replaces the type's default level when no marker
    matches (an observation the extractor read a lasting attribute from is a fact).
    """
    if not isinstance(content, str):
        raise ValidationError(f"content must be a str, got {type(content).__name__}")
    kind = content_type.strip().lower() if isinstance(content_type, str) else None
    if kind not in CONTENT_TYPES:
        raise ValidationError(
            f"unknown content_type {content_type!r}; use one of {sorted(CONTENT_TYPES)}"
        )
    text = _normalise(content)
    identity_allowed = kind in _IDENTITY_TYPES
    for tier in (_QUALIFIERS, _TOPICAL):
        levels = _matching_levels(tier, text, identity_allowed)
        if levels:
            return min(levels)
    return _TYPE_DEFAULT_LEVEL[kind] if default is None else _check_level(default)


def is_explicit_statement(content: str) -> bool:
    """Whether ``content`` is an explicit first-person statement in R2's sense."""
    if not isinstance(content, str):
        raise ValidationError(f"content must be a str, got {type(content).__name__}")
    return _EXPLICIT_STATEMENT.search(_normalise(content)) is not None


def initial_salience(content: str, provenance: str, importance: float) -> float:
    """Initial (base) salience in [0.2, 1.0] by R2; see the module docstring for the rules.

    ``provenance`` is one of ``PROVENANCES``; ``importance`` is the heuristic importance in
    [0, 1], used for observations that no explicit rule covers. Raises ``ValidationError``
    for an unknown provenance or an importance outside [0, 1].
    """
    if not isinstance(provenance, str) or provenance not in PROVENANCES:
        raise ValidationError(
            f"unknown provenance {provenance!r}; use one of {sorted(PROVENANCES)}"
        )
    if (
        isinstance(importance, bool)
        or not isinstance(importance, int | float)
        or not math.isfinite(importance)
        or not 0.0 <= importance <= 1.0
    ):
        raise ValidationError(f"importance must be a number in [0, 1], got {importance!r}")
    if not isinstance(content, str):
        raise ValidationError(f"content must be a str, got {type(content).__name__}")
    if provenance in ("user_stated", "observed") and is_explicit_statement(content):
        return SALIENCE_EXPLICIT
    if provenance == "user_stated":
        return SALIENCE_STRONG
    if provenance == "inferred":
        return SALIENCE_INFERRED
    if provenance == "generated":
        return SALIENCE_WEAK
    return min(SALIENCE_STRONG, max(SALIENCE_BACKGROUND, float(importance)))


def temporal_dampening(temporal_level: int) -> float:
    """R17's multiplier on outcome-driven salience changes for ``temporal_level``."""
    return TEMPORAL_DAMPENING[_check_level(temporal_level)]
