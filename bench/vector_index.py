"""Exact versus HNSW dense search by scope size: the measurement behind
``RetrievalConfig.ann_threshold``.

Fills a fresh SQLite file per size with episodes whose vectors are the packaged
embedder's embeddings of bench/core.py's synthetic chat lines, then, in the same
run and on the same file:

- ``exact_ms``: ``vector_search`` for k = 100 (the retriever's
  ``vector_candidates``) with graphs off, p50 and p95 over the queries;
- ``hnsw_ms``: the same through the scope's HNSW graph (exact re-scoring of its
  proposals included), after ``prepare_search`` built it (``build_s``);
- ``recall@10`` / ``recall@100``: the share of the exact top k the graph's
  answers hold, averaged over the queries.

Usage: ``python bench/vector_index.py [--sizes 10000 20000 50000 100000]
[--queries 200] [--vectors CACHE.npy] [--out bench/results/vector_index.json]``
(``--vectors`` keeps the embedded corpus between runs.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from core import percentile, questions, run_meta, synthetic_texts  # noqa: E402
from ucma.embeddings import LocalEmbedder  # noqa: E402
from ucma.storage.base import AnnSettings  # noqa: E402
from ucma.storage.sqlite import SQLiteStorage  # noqa: E402
from ucma.types import Episode, Scope  # noqa: E402

SCOPE = Scope("bench", "default")
K = 100
DEFAULTS = AnnSettings()


def corpus(embedder: LocalEmbedder, size: int, cache: Path | None) -> np.ndarray:
    if cache is not None and cache.exists():
        vectors = np.load(cache)
        if len(vectors) >= size:
            return vectors[:size]
    texts = synthetic_texts(size, seed=size)
    vectors = np.concatenate(
        [embedder.embed_sync(texts[i : i + 2048]) for i in range(0, size, 2048)]
    ).astype(np.float32)
    if cache is not None:
        np.save(cache, vectors)
    return vectors


def fill(storage: SQLiteStorage, vectors: np.ndarray) -> None:
    for start in range(0, len(vectors), 5000):
        chunk = vectors[start : start + 5000]
        storage.episodes.add(
            [
                Episode(
                    id=f"ep-{start + i}",
                    user_id=SCOPE.user_id,
                    agent_id=SCOPE.agent_id,
                    content=f"memory {start + i}",
                    created_at=float(start + i),
                    session_id=f"s{(start + i) // 20}",
                    timestamp=float(start + i),
                )
                for i in range(len(chunk))
            ],
            chunk,
        )


def timed_searches(storage: SQLiteStorage, queries: np.ndarray) -> tuple[list[float], list]:
    latencies, answers = [], []
    for query in queries:
        t0 = time.perf_counter()
        answers.append(storage.memories.vector_search(SCOPE, query, K))
        latencies.append((time.perf_counter() - t0) * 1000)
    return latencies, answers


def mean_recall(found: list[list], truth: list[list], k: int) -> float:
    """The share of each exact top k that the other answer holds, averaged."""
    shares = [
        len({i for i, _ in got[:k]} & {i for i, _ in want[:k]}) / k
        for got, want in zip(found, truth, strict=True)
    ]
    return round(float(np.mean(shares)), 4)


def measure(vectors: np.ndarray, queries: np.ndarray, settings: AnnSettings, tmp: Path) -> dict:
    path = tmp / f"vectors-{len(vectors)}.db"
    dimension = vectors.shape[1]
    exact = SQLiteStorage(path, dimension=dimension, ann=AnnSettings(threshold=0))
    approximate = SQLiteStorage(path, dimension=dimension, ann=settings)
    try:
        fill(exact, vectors)
        exact.memories.prepare_search(SCOPE)
        t0 = time.perf_counter()
        status = approximate.memories.prepare_search(SCOPE, wait=True)
        build_s = time.perf_counter() - t0
        assert status.graph_rows == len(vectors), status
        timed_searches(exact, queries[:10])  # warm both paths
        timed_searches(approximate, queries[:10])
        exact_ms, truth = timed_searches(exact, queries)
        hnsw_ms, found = timed_searches(approximate, queries)
    finally:
        exact.close()
        approximate.close()
    return {
        "exact_ms_p50": round(statistics.median(exact_ms), 3),
        "exact_ms_p95": round(percentile(exact_ms, 0.95), 3),
        "hnsw_ms_p50": round(statistics.median(hnsw_ms), 3),
        "hnsw_ms_p95": round(percentile(hnsw_ms, 0.95), 3),
        "speedup_p50": round(statistics.median(exact_ms) / statistics.median(hnsw_ms), 2),
        "build_s": round(build_s, 1),
        "recall@10": mean_recall(found, truth, 10),
        "recall@100": mean_recall(found, truth, K),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 20_000, 50_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--connectivity", type=int, default=DEFAULTS.connectivity)
    parser.add_argument("--expansion-add", type=int, default=DEFAULTS.expansion_add)
    parser.add_argument("--expansion-search", type=int, default=DEFAULTS.expansion_search)
    parser.add_argument("--vectors", type=Path, help="cache of the embedded corpus (.npy)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    settings = AnnSettings(
        threshold=1,
        connectivity=args.connectivity,
        expansion_add=args.expansion_add,
        expansion_search=args.expansion_search,
    )
    embedder = LocalEmbedder()
    embedder.load()
    largest = corpus(embedder, max(args.sizes), args.vectors)
    queries = embedder.embed_sync(questions(args.queries, seed=7)).astype(np.float32)
    results: dict[str, object] = {
        "meta": {
            **run_meta(embedder),
            "k": K,
            "queries": args.queries,
            "connectivity": settings.connectivity,
            "expansion_add": settings.expansion_add,
            "expansion_search": settings.expansion_search,
        },
    }
    print("size | exact p50/p95 ms | hnsw p50/p95 ms | speedup | build s | recall@10 | recall@100")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            row = measure(largest[:size], queries, settings, Path(tmp))
            results[str(size)] = row
            print(
                f"{size} | {row['exact_ms_p50']}/{row['exact_ms_p95']} | "
                f"{row['hnsw_ms_p50']}/{row['hnsw_ms_p95']} | {row['speedup_p50']} | "
                f"{row['build_s']} | {row['recall@10']} | {row['recall@100']}",
                flush=True,
            )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
