"""Recall latency, observe throughput and disk per memory at scale, SQLite and PostgreSQL.

Issue 17's Done-when 3 asks for one scope of 1,000,000 memories and 100 scopes of
10,000. Both sizes are flags; what was run, and so what a results file holds, is written
in it (``size``). The text is bench/scale_text.py's: synthetic but realistic statements
(people, places, work, preferences, events, dates), every one distinct, each with a
question it answers.

For each database of ``--database`` (``sqlite,postgresql`` by default: both in the same
run), the benchmark:

1. builds the store once: the large scope (``--memories``) and ``--scopes`` scopes of
   ``--scope-size``, written through ``AsyncMemory.import_lines`` with the packaged
   embedder's vectors carried in the lines (the library's fastest public bulk path: what
   ``ucma import`` runs, 500 records a transaction). Vectors come from the real
   ``LocalEmbedder`` and are kept on disk between runs (bench/vector_cache.py), so the
   embedding is paid once for every backend and every later run. A built store is
   reused when its name (seed and sizes) and each scope's count match; an interrupted
   build resumes (import skips records already present);
2. opens the store as a service does (``prepare_search`` of each scope: caches loaded
   and the large scope's HNSW index built; ``prepare_s``), then, for each client count of
   ``--clients``, runs ``--queries`` distinct questions with that many asyncio tasks
   against one ``AsyncMemory`` (``recall(limit=10)``), on the large scope and on the
   small ones (each question in the scope of its answer). Latency is wall time per recall
   with the query embedding included: the query-embedding LRU and persistent caches are
   off, as in bench/locomo.py. Reported per client count: p50 / p95 (ms),
   recalls per second, this process's CPU per recall (ms; with the embedder, in this
   process) and, on a local PostgreSQL, the database server's CPU per recall; ``hit@10``,
   the share of recalls whose answer is among the 10 hits (a sanity check that the store
   works, not a quality claim);
3. measures disk per memory (after step 2, so that PostgreSQL's HNSW index, which lives
   in the database, is counted): the SQLite file with its ``-wal`` / ``-shm`` (and the
   whole store folder) or ``pg_database_size``, over every memory in the database;
4. measures observe throughput with batching on a bounded sample (``--observe-sample``
   new texts, ``observe_many`` in batches of ``--observe-batch``) into a new scratch
   store of the same kind (a temporary SQLite file, or a new database on the same
   PostgreSQL server, dropped after), against the embedder's own throughput on as many
   other texts in the same batches, measured just before: ``observe_vs_embedder``.

With ``--processes 1,4`` (PostgreSQL), the large scope is also recalled by that many
processes at once (each its own ``AsyncMemory`` with ``--process-clients`` tasks, for
``--process-seconds`` from a common start once every process has loaded the scope):
total recalls per second and the ratio to
one process's. On a machine of two cores, 4 processes cannot reach 2.5 times one.

What was measured here (bench/results/scale.md): 20,000 memories in one scope and 2
scopes of 2,000, on both databases in one run of 11 minutes (the stores built by an
earlier run of 16 minutes, whose import did 953 memories/s into SQLite and 639/s into
PostgreSQL: bench/results/scale.json at commit 3ebbbca), on this 2-core machine while
other work loaded it (load average 6 to 13; the embedder alone did 15 to 52 sentences/s,
against about 330 when the machine is not shared). Issue 17's size (1,000,000 +
100 x 10,000, two million memories, on both databases) was not run. Estimated from the
measured rates, at this load: about 13 to 14 hours, most of it embedding two million texts
once (10.7 hours at 52/s; about 1.7 hours at 330/s), then importing them into each
database (about 35 minutes SQLite, 52 PostgreSQL) and SQLite's HNSW build (about an hour
at this load, n log n from 59 s at 20,000). On the machine not shared: roughly 2 to 3 hours
(the embedding 1.7 hours at 330/s; imports and the index build, at
bench/results/import.json's and core.json's idle rates, under half an hour; then the recall
windows). The vectors and stores are kept in ``.artifacts/scale`` (and on the PostgreSQL
server), so the embedding is paid once and an interrupted build resumes.

Usage::

    python bench/scale.py [--memories 20000] [--scopes 2] [--scope-size 2000]
        [--clients 1,4,16] [--queries 100] [--database sqlite,postgresql]
        [--postgres-url postgresql://...] [--processes 1,4] [--out bench/results/scale.json]

    # the committed results (PORT: scripts/postgres.py start's server):
    python bench/scale.py --postgres-url postgresql://postgres@127.0.0.1:PORT/ucma \\
        --processes 1,4 --out bench/results/scale.json

    # issue 17's size (an estimated 2 to 3 hours on this machine when not shared):
    python bench/scale.py --memories 1000000 --scopes 100 --scope-size 10000 \\
        --postgres-url postgresql://... --processes 1,4 --out bench/results/scale_1m.json

Without ``--postgres-url`` (or ``UCMA_TEST_POSTGRES_URL``) a PostgreSQL is started by
scripts/postgres.py for the run and stopped after (so its store is not reused later).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from cryptography.fernet import Fernet

sys.path.insert(0, str(Path(__file__).resolve().parent))

from core import run_meta  # noqa: E402
from metrics import percentiles  # noqa: E402
from process_cpu import database_cpu_seconds, postmaster_pid  # noqa: E402
from scale_text import Memory, memories  # noqa: E402
from ucma import exchange  # noqa: E402
from ucma.config import EmbeddingConfig, PrivacyConfig, UCMAConfig  # noqa: E402
from ucma.embeddings import LocalEmbedder  # noqa: E402
from ucma.engine import AsyncMemory  # noqa: E402
from ucma.serialization import record_to_dict  # noqa: E402
from ucma.types import Episode, Provenance  # noqa: E402
from vector_cache import DiskVectors  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STATE = ROOT / ".artifacts" / "scale"
LARGE = "scale-large"
T0 = 1_600_000_000.0
RECALL_LIMIT = 10
EMBED_CHUNK = 1024
BUILD_CHUNK = 10_000
WARMUP = 5
FULL = {"memories": 1_000_000, "scopes": 100, "scope_size": 10_000}


# ----------------------------------------------------------------------------- the data


@dataclass(frozen=True, slots=True)
class ScopeData:
    """One scope of the store: its user id, the seed of its text and its size."""

    user_id: str
    seed: int
    size: int

    def memories(self) -> list[Memory]:
        return memories(self.size, self.seed)


def scopes_of(memories_count: int, scopes: int, scope_size: int, seed: int) -> list[ScopeData]:
    """The large scope, then the small ones; each scope's text has a seed of its own, so
    a larger run's scope starts with a smaller run's texts (and finds their vectors)."""
    large = [ScopeData(LARGE, seed, memories_count)] if memories_count else []
    return large + [
        ScopeData(f"scale-small-{i:03d}", seed * 1000 + i + 1, scope_size) for i in range(scopes)
    ]


def store_name(memories_count: int, scopes: int, scope_size: int, seed: int) -> str:
    return f"scale_s{seed}_{memories_count}_{scopes}x{scope_size}"


def ensure_vectors(
    embedder: LocalEmbedder, disk: DiskVectors, texts: Sequence[str]
) -> dict[str, Any]:
    """Embed (and keep on disk) the texts whose vectors are not stored yet."""
    computed, seconds = 0, 0.0
    for start in range(0, len(texts), 50_000):
        window = texts[start : start + 50_000]
        found = disk.get(embedder.model_id, window, embedder.dimension)
        missing = [t for t in dict.fromkeys(window) if t not in found]
        for offset in range(0, len(missing), EMBED_CHUNK):
            chunk = missing[offset : offset + EMBED_CHUNK]
            began = time.perf_counter()
            vectors = embedder.embed_sync(chunk)
            seconds += time.perf_counter() - began
            disk.put(embedder.model_id, dict(zip(chunk, vectors, strict=True)))
            computed += len(chunk)
            rate = computed / seconds
            print(f"  embedded {computed} ({rate:.0f}/s)", file=sys.stderr, flush=True)
    return {
        "computed": computed,
        "seconds": round(seconds, 1),
        "per_s": round(computed / seconds, 1) if computed else None,
    }


def episode(scope: ScopeData, index: int, text: str) -> Episode:
    at = T0 + index * 60.0
    return Episode(
        id=f"ep_{scope.user_id}_{index:07d}",
        user_id=scope.user_id,
        agent_id="default",
        content=text,
        provenance=Provenance.OBSERVED,
        temporal_level=1,
        base_salience=0.5,
        created_at=at,
        updated_at=at,
        session_id=f"ses_{index // 50}",
        timestamp=at,
        source="user",
        participants=["user"],
    )


def export_lines(
    scope: ScopeData, texts: Sequence[str], disk: DiskVectors, embedder: LocalEmbedder
) -> Iterator[str]:
    """The scope as an export of the packaged model, its vectors read from ``disk``."""
    from ucma.types import Scope

    yield exchange.export_header(Scope(scope.user_id), embedder.model_id, embedder.dimension)
    for start in range(0, len(texts), BUILD_CHUNK):
        window = texts[start : start + BUILD_CHUNK]
        vectors = disk.get(embedder.model_id, window, embedder.dimension)
        for index, text in enumerate(window, start):
            record = record_to_dict(episode(scope, index, text))
            line = {"type": "memory", "record": record, "vector": _vector(vectors[text])}
            yield json.dumps(line, ensure_ascii=False) + "\n"


def _vector(vector: np.ndarray) -> str:
    return str(exchange._encode_vector(vector))


# ----------------------------------------------------------------------------- stores


@dataclass(frozen=True, slots=True)
class Store:
    """Where one database's store lives: a SQLite file or a PostgreSQL database URL."""

    kind: str  # "sqlite" or "postgresql"
    location: str
    admin: str | None = None  # the PostgreSQL server's URL, for sizes and scratch stores


