"""bench/storage_search.py at a small size on the test PostgreSQL: every backend and
operation is timed, and the searches it times find what the scope holds. No timing is
asserted. Runs when ``UCMA_TEST_POSTGRES_URL`` is set (``make test-postgres``)."""

from __future__ import annotations

import json
import os

import pytest
from tests.bench_modules import load_bench

from ucma.embeddings import LocalEmbedder

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not os.environ.get("UCMA_TEST_POSTGRES_URL"), reason="UCMA_TEST_POSTGRES_URL unset"
    ),
]

bench = load_bench("storage_search")


def test_a_small_run_times_every_backend_and_operation(local_embedder: LocalEmbedder) -> None:
    report = bench.run(200, 4, os.environ["UCMA_TEST_POSTGRES_URL"], None, embedder=local_embedder)
    report = json.loads(json.dumps(report))  # what --out writes
    assert report["size"] == 200 and report["queries"] == 4
    assert set(report["results"]) == {
        "sqlite",
        "postgres",
        "postgres_in_transaction",
        "postgres_after_foreign_write",
    }
    for operations in report["results"].values():
        assert set(operations) == {"keyword", "vector"}
        for figures in operations.values():
            assert figures["n"] == 4
            assert 0 < figures["p50_ms"] <= figures["p95_ms"]
    assert len(report["load_average_before"]) == 3


def test_the_corpus_is_locomo_turns_then_distinct_synthetic_lines() -> None:
    turns, questions = bench.locomo(bench.LOCOMO)
    assert len(turns) == 2760 and len(questions) == 999
    texts = bench.corpus_texts(turns, 3000)
    assert texts[:2760] == turns and len(set(texts[2760:])) == 240
    assert bench.corpus_texts(turns, 10) == turns[:10]
