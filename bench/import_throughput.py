"""Import throughput against the packaged embedder's own batched throughput, same run.

Writes a synthetic export of N chat-like episodes twice: once without vectors (the
re-embedding path, as when the exporting store used another model) and once with the
vectors of the packaged model (the fast path), then imports each into a fresh store
through ``AsyncMemory.import_lines`` (what ``ucma import`` runs, a chunk at a time) and
measures, in the same run:

- ``embedder_per_s``: ``LocalEmbedder`` alone on the same texts, in batches of one import
  chunk (the floor: an import that must embed cannot beat it);
- ``import_reembed_per_s`` and its ratio to ``embedder_per_s`` (the target is >= 0.8);
- ``import_with_vectors_per_s``: records carrying vectors of the same model;
- ``resume_per_s``: re-running the finished import (every record skipped).

Usage: ``python bench/import_throughput.py [--records 100000] [--out bench/results/import.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ucma import exchange
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.serialization import record_to_dict
from ucma.types import Episode, Provenance, Scope

sys.path.insert(0, str(Path(__file__).resolve().parent))
from core import synthetic_texts  # noqa: E402 - the same text generator as the core bench

SCOPE = Scope("bench")
T0 = 1_700_000_000.0


def episode(i: int, text: str) -> Episode:
    return Episode(
        id=f"ep_bench_{i:07d}",
        user_id=SCOPE.user_id,
        agent_id=SCOPE.agent_id,
        content=text,
        provenance=Provenance.OBSERVED,
        temporal_level=1,
        base_salience=0.5,
        created_at=T0 + i,
        updated_at=T0 + i,
        session_id=f"ses_{i // 50}",
        timestamp=T0 + i,
        source="user",
        participants=["user"],
    )


def write_export(path: Path, texts: list[str], vectors: np.ndarray | None, model: str) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(exchange.export_header(SCOPE, model, 384))
        for i, text in enumerate(texts):
            line: dict = {"type": "memory", "record": record_to_dict(episode(i, text))}
            if vectors is not None:
                line["vector"] = exchange._encode_vector(vectors[i])
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            retention = {
                "memory_id": f"ep_bench_{i:07d}",
                "stability": 1.0,
                "last_reviewed": T0 + i,
                "review_count": 0,
            }
            out.write(json.dumps({"type": "retention", **retention}) + "\n")


async def timed_import(path: Path, database: Path, embedder: LocalEmbedder) -> tuple[float, dict]:
    async with AsyncMemory(database, user_id=SCOPE.user_id, embedder=embedder) as memory:
        start = time.perf_counter()
        report = await memory.import_lines(
            exchange.iter_lines(path, memory.config.limits.max_import_line_bytes), source=str(path)
        )
        seconds = time.perf_counter() - start
    return seconds, {"imported": report.imported, "skipped": report.skipped}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    n = args.records

    embedder = LocalEmbedder()
    embedder.load()
    texts = synthetic_texts(n, seed=7)
    random.Random(7).shuffle(texts)

    with tempfile.TemporaryDirectory(prefix="ucma-import-bench-") as tmp:
        work = Path(tmp)
        # 1. The embedder alone, a chunk at a time, on the very texts the import embeds.
        start = time.perf_counter()
        chunks = [
            await embedder.embed(texts[i : i + exchange.CHUNK]) for i in range(0, n, exchange.CHUNK)
        ]
        embed_seconds = time.perf_counter() - start
        vectors = np.concatenate(chunks)

        # 2. Re-embedding path: no vectors in the file (another model's export, stripped).
        plain = work / "plain.jsonl"
        write_export(plain, texts, None, "another-model")
        reembed_seconds, reembed = await timed_import(plain, work / "a.db", embedder)
        resume_seconds, resume = await timed_import(plain, work / "a.db", embedder)

        # 3. Fast path: vectors of the same model travel with the records.
        carrying = work / "vectors.jsonl"
        write_export(carrying, texts, vectors, embedder.model_id)
        fast_seconds, fast = await timed_import(carrying, work / "b.db", embedder)

    embedder_per_s = n / embed_seconds
    reembed_per_s = n / reembed_seconds
    result = {
        "records": n,
        "embedder": embedder.model_id,
        "machine": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "embedder_per_s": round(embedder_per_s, 1),
        "import_reembed_per_s": round(reembed_per_s, 1),
        "import_reembed_vs_embedder": round(reembed_per_s / embedder_per_s, 3),
        "import_with_vectors_per_s": round(n / fast_seconds, 1),
        "resume_per_s": round(n / resume_seconds, 1),
        "reembed": reembed,
        "resume": resume,
        "with_vectors": fast,
    }
    assert reembed["imported"] == n and resume["skipped"] == n and fast["imported"] == n
    print(json.dumps(result, indent=2))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