def engine_config(vault_key: str) -> UCMAConfig:
    """No query-vector cache (every recall embeds its query), a fixed vault key (a server
    store has no local key file, and the store outlives the run)."""
    return UCMAConfig(
        embedding=replace(EmbeddingConfig(), lru_size=0, persistent_cache=False),
        privacy=PrivacyConfig(vault_key=vault_key),
    )


def vault_key(state: Path) -> str:
    path = state / "vault.key"
    if not path.exists():
        state.mkdir(parents=True, exist_ok=True)
        path.write_text(Fernet.generate_key().decode("ascii"), encoding="ascii")
    return path.read_text(encoding="ascii").strip()


async def scope_count(mem: AsyncMemory, user_id: str) -> int:
    stats = await mem.stats(user_id=user_id)
    return int(sum(stats["memories"].values()))


async def build(
    store: Store,
    scopes: Sequence[ScopeData],
    texts: dict[str, list[str]],
    disk: DiskVectors,
    embedder: LocalEmbedder,
    config: UCMAConfig,
) -> dict[str, Any]:
    """Import every scope not already complete; the imported count and rate."""
    imported, skipped, seconds, reused = 0, 0, 0.0, 0
    async with AsyncMemory(store.location, config=config, embedder=embedder) as mem:
        for scope in scopes:
            if await scope_count(mem, scope.user_id) == scope.size:
                reused += 1
                continue
            began = time.perf_counter()

            def progress(report: Any, name: str = scope.user_id, t0: float = began) -> None:
                if report.records % 50_000 == 0 and report.records:
                    rate = report.records / (time.perf_counter() - t0)
                    print(
                        f"  {store.kind} {name}: {report.records} ({rate:.0f}/s)", file=sys.stderr
                    )

            report = await mem.import_lines(
                export_lines(scope, texts[scope.user_id], disk, embedder),
                source=f"scale:{scope.user_id}",
                user_id=scope.user_id,
                progress=progress,
            )
            seconds += time.perf_counter() - began
            imported += report.imported
            skipped += report.skipped
            if await scope_count(mem, scope.user_id) != scope.size:
                raise RuntimeError(f"{scope.user_id}: the store does not hold {scope.size}")
    return {
        "scopes_reused": reused,
        "imported": imported,
        "skipped": skipped,
        "seconds": round(seconds, 1),
        "per_s": round(imported / seconds, 1) if imported else None,
    }


def disk_bytes(store: Store) -> dict[str, int]:
    if store.kind == "sqlite":
        path = Path(store.location)
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        database = sum(p.stat().st_size for p in files if p.exists())
        folder = sum(p.stat().st_size for p in path.parent.rglob("*") if p.is_file())
        return {"database_bytes": database, "store_folder_bytes": folder}
    import psycopg

    with psycopg.connect(store.location, autocommit=True) as conn:
        row = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    assert row is not None
    return {"database_bytes": int(row[0])}


async def all_memories(
    store: Store, scopes: Sequence[ScopeData], config: UCMAConfig, embedder: LocalEmbedder
) -> int:
    """Every memory of the database: the benchmark's scopes are all it holds."""
    async with AsyncMemory(store.location, config=config, embedder=embedder) as mem:
        return sum([await scope_count(mem, scope.user_id) for scope in scopes])


# ----------------------------------------------------------------------------- recall


@dataclass(frozen=True, slots=True)
class Query:
    user_id: str
    question: str
    answer: str


def pick_queries(
    scopes: Sequence[ScopeData], texts: dict[str, list[Memory]], count: int, seed: int
) -> list[Query]:
    """Up to ``count`` distinct questions, each in the scope of the memory that answers
    it (fewer when the scopes hold fewer distinct questions)."""
    rng = random.Random(seed)
    chosen: dict[str, Query] = {}
    for _ in range(count * 20):
        if len(chosen) == count:
            break
        scope = rng.choice(scopes)
        memory = rng.choice(texts[scope.user_id])
        chosen.setdefault(memory.question, Query(scope.user_id, memory.question, memory.text))
    return list(chosen.values())


