"""The benchmarks' shared metrics (bench/metrics.py): ranking scores, ROC AUC, timings."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

_PATH = Path(__file__).resolve().parents[2] / "bench" / "metrics.py"
_SPEC = importlib.util.spec_from_file_location("bench_metrics", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
metrics = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(metrics)


def test_recall_counts_distinct_evidence_in_the_top_k() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    assert metrics.recall_at(ranked, ["a", "b", "c", "d"], 1) == 0.25
    assert metrics.recall_at(ranked, ["a", "b", "c", "d"], 5) == 0.75
    assert metrics.recall_at(ranked, ["b", "b"], 3) == 1.0


def test_recall_refuses_a_question_without_evidence() -> None:
    with pytest.raises(ValueError):
        metrics.recall_at(["a"], [], 1)


def test_hit_and_reciprocal_rank_use_the_first_evidence_found() -> None:
    ranked = ["x", "y", "b", "a"]
    assert metrics.hit_at(ranked, {"a", "b"}, 2) == 0.0
    assert metrics.hit_at(ranked, {"a", "b"}, 3) == 1.0
    assert metrics.first_rank(ranked, {"a", "b"}) == 3
    assert metrics.reciprocal_rank(ranked, {"a", "b"}) == pytest.approx(1 / 3)
    assert metrics.reciprocal_rank(ranked, {"z"}) == 0.0


def test_ranking_scores_has_every_k_and_mrr() -> None:
    row = metrics.ranking_scores(["a", "b"], ["b"], (1, 2))
    assert row == {"recall@1": 0.0, "hit@1": 0.0, "recall@2": 1.0, "hit@2": 1.0, "mrr": 0.5}


def test_roc_auc_extremes_ties_and_empty_groups() -> None:
    assert metrics.roc_auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert metrics.roc_auc([0.1], [0.9, 0.8]) == 0.0
    assert metrics.roc_auc([0.5, 0.5], [0.5]) == 0.5
    assert metrics.roc_auc([0.7, 0.3], [0.5]) == 0.5
    assert metrics.roc_auc([], [0.1]) is None
    assert metrics.roc_auc([0.1], []) is None


@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=12),
    st.lists(st.integers(0, 5), min_size=1, max_size=12),
)
def test_roc_auc_equals_the_pairwise_definition(pos: list[int], neg: list[int]) -> None:
    pairs = list(itertools.product(pos, neg))
    expected = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in pairs) / len(pairs)
    assert metrics.roc_auc(pos, neg) == pytest.approx(expected)


def test_share_and_mean_rows() -> None:
    assert metrics.share([True, False, False, True]) == 0.5
    assert metrics.share([]) is None
    assert metrics.mean_rows([{"a": 1.0}, {"a": 0.0}, {"a": 0.0}]) == {"a": 0.3333}
    assert metrics.mean_rows([]) == {}


def test_percentiles_read_the_sorted_timings() -> None:
    timings = [float(v) for v in range(100, 0, -1)]  # 1 .. 100, unsorted
    assert metrics.percentiles(timings) == {"p50": 50.5, "p95": 95.0}
    assert metrics.percentiles([3.14159]) == {"p50": 3.14, "p95": 3.14}
