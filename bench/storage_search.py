"""Keyword and dense search latency of one scope on SQLite and on PostgreSQL, same run.

Fills one scope of ``--size`` episodes (LoCoMo dev's 2,760 turns, then bench/core.py's
synthetic chat lines) with the packaged embedder's vectors, identically into a new
SQLite file and a new PostgreSQL database, then times ``MemoryCatalog.keyword_search``
(k = 50 over the keyword terms of LoCoMo dev's questions) and ``vector_search``
(k = 100 over their embeddings), each query once after one warm-up pass:

- ``sqlite``: the SQLite backend (its in-process caches, ``ucma.storage.index``);
- ``postgres``: the PostgreSQL backend as a search outside a transaction runs;
- ``postgres_in_transaction``: the same searches inside a transaction, which the
  PostgreSQL backend answers in the server (pgvector, the keyword ``tsvector``),
  so the server-side path is measured in the same run;
- ``postgres_after_foreign_write``: the first search after another process's write
  (a second ``PostgresStorage`` with its own pool, on the same database adds one
  episode before each query): the cost of catching up.

Reports p50 / p95 in milliseconds per backend and operation, the load average
before and after, and writes JSON to ``--out``.

Usage: ``python bench/storage_search.py [--size 10000] [--queries 60]
[--database postgresql://...] [--vectors CACHE.npy] [--out bench/results/storage_search.json]``.
Without ``--database`` (or ``UCMA_TEST_POSTGRES_URL``) a PostgreSQL is started for the
run by scripts/postgres.py and stopped after.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from core import percentile, run_meta, synthetic_texts  # noqa: E402
from ucma.embeddings import LocalEmbedder  # noqa: E402
from ucma.retrieval.terms import keyword_terms  # noqa: E402
from ucma.storage.base import Storage  # noqa: E402
from ucma.storage.postgres import PostgresStorage  # noqa: E402
from ucma.storage.sqlite import SQLiteStorage  # noqa: E402
from ucma.types import Episode, Scope  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
SCOPE = Scope("bench", "default")
KEYWORD_K = 50
VECTOR_K = 100


def locomo(path: Path) -> tuple[list[str], list[str]]:
    """(every turn's text, every question) of the LoCoMo dev conversations."""
    samples = json.loads(path.read_text())
    turns = [
        f"{turn['speaker']}: {turn['text']}"
        for sample in samples
        for key, session in sample["conversation"].items()
        if key.startswith("session_") and isinstance(session, list)
        for turn in session
    ]
    return turns, [qa["question"] for sample in samples for qa in sample["qa"]]


def corpus_texts(turns: Sequence[str], size: int) -> list[str]:
    texts = list(turns[:size])
    return texts + synthetic_texts(size - len(texts), seed=size) if len(texts) < size else texts


def embed(embedder: LocalEmbedder, texts: Sequence[str], cache: Path | None) -> np.ndarray:
    if cache is not None and cache.exists():
        vectors = np.load(cache)
        if len(vectors) == len(texts):
            return vectors
    vectors = np.concatenate(
        [embedder.embed_sync(list(texts[i : i + 1024])) for i in range(0, len(texts), 1024)]
    ).astype(np.float32)
    if cache is not None:
        np.save(cache, vectors)
    return vectors


def episodes(texts: Sequence[str], start: int = 0) -> list[Episode]:
    return [
        Episode(
            id=f"ep-{start + i}",
            user_id=SCOPE.user_id,
            agent_id=SCOPE.agent_id,
            content=text,
            created_at=float(start + i),
            session_id=f"s{(start + i) // 20}",
            timestamp=float(start + i),
        )
        for i, text in enumerate(texts)
    ]


def fill(storage: Storage, texts: Sequence[str], vectors: np.ndarray) -> None:
    for start in range(0, len(texts), 2000):
        storage.episodes.add(
            episodes(texts[start : start + 2000], start), vectors[start : start + 2000]
        )


def timed(calls: Sequence[Callable[[], object]]) -> list[float]:
    for call in calls:  # warm-up: caches loaded, plans cached
        call()
    latencies = []
    for call in calls:
        start = time.perf_counter()
        call()
        latencies.append((time.perf_counter() - start) * 1000)
    return latencies


def summary(latencies: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(percentile(latencies, 0.95), 2),
        "n": len(latencies),
    }


def searches(
    storage: Storage, terms: Sequence[list[str]], queries: np.ndarray
) -> dict[str, list[Callable[[], object]]]:
    memories = storage.memories
    return {
        "keyword": [(lambda t=t: memories.keyword_search(SCOPE, t, KEYWORD_K)) for t in terms],
        "vector": [(lambda q=q: memories.vector_search(SCOPE, q, VECTOR_K)) for q in queries],
    }


def in_transaction(storage: Storage, call: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        with storage.transaction():
            return call()

    return run


@contextlib.contextmanager
def postgres_url(given: str | None) -> Iterator[str]:
    """A database for the run: a new one on ``given``'s server, or on a server started
    here (scripts/postgres.py); dropped (and the server stopped) after."""
    import psycopg

    state = None
    if given is None:
        state = tempfile.mkdtemp(prefix="ucma-bench-pg-")
        script = [sys.executable, str(ROOT / "scripts" / "postgres.py")]
        given = subprocess.run(
            [*script, "start", "--state", state], check=True, capture_output=True, text=True
        ).stdout.strip()
    name = f"bench_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(given, autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")
        base, _, _ = given.rpartition("/")
        try:
            yield f"{base}/{name}"
        finally:
            with psycopg.connect(given, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    finally:
        if state is not None:
            subprocess.run([*script, "stop", "--state", state], check=False)


def run(
    size: int,
    count: int,
    database: str | None,
    cache: Path | None,
    embedder: LocalEmbedder | None = None,
) -> dict[str, Any]:
    embedder = embedder or LocalEmbedder()
    turns, questions = locomo(LOCOMO)
    texts = corpus_texts(turns, size)
    vectors = embed(embedder, texts, cache)
    asked = questions[:count]
    terms = [keyword_terms(q) for q in asked]
    queries = np.asarray(embedder.embed_sync(asked), dtype=np.float32)
    load_before = os.getloadavg()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as workdir:
        sqlite = SQLiteStorage(Path(workdir) / "search.db", dimension=vectors.shape[1])
        try:
            fill(sqlite, texts, vectors)
            results["sqlite"] = {
                name: summary(timed(calls))
                for name, calls in searches(sqlite, terms, queries).items()
            }
        finally:
            sqlite.close()
    with postgres_url(database) as url:
        postgres = PostgresStorage(url, dimension=vectors.shape[1])
        other = PostgresStorage(url, dimension=vectors.shape[1], pool_size=2)
        try:
            fill(postgres, texts, vectors)
            calls = searches(postgres, terms, queries)
            results["postgres"] = {name: summary(timed(c)) for name, c in calls.items()}
            results["postgres_in_transaction"] = {
                name: summary(timed([in_transaction(postgres, call) for call in c]))
                for name, c in calls.items()
            }
            after: dict[str, list[float]] = {}
            written = iter(range(size, size + 2 * count * len(calls) + 10))
            for name, c in calls.items():
                after[name] = []
                for call in c:
                    n = next(written)
                    other.episodes.add(episodes([f"a new line, #{n}"], n), vectors[n % size][None])
                    start = time.perf_counter()
                    call()
                    after[name].append((time.perf_counter() - start) * 1000)
            results["postgres_after_foreign_write"] = {
                name: summary(values) for name, values in after.items()
            }
        finally:
            other.close()
            postgres.close()
    return {
        "size": size,
        "queries": count,
        "keyword_k": KEYWORD_K,
        "vector_k": VECTOR_K,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "results": results,
        **run_meta(embedder),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--database", default=os.environ.get("UCMA_TEST_POSTGRES_URL"))
    parser.add_argument("--vectors", type=Path, default=None)
    parser.add_argument(
        "--out", type=Path, default=ROOT / "bench" / "results" / "storage_search.json"
    )
    args = parser.parse_args(argv)
    report = run(args.size, args.queries, args.database, args.vectors)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    for backend, operations in report["results"].items():
        for operation, figures in operations.items():
            p50, p95 = figures["p50_ms"], figures["p95_ms"]
            print(f"{backend:30} {operation:8} p50 {p50:8.2f} ms  p95 {p95:8.2f} ms")
    print(f"load average {report['load_average_before']} -> {report['load_average_after']}")


if __name__ == "__main__":
    main()
