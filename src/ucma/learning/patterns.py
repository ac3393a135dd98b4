"""Shared patterns across users with privacy protection (seed 003 "Federated Learning").

Each user's patterns (``ucma.learning.causal.extract_patterns``) are merged
across users when their centroids are similar; a merged pattern is exported
only when it was seen in at least ``min_instances`` decisions (100) across at
least ``min_users`` users (10), the seed's privacy thresholds. Otherwise it is
refused with the reason (``PrivacyThresholdError`` for a single pattern, a
``refused`` entry in a batch).

What leaves: no user ids, no memory ids, no memory text. The description is
built from terms that at least ``min_users`` distinct users' patterns contain
(so no single user's wording can leak), after dropping anything that looks
like an e-mail address, URL, phone number or number. Counts and mean quality
carry Laplace noise at privacy budget ``epsilon`` (sensitivity 1 for the
counts, 2 / n for a mean of n qualities in [-1, 1]).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ucma.errors import PrivacyThresholdError, ValidationError
from ucma.learning.causal import Pattern

__all__ = [
    "PatternCandidate",
    "SharedPattern",
    "SharingReport",
    "merge_user_patterns",
    "scrub_terms",
    "share_pattern",
    "share_patterns",
]

_PERSONAL = (
    re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+"),
    re.compile(r"https?://\S+|www\.\S+"),
    re.compile(r"\+?\d[\d\s().-]{5,}\d"),
    re.compile(r".*\d.*"),
)


@dataclass(slots=True)
class PatternCandidate:
    """One pattern as seen across users, before privacy checks."""

    centroid: np.ndarray
    instances: int
    quality_sum: float
    users: set[str] = field(default_factory=set)
    terms_by_user: dict[str, set[str]] = field(default_factory=dict)

    @property
    def mean_quality(self) -> float:
        return self.quality_sum / self.instances if self.instances else 0.0


@dataclass(frozen=True, slots=True)
class SharedPattern:
    """What may leave the user's memory: noisy statistics and common terms."""

    id: str
    terms: list[str]
    instances: int
    users: int
    mean_quality: float
    epsilon: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "terms": list(self.terms),
            "instances": self.instances,
            "users": self.users,
            "mean_quality": round(self.mean_quality, 4),
            "epsilon": self.epsilon,
        }


@dataclass(slots=True)
class SharingReport:
    shared: list[SharedPattern] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    """One reason per refused candidate (it carries no identifying data)."""

    def to_dict(self) -> dict[str, Any]:
        return {"shared": [p.to_dict() for p in self.shared], "refused": list(self.refused)}


def scrub_terms(terms: Sequence[str]) -> list[str]:
    """Drop terms that look like personal data (e-mail, URL, phone, any digit)."""
    return [t for t in terms if not any(p.fullmatch(t) for p in _PERSONAL)]


def merge_user_patterns(
    by_user: Mapping[str, Sequence[Pattern]], *, similarity: float = 0.8
) -> list[PatternCandidate]:
    """Group patterns of different users whose centroids have cosine >= ``similarity``."""
    candidates: list[PatternCandidate] = []
    for user, patterns in sorted(by_user.items()):
        for pattern in patterns:
            v = _unit(pattern.centroid)
            best = max(
                range(len(candidates)),
                key=lambda i: float(candidates[i].centroid @ v),
                default=None,
            )
            if best is None or float(candidates[best].centroid @ v) < similarity:
                candidates.append(PatternCandidate(v, 0, 0.0))
                best = len(candidates) - 1
            target = candidates[best]
            weight = target.instances
            target.centroid = _unit(target.centroid * weight + v * pattern.decisions)
            target.instances += pattern.decisions
            target.quality_sum += pattern.mean_quality * pattern.decisions
            target.users.add(user)
            target.terms_by_user.setdefault(user, set()).update(pattern.terms)
    return candidates


def share_pattern(
    candidate: PatternCandidate,
    *,
    epsilon: float,
    min_instances: int = 100,
    min_users: int = 10,
    rng: np.random.Generator,
) -> SharedPattern:
    """The privacy-protected export of one candidate, or ``PrivacyThresholdError``."""
    if not epsilon > 0:
        raise ValidationError("epsilon must be > 0")
    if candidate.instances < min_instances:
        raise PrivacyThresholdError(
            f"pattern seen in {candidate.instances} decisions; sharing needs at least "
            f"{min_instances} instances"
        )
    if len(candidate.users) < min_users:
        raise PrivacyThresholdError(
            f"pattern seen for {len(candidate.users)} users; sharing needs at least "
            f"{min_users} users"
        )
    counts: Counter[str] = Counter()
    for terms in candidate.terms_by_user.values():
        counts.update(terms)
    common = scrub_terms(sorted(t for t, n in counts.items() if n >= min_users))
    if not common:
        raise PrivacyThresholdError(
            f"no term of the pattern is used by {min_users} or more users, so it cannot be "
            "described without one user's own words"
        )
    n = candidate.instances
    noisy_instances = max(0, round(n + rng.laplace(0.0, 1.0 / epsilon)))
    noisy_users = max(0, round(len(candidate.users) + rng.laplace(0.0, 1.0 / epsilon)))
    noise = rng.laplace(0.0, 2.0 / (n * epsilon))
    noisy_mean = float(np.clip(candidate.mean_quality + noise, -1.0, 1.0))
    digest = hashlib.sha256("|".join(common).encode()).hexdigest()[:16]
    return SharedPattern(
        f"shared_{digest}", common, noisy_instances, noisy_users, noisy_mean, epsilon
    )


def share_patterns(
    candidates: Sequence[PatternCandidate],
    *,
    epsilon: float,
    min_instances: int = 100,
    min_users: int = 10,
    rng: np.random.Generator,
) -> SharingReport:
    """Share every candidate that passes; the others are listed with their reason."""
    report = SharingReport()
    for candidate in candidates:
        try:
            report.shared.append(
                share_pattern(
                    candidate,
                    epsilon=epsilon,
                    min_instances=min_instances,
                    min_users=min_users,
                    rng=rng,
                )
            )
        except PrivacyThresholdError as exc:
            report.refused.append(exc.reason)
    return report


def _unit(vector: np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v
