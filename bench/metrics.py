"""Ranking and calibration metrics shared by the retrieval benchmarks.

Pure functions over plain lists, so LoCoMo, BEAM and any later benchmark
score the same way and the maths is unit-tested once
(``tests/unit/test_bench_metrics.py``).

- ``ranking_scores``: Recall@k (share of the evidence ids in the top k),
  hit@k (any evidence id in the top k) and the reciprocal rank of the first
  evidence id (0 when none is retrieved), for one question.
- ``roc_auc``: the area under the ROC curve of a score between a positive and
  a negative group, by the Mann-Whitney formulation: the probability that a
  random positive scores above a random negative, ties counting one half.
  Chosen over a thresholded curve because it needs no binning and is exact.
- ``mean_rows``: the per-key mean of score rows, rounded for reports.
- ``percentiles``: p50 and p95 of timings, rounded for reports.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Hashable, Sequence


def recall_at(ranked: Sequence[Hashable], evidence: Collection[Hashable], k: int) -> float:
    """Share of the (distinct) evidence ids found in the first ``k`` ranked ids."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question without evidence cannot be scored")
    return len(wanted & set(ranked[:k])) / len(wanted)


def hit_at(ranked: Sequence[Hashable], evidence: Collection[Hashable], k: int) -> float:
    """1.0 when any evidence id is among the first ``k`` ranked ids, else 0.0."""
    return 1.0 if set(evidence) & set(ranked[:k]) else 0.0


def first_rank(ranked: Sequence[Hashable], evidence: Collection[Hashable]) -> int | None:
    """1-based rank of the first evidence id in ``ranked``, None when absent."""
    wanted = set(evidence)
    return next((i for i, r in enumerate(ranked, 1) if r in wanted), None)


def reciprocal_rank(ranked: Sequence[Hashable], evidence: Collection[Hashable]) -> float:
    """1 / rank of the first evidence id; 0.0 when no evidence id is retrieved."""
    rank = first_rank(ranked, evidence)
    return 1.0 / rank if rank else 0.0


def ranking_scores(
    ranked: Sequence[Hashable], evidence: Collection[Hashable], ks: Sequence[int]
) -> dict[str, float]:
    """``recall@k`` and ``hit@k`` for every k in ``ks``, and ``mrr``, for one question."""
    row: dict[str, float] = {}
    for k in ks:
        row[f"recall@{k}"] = recall_at(ranked, evidence, k)
        row[f"hit@{k}"] = hit_at(ranked, evidence, k)
    row["mrr"] = reciprocal_rank(ranked, evidence)
    return row


def roc_auc(positives: Sequence[float], negatives: Sequence[float]) -> float | None:
    """P(a random positive scores above a random negative), ties counting 1/2.

    The Mann-Whitney U statistic over ``len(positives) * len(negatives)``,
    computed from mid-ranks of the pooled scores in O(n log n). None when
    either group is empty (the area is undefined, not 0.5).
    """
    if not positives or not negatives:
        return None
    pooled = sorted([(float(s), 1) for s in positives] + [(float(s), 0) for s in negatives])
    rank_sum = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j < len(pooled) and pooled[j][0] == pooled[i][0]:
            j += 1
        mid_rank = (i + 1 + j) / 2  # the mean of the 1-based ranks i+1 .. j
        rank_sum += mid_rank * sum(label for _, label in pooled[i:j])
        i = j
    n_pos, n_neg = len(positives), len(negatives)
    u = rank_sum - n_pos * (n_pos + 1) / 2
    return u / (n_pos * n_neg)


def share(flags: Sequence[bool]) -> float | None:
    """The share of True in ``flags``; None for an empty group."""
    return sum(1 for f in flags if f) / len(flags) if flags else None


def mean_rows(rows: Sequence[dict[str, float]], digits: int = 4) -> dict[str, float]:
    """Mean of every key of the first row over all rows (empty dict for no rows)."""
    if not rows:
        return {}
    return {key: round(statistics.fmean(r[key] for r in rows), digits) for key in rows[0]}


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """p50 and p95 of ``values`` (at least one), in their unit, to two decimals."""
    ordered = sorted(values)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }
