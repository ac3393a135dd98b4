"""Core engine benchmark: observe throughput and remember latency by store size.

For each store size N (default 10,000 and 100,000) this fills a fresh SQLite
file with N synthetic chat-like observations through the public API, then
measures, in the same run:

- ``embedder_per_s``: the packaged embedder's own batched throughput on the
  same kind of text (the physical floor of observe);
- ``observe_per_s_batched``: ``observe_many`` in chunks, end to end;
- ``observe_per_s_single``: ``observe`` one call at a time, into the full store;
- ``prepare_search_s``: ``prepare_search`` (search caches loaded and, from
  ``RetrievalConfig.ann_threshold`` memories, the HNSW index built; ``hnsw_rows``
  says how many rows it covers), as a service does when it starts;
- ``remember_ms_p50`` / ``remember_ms_p95``: ``remember`` with query embedding
  included, distinct queries, on the full store.

Usage: ``python bench/core.py [--sizes 10000 100000] [--out bench/results/core.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory

SUBJECTS = [
    "I",
    "We",
    "My sister",
    "The team",
    "Our manager",
    "Jon",
    "Caroline",
    "The client",
    "My neighbour",
    "The new intern",
    "Grandma",
    "The landlord",
    "Dr. Patel",
    "Maria",
]
VERBS = [
    "finally fixed",
    "talked about",
    "planned",
    "cancelled",
    "tried",
    "cooked",
    "visited",
    "painted",
    "reviewed",
    "forgot about",
    "booked",
    "practised",
    "debugged",
    "photographed",
]
OBJECTS = [
    "the flaky login test",
    "a trip to Lisbon",
    "the quarterly budget",
    "a pottery class",
    "the JWT clock skew bug",
    "a birthday dinner",
    "the garden fence",
    "a marathon plan",
    "the database migration",
    "a camping weekend",
    "the piano recital",
    "a job interview",
    "the kitchen renovation",
    "a charity run",
    "the Redis cache",
    "a hiking route",
]
TAILS = [
    "yesterday evening",
    "after work",
    "last weekend",
    "with a friend",
    "for the first time",
    "because it kept failing",
    "and it went well",
    "but it rained",
    "before the deadline",
    "on Tuesday morning",
    "at the community centre",
    "while the kids slept",
    "",
]


def synthetic_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        parts = [rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(TAILS)]
        # A number makes every text distinct without adding a word common to all of them.
        texts.append(" ".join(p for p in parts if p) + f", #{rng.randrange(10**6)}.")
    return texts


def questions(count: int, seed: int) -> list[str]:
    """Distinct questions about the kind of lines ``synthetic_texts`` writes."""
    return ["what happened with " + text.split(" ", 2)[-1] for text in synthetic_texts(count, seed)]


def run_meta(embedder: LocalEmbedder) -> dict[str, str]:
    """What a results file records about the machine and model it was measured on."""
    return {
        "machine": platform.machine(),
        "python": platform.python_version(),
        "embedder": embedder.model_id,
        "date": time.strftime("%Y-%m-%d"),
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def measure_size(size: int, embedder: LocalEmbedder, workdir: Path, queries: int) -> dict:
    texts = synthetic_texts(size, seed=size)
    sample = synthetic_texts(2_000, seed=size + 1)
    start = time.perf_counter()
    embedder.embed_sync(sample)
    embedder_per_s = len(sample) / (time.perf_counter() - start)

    path = workdir / f"core-{size}.db"
    async with AsyncMemory(path, user_id="bench", embedder=embedder) as mem:
        chunk = 1_000
        start = time.perf_counter()
        for offset in range(0, size, chunk):
            await mem.observe_many(texts[offset : offset + chunk])
            done = min(offset + chunk, size)
            if done % 10_000 == 0 or done == size:
                rate = done / (time.perf_counter() - start)
                print(f"  {done:>7} observed, {rate:6.0f}/s", file=sys.stderr, flush=True)
        batched = size / (time.perf_counter() - start)

        singles = synthetic_texts(300, seed=size + 2)
        start = time.perf_counter()
        for text in singles:
            await mem.observe(text)
        single = len(singles) / (time.perf_counter() - start)

        # As a service warms its scopes: caches loaded, a large scope's HNSW index built.
        start = time.perf_counter()
        index = await mem.prepare_search()
        prepare_s = time.perf_counter() - start

        latencies = []
        for question in questions(queries, seed=size + 3):
            t0 = time.perf_counter()
            await mem.remember(question)
            latencies.append((time.perf_counter() - t0) * 1000)
    return {
        "embedder_per_s": round(embedder_per_s, 1),
        "observe_per_s_batched": round(batched, 1),
        "observe_per_s_single": round(single, 1),
        "observe_batched_vs_embedder": round(batched / embedder_per_s, 3),
        "prepare_search_s": round(prepare_s, 1),
        "hnsw_rows": index["graph_rows"],
        "remember_ms_p50": round(statistics.median(latencies), 2),
        "remember_ms_p95": round(percentile(latencies, 0.95), 2),
        "queries": queries,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    embedder = LocalEmbedder()
    embedder.load()
    results: dict[str, object] = {"meta": run_meta(embedder)}
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            print(f"store size {size}:", file=sys.stderr, flush=True)
            results[str(size)] = row = await measure_size(size, embedder, Path(tmp), args.queries)
            print(json.dumps({str(size): row}), flush=True)
    header = (
        "size",
        "embedder/s",
        "observe/s batched",
        "ratio",
        "observe/s single",
        "remember p50 ms",
        "remember p95 ms",
    )
    print(" | ".join(header))
    for size in args.sizes:
        r = results[str(size)]
        assert isinstance(r, dict)
        print(
            f"{size} | {r['embedder_per_s']} | {r['observe_per_s_batched']} | "
            f"{r['observe_batched_vs_embedder']} | {r['observe_per_s_single']} | "
            f"{r['remember_ms_p50']} | {r['remember_ms_p95']}"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