async def recall_window(
    mem: AsyncMemory, queries: Sequence[Query], clients: int, postmaster: int | None
) -> dict[str, Any]:
    """``queries`` by ``clients`` concurrent tasks; latency and CPU figures."""
    pending = iter(queries)
    latencies: list[float] = []
    hits: list[bool] = []

    async def client() -> None:
        for query in pending:
            began = time.perf_counter()
            result = await mem.recall(query.question, limit=RECALL_LIMIT, user_id=query.user_id)
            latencies.append((time.perf_counter() - began) * 1000)
            hits.append(any(h.memory.content == query.answer for h in result.hits))

    cpu0, db0, wall0 = time.process_time(), database_cpu_seconds(postmaster), time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - wall0
    cpu, db1 = time.process_time() - cpu0, database_cpu_seconds(postmaster)
    n = len(latencies)
    out: dict[str, Any] = {
        "n": n,
        "p50_ms": percentiles(latencies)["p50"],
        "p95_ms": percentiles(latencies)["p95"],
        "recalls_per_s": round(n / wall, 1),
        "cpu_ms_per_recall": round(cpu * 1000 / n, 2),
        "hit@10": round(sum(hits) / n, 3),
    }
    if db0 is not None and db1 is not None:
        out["database_cpu_ms_per_recall"] = round((db1 - db0) * 1000 / n, 2)
    return out


