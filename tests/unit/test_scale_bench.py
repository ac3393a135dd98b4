"""bench/scale.py and its text (bench/scale_text.py): behaviour only, no timing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.bench_modules import load_bench

scale_text = load_bench("scale_text")
scale = load_bench("scale")


def test_the_generator_gives_distinct_texts_the_same_for_the_same_seed() -> None:
    first = scale_text.memories(20_000, seed=3)
    texts = [m.text for m in first]
    assert len(set(texts)) == len(texts) == 20_000
    assert [m.text for m in scale_text.memories(500, seed=3)] == texts[:500]  # a prefix
    assert [m.text for m in scale_text.memories(500, seed=4)] != texts[:500]
    # Many templates, not one sentence with a counter: the first four words vary widely.
    assert len({" ".join(t.split()[:4]) for t in texts}) > 10_000


def test_each_question_names_the_people_of_its_statement() -> None:
    for memory in scale_text.memories(300, seed=5):
        assert memory.question.endswith("?") and memory.question != memory.text
        names = [
            w for w in memory.question.rstrip("?").replace("'s", "").split() if w in scale_text.LAST
        ]
        assert names and all(name in memory.text for name in names)


def test_queries_are_distinct_and_asked_in_the_scope_of_their_answer() -> None:
    scopes = scale.scopes_of(200, 2, 50, seed=1)
    assert [s.user_id for s in scopes] == [scale.LARGE, "scale-small-000", "scale-small-001"]
    data = {s.user_id: s.memories() for s in scopes}
    queries = scale.pick_queries(scopes, data, 60, seed=9)
    assert len({q.question for q in queries}) == len(queries) == 60
    for query in queries:
        assert query.answer in {m.text for m in data[query.user_id]}
    # Fewer distinct questions than asked for: the ones there are, no endless loop.
    assert len(scale.pick_queries(scopes[1:2], data, 10_000, seed=9)) <= 50


def test_the_report_has_a_row_per_database_scope_and_client_count() -> None:
    row = {
        "n": 3,
        "p50_ms": 10.0,
        "p95_ms": 20.0,
        "recalls_per_s": 5.0,
        "cpu_ms_per_recall": 9.0,
        "hit@10": 1.0,
    }
    figures = {
        "build": {"per_s": 1000.0},
        "disk": {"memories": 300, "database_bytes": 3_000_000, "bytes_per_memory": 10_000},
        "recall": {"prepare_s": 1.0, "large_index_rows": 0, "large": {"1": row}, "small": {}},
        "observe": {"observe_per_s": 50.0, "embedder_per_s": 80.0, "observe_vs_embedder": 0.625},
    }
    results = {
        "meta": {"date": "2026-12-07", "load_average_start": [1.0], "load_average_end": [2.0]},
        "size": {"memories": 200, "scopes": 2, "scope_size": 50, "seed": 1},
        "embedder_per_s": 100.0,
        "vectors": {"per_s": None},
        "databases": {"sqlite": figures, "postgresql": figures},
    }
    results["estimate_full"] = scale.estimate_full(results)
    assert results["estimate_full"]["embedding_minutes"] == round(2_000_000 / 100.0 / 60, 1)
    text = scale.markdown(results)
    assert "| sqlite | large | 1 | 10.0 | 20.0 |" in text
    assert "| postgresql | 300 | 10000 |" in text


@pytest.mark.integration
def test_a_tiny_run_on_sqlite_reports_every_figure(tmp_path: Path) -> None:
    args = scale.parse_args(
        [
            "--database", "sqlite", "--memories", "40", "--scopes", "1", "--scope-size", "20",
            "--queries", "3", "--clients", "1,2", "--observe-sample", "6",
            "--observe-batch", "3", "--state", str(tmp_path),
        ]
    )  # fmt: skip
    results = asyncio.run(scale.run(args))

    figures = results["databases"]["sqlite"]
    assert figures["build"]["imported"] == 60 and figures["disk"]["memories"] == 60
    assert figures["disk"]["bytes_per_memory"] > 0
    for group in ("large", "small"):
        assert set(figures["recall"][group]) == {"1", "2"}
        assert figures["recall"][group]["1"]["n"] == 3
    assert set(figures["observe"]) >= {"observe_per_s", "embedder_per_s", "observe_vs_embedder"}
    assert results["estimate_full"]["memories"] == 2_000_000
    # A second run finds the store built and imports nothing.
    again = asyncio.run(scale.run(args))
    assert again["databases"]["sqlite"]["build"]["scopes_reused"] == 2
    assert again["vectors"]["computed"] == 0
