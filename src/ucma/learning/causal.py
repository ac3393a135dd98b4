"""Causal analysis over memory -> decision -> outcome links (seed 003). Pure functions.

- ``memory_influence``: which memories consistently precede good outcomes and
  which mislead (seed 003 "What memories consistently lead to good outcomes?"):
  per memory, the decisions it fed that have an outcome, their mean quality,
  the attribution-weighted mean, and a verdict.
- ``counterfactuals``: for one decided trace, similar past decisions (shared
  memories, or the same decision type with overlapping memories) whose
  outcome differed, and the memories that differed between them (seed 003
  "Counterfactual Analysis").
- ``extract_patterns``: clusters of similar high-performing memories
  (greedy cosine clustering of their vectors), each summarised extractively
  by its most central memory and its most frequent terms (seed 003 "Pattern
  Extraction").

Correlation is not causation: a verdict says a memory *preceded* good or bad
outcomes often enough to matter, attribution-weighted so a memory that fed a
decision only marginally is not blamed for it.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ucma.learning.records import DecisionTrace

__all__ = [
    "Counterfactual",
    "CounterfactualReport",
    "MemoryInfluence",
    "Pattern",
    "counterfactuals",
    "extract_patterns",
    "memory_influence",
    "pattern_terms",
]

_WORD = re.compile(r"[a-z][a-z']{2,}")
_STOP = frozenset(
    (
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "you",
        "your",
        "are",
        "was",
        "were",
        "have",
        "has",
        "had",
        "not",
        "but",
        "all",
        "can",
        "our",
        "out",
        "use",
        "its",
        "into",
        "than",
        "then",
        "them",
        "they",
        "their",
        "there",
        "when",
        "what",
        "which",
        "who",
        "will",
        "would",
        "should",
        "could",
        "about",
        "after",
        "before",
        "been",
        "being",
        "more",
        "most",
        "some",
        "such",
        "only",
        "also",
        "very",
        "just",
        "over",
        "under",
        "any",
        "each",
        "other",
    )
)


@dataclass(frozen=True, slots=True)
class MemoryInfluence:
    """How the decisions one memory fed turned out.

    ``verdict`` is "helpful" (weighted mean quality >= ``threshold`` and at
    least ``min_decisions`` outcomes), "misleading" (<= -``threshold``),
    "mixed" otherwise, or "insufficient" below ``min_decisions``.
    """

    memory_id: str
    decisions: int
    positive: int
    negative: int
    mean_quality: float
    weighted_quality: float
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "decisions": self.decisions,
            "positive": self.positive,
            "negative": self.negative,
            "mean_quality": round(self.mean_quality, 4),
            "weighted_quality": round(self.weighted_quality, 4),
            "verdict": self.verdict,
        }


def memory_influence(
    traces: Sequence[DecisionTrace], *, min_decisions: int = 3, threshold: float = 0.3
) -> list[MemoryInfluence]:
    """Per memory, outcomes of the decisions it fed; best first."""
    qualities: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for trace in traces:
        if trace.outcome_quality is None:
            continue
        for memory_id, score in trace.memory_scores.items():
            qualities[memory_id].append((trace.outcome_quality, score))
    result = []
    for memory_id, pairs in qualities.items():
        values = [q for q, _ in pairs]
        weight = sum(w for _, w in pairs)
        weighted = sum(q * w for q, w in pairs) / weight if weight > 0 else 0.0
        n = len(values)
        if n < min_decisions:
            verdict = "insufficient"
        elif weighted >= threshold:
            verdict = "helpful"
        elif weighted <= -threshold:
            verdict = "misleading"
        else:
            verdict = "mixed"
        result.append(
            MemoryInfluence(
                memory_id,
                n,
                sum(1 for q in values if q > 0),
                sum(1 for q in values if q < 0),
                sum(values) / n,
                weighted,
                verdict,
            )
        )
    result.sort(key=lambda m: (-m.weighted_quality, -m.decisions, m.memory_id))
    return result


@dataclass(frozen=True, slots=True)
class Counterfactual:
    trace_id: str
    summary: str
    outcome_quality: float
    outcome_difference: float
    similarity: float
    shared_memories: list[str]
    only_in_actual: list[str]
    only_in_alternative: list[str]


@dataclass(slots=True)
class CounterfactualReport:
    """Similar decisions that turned out differently, best alternative first.

    ``suspects`` are memories of the actual decision that the better
    alternatives did without; ``missing`` are memories the better ones used
    and the actual one did not.
    """

    trace: DecisionTrace
    alternatives: list[Counterfactual] = field(default_factory=list)
    suspects: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace": self.trace.to_dict(),
            "alternatives": [
                {
                    "trace_id": a.trace_id,
                    "summary": a.summary,
                    "outcome_quality": a.outcome_quality,
                    "outcome_difference": round(a.outcome_difference, 4),
                    "similarity": round(a.similarity, 4),
                    "shared_memories": a.shared_memories,
                    "only_in_actual": a.only_in_actual,
                    "only_in_alternative": a.only_in_alternative,
                }
                for a in self.alternatives
            ],
            "suspects": self.suspects,
            "missing": self.missing,
        }


def counterfactuals(
    trace: DecisionTrace,
    others: Sequence[DecisionTrace],
    *,
    min_similarity: float = 0.2,
    min_difference: float = 0.5,
    limit: int = 10,
) -> CounterfactualReport:
    """Seed 003's counterfactual report for ``trace`` (which needs an outcome)."""
    report = CounterfactualReport(trace)
    if trace.outcome_quality is None:
        return report
    actual = set(trace.memory_scores)
    better_only: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    for other in others:
        if other.id == trace.id or other.outcome_quality is None:
            continue
        theirs = set(other.memory_scores)
        union = actual | theirs
        similarity = len(actual & theirs) / len(union) if union else 0.0
        if other.decision_type == trace.decision_type and actual & theirs:
            similarity = max(similarity, min_similarity)
        difference = other.outcome_quality - trace.outcome_quality
        if similarity < min_similarity or abs(difference) < min_difference:
            continue
        report.alternatives.append(
            Counterfactual(
                other.id,
                other.summary,
                other.outcome_quality,
                difference,
                similarity,
                sorted(actual & theirs),
                sorted(actual - theirs),
                sorted(theirs - actual),
            )
        )
        if difference > 0:
            better_only.update(actual - theirs)
            missing.update(theirs - actual)
    report.alternatives.sort(key=lambda a: (-a.outcome_difference, -a.similarity, a.trace_id))
    del report.alternatives[limit:]
    report.suspects = [m for m, _ in better_only.most_common()]
    report.missing = [m for m, _ in missing.most_common()]
    return report