async def recall_figures(
    store: Store,
    config: UCMAConfig,
    embedder: LocalEmbedder,
    scopes: Sequence[ScopeData],
    texts: dict[str, list[Memory]],
    clients: Sequence[int],
    count: int,
    seed: int,
) -> dict[str, Any]:
    postmaster = postmaster_pid(store.admin) if store.admin else None
    groups = {
        "large": [s for s in scopes if s.user_id == LARGE],
        "small": [s for s in scopes if s.user_id != LARGE],
    }
    figures: dict[str, Any] = {}
    async with AsyncMemory(store.location, config=config, embedder=embedder) as mem:
        began = time.perf_counter()
        prepared = {}
        for scope in scopes:  # as a service warms its scopes before taking requests
            prepared[scope.user_id] = await mem.prepare_search(user_id=scope.user_id)
        figures["prepare_s"] = round(time.perf_counter() - began, 1)
        if groups["large"]:
            figures["large_index_rows"] = prepared[LARGE]["graph_rows"]
        for name, group in groups.items():
            if not group:
                continue
            warm = pick_queries(group, texts, WARMUP, seed=seed)
            await recall_window(mem, warm, 1, None)
            rows: dict[str, Any] = {}
            for index, n in enumerate(clients):
                # Other questions for every client count: nothing is answered twice.
                queries = pick_queries(group, texts, count, seed=seed + 101 * (index + 1))
                rows[str(n)] = await recall_window(mem, queries, n, postmaster)
                print(f"  {store.kind} {name} {n} clients: {rows[str(n)]}", file=sys.stderr)
            figures[name] = rows
    return figures


# ----------------------------------------------------------------------------- observe


@contextmanager
def scratch_store(store: Store) -> Iterator[str]:
    """A new, empty store of the same kind, removed after."""
    if store.kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="ucma-scale-observe-") as tmp:
            yield str(Path(tmp) / "observe.db")
        return
    import psycopg

    assert store.admin is not None
    name = f"scale_observe_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(store.admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield store.admin.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(store.admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def observe_figures(
    store: Store, config: UCMAConfig, embedder: LocalEmbedder, sample: int, batch: int, seed: int
) -> dict[str, Any]:
    fresh = [m.text for m in memories(2 * sample, seed=seed * 7919 + 13)]
    alone_texts, observed = fresh[:sample], fresh[sample:]
    began = time.perf_counter()
    for start in range(0, sample, batch):
        embedder.embed_sync(alone_texts[start : start + batch])
    embedder_per_s = sample / (time.perf_counter() - began)
    with scratch_store(store) as location:
        async with AsyncMemory(location, config=config, embedder=embedder) as mem:
            await mem.observe_many(observed[:batch], user_id="warmup")
            began = time.perf_counter()
            for start in range(0, sample, batch):
                await mem.observe_many(observed[start : start + batch], user_id="observe")
            observe_per_s = sample / (time.perf_counter() - began)
    return {
        "sample": sample,
        "batch": batch,
        "embedder_per_s": round(embedder_per_s, 1),
        "observe_per_s": round(observe_per_s, 1),
        "observe_vs_embedder": round(observe_per_s / embedder_per_s, 3),
    }


# ----------------------------------------------------------------------------- processes


async def process_worker(args: argparse.Namespace) -> None:
    """One process of ``--processes``: load the large scope, say ``ready`` on stdout, read
    the common start time from stdin, recall the scope from then for
    ``--process-seconds``; prints the count as JSON."""
    embedder = LocalEmbedder()
    config = engine_config(os.environ["UCMA_SCALE_VAULT_KEY"])
    large = ScopeData(LARGE, args.seed, args.memories)
    texts = {LARGE: large.memories()}
    queries = pick_queries([large], texts, 20_000, seed=args.seed * 31 + args.worker_index)
    async with AsyncMemory(args.location, config=config, embedder=embedder) as mem:
        await mem.prepare_search(user_id=LARGE)
        await mem.recall(queries[-1].question, limit=RECALL_LIMIT, user_id=LARGE)
        print("ready", flush=True)
        start_at = float(sys.stdin.readline())
        await asyncio.sleep(max(0.0, start_at - time.time()))
        stop = start_at + args.process_seconds
        pending = itertools.cycle(queries)
        done = 0

        async def client() -> None:
            nonlocal done
            for query in pending:
                if time.time() >= stop:
                    return
                await mem.recall(query.question, limit=RECALL_LIMIT, user_id=LARGE)
                done += 1

        await asyncio.gather(*(client() for _ in range(args.process_clients)))
    print(json.dumps({"recalls": done}), flush=True)


