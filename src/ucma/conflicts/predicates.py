"""The predicate registry: which predicates hold one value at a time.

A *functional* predicate has one current value per subject (status, delivery
day, employer, city): asserting a different value contradicts the one held,
and the conflict tree decides. A *multi-valued* predicate accumulates values
(likes, visited, knows): a new value is simply another fact, never a
conflict. Only functional predicates conflict (DESIGN.md "Facts are
bi-temporal").

Names are normalised before lookup (lower case; spaces and hyphens become
underscores), so "Delivery Pref" and "delivery-pref" are one predicate.

Resolution order for a predicate:

1. the caller's configured lists (``ConflictConfig``), functional first;
2. the built-in lists below;
3. a naming heuristic: suffixes such as ``_status``, ``_pref``, ``_date``,
   prefixes such as ``current_``, ``primary_``, ``preferred_`` mark a single
   slot; verbs of accumulation (``likes``, ``visited``, ``has_``, plural
   nouns such as ``hobbies``) mark multi-valued;
4. ``ConflictConfig.unknown_predicates_functional`` (default False), so an
   unrecognised predicate never retires a fact on a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ucma.config import ConflictConfig

__all__ = [
    "DEFAULT_FUNCTIONAL",
    "DEFAULT_MULTI_VALUED",
    "FUNCTIONAL_SUFFIXES",
    "PredicateKind",
    "PredicateRegistry",
    "normalise_predicate",
]


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


DEFAULT_FUNCTIONAL: frozenset[str] = _names(
    """
    status state stage phase delivery_pref delivery_preference delivery_day delivery_date
    employer works_at works_for job_title title role position manager reports_to
    city lives_in home_city hometown resides_in located_in location address country
    current_city current_employer current_role email phone phone_number timezone
    age birthday birth_date date_of_birth born_on born_in spouse married_to partner
    name full_name nickname capital ceo president owner price cost balance amount total
    due_date deadline priority severity assignee assigned_to plan tier subscription
    preferred_language language payment_method shipping_method currency version
    height weight favorite_color favourite_color favorite_food favourite_food
    blood_type gender pronouns marital_status nationality salary rank score
    relationship_status diet
    """
)
"""Predicates with one current value per subject."""

DEFAULT_MULTI_VALUED: frozenset[str] = _names(
    """
    likes dislikes loves hates enjoys visited knows friend_of friends_with has owns
    speaks uses used member_of belongs_to interested_in plays reads watched watches
    attended worked_at lived_in studied studied_at tagged tag tags skill skills
    hobby hobbies allergy allergic_to child_of parent_of sibling_of related_to
    mentions mentioned supports derived_from contains includes part_of depends_on
    wrote authored collaborated_with met ordered bought purchased prefers_genre
    """
)
"""Predicates that accumulate values; they never conflict."""

FUNCTIONAL_SUFFIXES = (
    "_status",
    "_state",
    "_pref",
    "_preference",
    "_date",
    "_day",
    "_time",
    "_id",
    "_name",
    "_address",
    "_email",
    "_phone",
    "_city",
    "_country",
    "_count",
    "_total",
    "_price",
    "_version",
    "_owner",
    "_manager",
    "_level",
    "_tier",
)
_FUNCTIONAL_PREFIXES = ("current_", "primary_", "preferred_", "main_", "default_")
_MULTI_PREFIXES = (
    "has_",
    "likes_",
    "visited_",
    "knows_",
    "owns_",
    "uses_",
    "member_of_",
    "interested_",
    "friend",
)
_SEPARATORS = re.compile(r"[\s\-]+")


def normalise_predicate(predicate: str) -> str:
    """Lower case, surrounding space stripped, inner spaces and hyphens as ``_``."""
    return _SEPARATORS.sub("_", predicate.strip().lower())


@dataclass(frozen=True, slots=True)
class PredicateKind:
    """The registry's verdict on one predicate and where it came from."""

    predicate: str
    functional: bool
    reason: str  # "configured", "built-in", "heuristic" or "default"


class PredicateRegistry:
    """Decides whether a predicate is functional; see the module docstring."""

    def __init__(
        self,
        *,
        functional: Iterable[str] = (),
        multi_valued: Iterable[str] = (),
        unknown_functional: bool = False,
    ) -> None:
        self._functional = frozenset(map(normalise_predicate, functional))
        self._multi = frozenset(map(normalise_predicate, multi_valued)) - self._functional
        self._unknown_functional = unknown_functional

    @classmethod
    def from_config(cls, config: ConflictConfig) -> PredicateRegistry:
        return cls(
            functional=config.functional_predicates,
            multi_valued=config.multi_valued_predicates,
            unknown_functional=config.unknown_predicates_functional,
        )

    def classify(self, predicate: str) -> PredicateKind:
        """The verdict for ``predicate`` with its reason."""
        name = normalise_predicate(predicate)
        if name in self._functional:
            return PredicateKind(name, True, "configured")
        if name in self._multi:
            return PredicateKind(name, False, "configured")
        if name in DEFAULT_FUNCTIONAL:
            return PredicateKind(name, True, "built-in")
        if name in DEFAULT_MULTI_VALUED:
            return PredicateKind(name, False, "built-in")
        guess = _heuristic(name)
        if guess is not None:
            return PredicateKind(name, guess, "heuristic")
        return PredicateKind(name, self._unknown_functional, "default")

    def is_functional(self, predicate: str) -> bool:
        """True when ``predicate`` holds one current value per subject."""
        return self.classify(predicate).functional


def _heuristic(name: str) -> bool | None:
    """Guess from the shape of the name; None when the name says nothing."""
    if name.startswith(_MULTI_PREFIXES):
        return False
    if name.startswith(_FUNCTIONAL_PREFIXES) or name.endswith(FUNCTIONAL_SUFFIXES):
        return True
    last = name.rsplit("_", 1)[-1]
    # A plural noun as the last word ("hobbies", "skills", "languages") names a set.
    if len(last) > 3 and last.endswith(("ies", "ers", "ags", "ills", "ages", "ons", "ids")):
        return False
    return None