@dataclass(frozen=True, slots=True)
class Pattern:
    """A cluster of similar memories that consistently preceded good outcomes."""

    id: str
    summary: str
    terms: list[str]
    memory_ids: list[str]
    decisions: int
    mean_quality: float
    centroid: np.ndarray = field(repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "summary": self.summary,
            "terms": list(self.terms),
            "memory_ids": list(self.memory_ids),
            "decisions": self.decisions,
            "mean_quality": round(self.mean_quality, 4),
        }


def pattern_terms(texts: Sequence[str], limit: int = 8) -> list[str]:
    """The most frequent content words of ``texts`` (each text counted once per word)."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update({w for w in _WORD.findall(text.lower()) if w not in _STOP})
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


def extract_patterns(
    influence: Sequence[MemoryInfluence],
    contents: Mapping[str, str],
    vectors: Mapping[str, np.ndarray],
    *,
    min_decisions: int = 3,
    min_quality: float = 0.5,
    similarity: float = 0.75,
) -> list[Pattern]:
    """Cluster high performers (>= ``min_decisions`` outcomes, mean quality >
    ``min_quality``) by cosine similarity; largest, best clusters first."""
    good = [
        m
        for m in influence
        if m.decisions >= min_decisions
        and m.mean_quality > min_quality
        and m.memory_id in vectors
        and m.memory_id in contents
    ]
    clusters: list[list[MemoryInfluence]] = []
    centres: list[np.ndarray] = []
    for member in sorted(good, key=lambda m: (-m.mean_quality, m.memory_id)):
        v = _unit(vectors[member.memory_id])
        best = max(range(len(centres)), key=lambda i: float(centres[i] @ v), default=None)
        if best is not None and float(centres[best] @ v) >= similarity:
            clusters[best].append(member)
            total = sum(_unit(vectors[m.memory_id]) for m in clusters[best])
            centres[best] = _unit(total)
        else:
            clusters.append([member])
            centres.append(v)
    patterns = []
    for members, centre in zip(clusters, centres, strict=True):
        ids = [m.memory_id for m in members]
        medoid = max(ids, key=lambda i: float(_unit(vectors[i]) @ centre))
        decisions = sum(m.decisions for m in members)
        mean = sum(m.mean_quality * m.decisions for m in members) / decisions
        digest = hashlib.sha256("|".join(sorted(ids)).encode()).hexdigest()[:16]
        patterns.append(
            Pattern(
                f"pat_{digest}",
                contents[medoid],
                pattern_terms([contents[i] for i in ids]),
                ids,
                decisions,
                mean,
                centre,
            )
        )
    patterns.sort(key=lambda p: (-p.decisions, -p.mean_quality, p.id))
    return patterns


def _unit(vector: np.ndarray) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v