def process_figures(
    store: Store, args: argparse.Namespace, key: str, counts: Sequence[int]
) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for n in counts:
        command = [
            sys.executable, __file__, "--worker", "--location", store.location,
            "--seed", str(args.seed), "--memories", str(args.memories),
            "--process-seconds", str(args.process_seconds),
            "--process-clients", str(args.process_clients),
        ]  # fmt: skip
        began = time.perf_counter()
        workers = [
            subprocess.Popen(
                [*command, "--worker-index", str(i)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "UCMA_SCALE_VAULT_KEY": key},
            )
            for i in range(n)
        ]
        # A common start once every process has loaded the scope and recalled once.
        for worker in workers:
            assert worker.stdout is not None
            if worker.stdout.readline().strip() != "ready":
                raise RuntimeError("a recall process failed before it was ready")
        setup = time.perf_counter() - began
        start_at = time.time() + 1.0
        for worker in workers:  # every process gets the start before any is waited for
            assert worker.stdin is not None
            worker.stdin.write(f"{start_at}\n")
            worker.stdin.close()
        outputs = []
        for worker in workers:
            assert worker.stdout is not None
            outputs.append(json.loads(worker.stdout.read().strip().splitlines()[-1]))
            worker.wait()
        total = sum(o["recalls"] for o in outputs)
        rows[str(n)] = {
            "recalls_per_s": round(total / args.process_seconds, 1),
            "per_process": [o["recalls"] for o in outputs],
            "setup_s": round(setup, 1),
        }
        print(f"  {store.kind} {n} processes: {rows[str(n)]}", file=sys.stderr)
    if "1" in rows:
        for row in rows.values():
            row["vs_one_process"] = round(row["recalls_per_s"] / rows["1"]["recalls_per_s"], 2)
    return rows


# ----------------------------------------------------------------------------- report


def estimate_full(results: dict[str, Any]) -> dict[str, Any]:
    """How long the full size would take here, from this run's rates (an estimate)."""
    total = FULL["memories"] + FULL["scopes"] * FULL["scope_size"]
    # The embedder's own rate swings with the machine's load: the best this run measured
    # (at its start, beside each observe sample, and while embedding the store).
    rates = [results["embedder_per_s"], results["vectors"]["per_s"] or 0.0]
    rates += [f["observe"]["embedder_per_s"] for f in results["databases"].values()]
    embed_rate = max(rates)
    out: dict[str, Any] = {
        "size": FULL,
        "memories": total,
        "embedding_rate_per_s": embed_rate,
        "embedding_minutes": round(total / embed_rate / 60, 1),
        # The rate issue 17 reports for this machine when it is not shared.
        "embedding_minutes_at_330_per_s": round(total / 330 / 60, 1),
    }
    for kind, figures in results["databases"].items():
        rate = figures["build"]["per_s"]
        if rate:
            out[f"{kind}_import_minutes"] = round(total / rate / 60, 1)
        rows = figures["recall"].get("large_index_rows")
        prepare = figures["recall"].get("prepare_s")
        measured = results["size"]["memories"]
        # PostgreSQL builds its HNSW index in the background once the import makes the
        # scope large, so its build is inside the import time and prepare_s is ~0.
        if rows and prepare and prepare >= 1.0 and measured:
            # An HNSW build grows about as n log n.
            scale = FULL["memories"] * np.log(FULL["memories"]) / (measured * np.log(measured))
            out[f"{kind}_prepare_minutes"] = round(float(prepare * scale) / 60, 1)
    out["total_hours"] = round(
        float(sum(v for k, v in out.items() if k.endswith("_minutes") and "_at_" not in k)) / 60,
        1,
    )
    out["note"] = (
        "an estimate from this run's rates, not a measurement: embedding once (vectors are"
        " kept on disk for both databases), each database's import and SQLite's HNSW build"
        " (n log n); the recall windows (slower per recall at 1M) come on top. The rates"
        " are those of this run's machine load: see embedder_per_s beside the 330/s the"
        " embedder reaches here when the machine is not shared"
    )
    return out


def markdown(results: dict[str, Any]) -> str:
    size = results["size"]
    lines = [
        f"# Scale: {size['memories']:,} memories in one scope and {size['scopes']} scopes of"
        f" {size['scope_size']:,} ({results['meta']['date']})",
        "",
        "Recall with the query embedding included, `recall(limit=10)`, one `AsyncMemory`,"
        " asyncio clients; CPU is this process's (embedder included) and the database"
        " server's per recall. hit@10 is a sanity check, not a quality claim.",
        "",
        f"Machine load average (1 min) at the start and end: "
        f"{results['meta']['load_average_start'][0]:.1f}, "
        f"{results['meta']['load_average_end'][0]:.1f}; the embedder alone did "
        f"{results['embedder_per_s']} sentences/s in this run. Wall time of the run: "
        f"{results['meta'].get('wall_s', '?')} s.",
        "",
        "| database | scope | clients | p50 ms | p95 ms | recalls/s | CPU ms/recall |"
        " db CPU ms/recall | hit@10 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, figures in results["databases"].items():
        for group in ("large", "small"):
            for clients, row in figures["recall"].get(group, {}).items():
                db = row.get("database_cpu_ms_per_recall", "")
                lines.append(
                    f"| {kind} | {group} | {clients} | {row['p50_ms']} | {row['p95_ms']} |"
                    f" {row['recalls_per_s']} | {row['cpu_ms_per_recall']} | {db} |"
                    f" {row['hit@10']} |"
                )
    lines += [
        "",
        "| database | memories | bytes/memory | import/s | prepare s | observe/s |"
        " embedder/s | observe / embedder |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind, f in results["databases"].items():
        o = f["observe"]
        lines.append(
            f"| {kind} | {f['disk']['memories']:,} | {f['disk']['bytes_per_memory']} |"
            f" {f['build']['per_s'] or 'reused'} | {f['recall'].get('prepare_s')} |"
            f" {o['observe_per_s']} | {o['embedder_per_s']} | {o['observe_vs_embedder']} |"
        )
    if "processes" in results:
        lines += [
            "",
            "| processes (PostgreSQL, large scope) | recalls/s | vs one | per process |",
            "|---:|---:|---:|---|",
        ]
        for n, row in results["processes"].items():
            lines.append(
                f"| {n} | {row['recalls_per_s']} | {row.get('vs_one_process')} |"
                f" {row['per_process']} |"
            )
    estimate = results["estimate_full"]
    lines += ["", f"Full size estimate: `{json.dumps(estimate)}`", ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- main


@contextmanager
def postgres_admin(given: str | None) -> Iterator[str]:
    if given:
        yield given
        return
    state = tempfile.mkdtemp(prefix="ucma-scale-pg-")
    script = [sys.executable, str(ROOT / "scripts" / "postgres.py")]
    url = subprocess.run(
        [*script, "start", "--state", state], check=True, capture_output=True, text=True
    ).stdout.strip()
    try:
        yield url
    finally:
        subprocess.run([*script, "stop", "--state", state], check=False)
        shutil.rmtree(state, ignore_errors=True)


def postgres_store(admin: str, name: str) -> Store:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f"CREATE DATABASE {name}")
    return Store("postgresql", admin.rsplit("/", 1)[0] + "/" + name, admin)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    doc = __doc__ or ""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--memories", type=int, default=20_000, help="the large scope's size")
    parser.add_argument("--scopes", type=int, default=2, help="how many small scopes")
    parser.add_argument("--scope-size", type=int, default=2_000)
    parser.add_argument("--clients", default="1,4,16")
    parser.add_argument("--queries", type=int, default=100, help="per client count and scope")
    parser.add_argument("--database", default="sqlite,postgresql")
    parser.add_argument("--postgres-url", default=os.environ.get("UCMA_TEST_POSTGRES_URL"))
    parser.add_argument("--processes", default="", help="e.g. 1,4 (PostgreSQL)")
    parser.add_argument("--process-clients", type=int, default=4)
    parser.add_argument("--process-seconds", type=float, default=20.0)
    parser.add_argument("--observe-sample", type=int, default=300)
    parser.add_argument("--observe-batch", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--state", type=Path, default=STATE, help="stores and vectors")
    parser.add_argument("--out", type=Path, default=None)
    # One process of --processes (internal).
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker-index", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--location", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    clients = [int(c) for c in args.clients.split(",") if c]
    kinds = [k.strip() for k in args.database.split(",") if k.strip()]
    scopes = scopes_of(args.memories, args.scopes, args.scope_size, args.seed)
    name = store_name(args.memories, args.scopes, args.scope_size, args.seed)
    key = vault_key(args.state)
    config = engine_config(key)
    embedder = LocalEmbedder()
    embedder.load()

    began = time.perf_counter()
    data = {s.user_id: s.memories() for s in scopes}
    texts = {user: [m.text for m in items] for user, items in data.items()}
    print(f"text: {time.perf_counter() - began:.1f} s", file=sys.stderr)
    disk = DiskVectors(args.state / "vectors.sqlite")
    sample = [m.text for m in memories(1000, seed=args.seed * 7919 + 7)]
    t0 = time.perf_counter()
    embedder.embed_sync(sample)
    embedder_per_s = len(sample) / (time.perf_counter() - t0)
    vectors = ensure_vectors(embedder, disk, [t for s in scopes for t in texts[s.user_id]])
    results: dict[str, Any] = {
        "meta": {**run_meta(embedder), "load_average_start": os.getloadavg()},
        "size": {
            "memories": args.memories,
            "scopes": args.scopes,
            "scope_size": args.scope_size,
            "seed": args.seed,
        },
        "queries": args.queries,
        "clients": clients,
        "embedder_per_s": round(embedder_per_s, 1),
        "vectors": vectors,
        "databases": {},
    }
    with postgres_admin(args.postgres_url if "postgresql" in kinds else "unused") as admin:
        for kind in kinds:
            if kind == "sqlite":
                folder = args.state / name
                folder.mkdir(parents=True, exist_ok=True)
                store = Store("sqlite", str(folder / "store.db"))
            elif kind == "postgresql":
                store = postgres_store(admin, name)
            else:
                raise SystemExit(f"unknown database {kind!r}")
            print(f"{kind}: building {name}", file=sys.stderr)
            built = await build(store, scopes, texts, disk, embedder, config)
            figures: dict[str, Any] = {"build": built}
            figures["recall"] = await recall_figures(
                store, config, embedder, scopes, data, clients, args.queries, args.seed
            )
            # After prepare_search: on PostgreSQL the HNSW index is part of the database.
            count = await all_memories(store, scopes, config, embedder)
            sizes = disk_bytes(store)
            figures["disk"] = {
                "memories": count,
                **sizes,
                "bytes_per_memory": round(sizes["database_bytes"] / count),
            }
            figures["observe"] = await observe_figures(
                store, config, embedder, args.observe_sample, args.observe_batch, args.seed
            )
            print(f"  {kind} observe: {figures['observe']}", file=sys.stderr)
            results["databases"][kind] = figures
            if kind == "postgresql" and args.processes and args.memories:
                counts = [int(n) for n in args.processes.split(",") if n]
                results["processes"] = process_figures(store, args, key, counts)
    disk.close()
    results["meta"]["load_average_end"] = os.getloadavg()
    results["meta"]["wall_s"] = round(time.perf_counter() - began, 1)
    results["meta"]["argv"] = sys.argv[1:]
    results["estimate_full"] = estimate_full(results)
    return results


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker:
        asyncio.run(process_worker(args))
        return
    results = asyncio.run(run(args))
    print(json.dumps(results, indent=2))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        args.out.with_suffix(".md").write_text(markdown(results), encoding="utf-8")


if __name__ == "__main__":
    main()
