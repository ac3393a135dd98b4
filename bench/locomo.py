"""Retrieval quality on LoCoMo-format conversations, through the public API only.

Every dialogue turn of each conversation is observed as one memory (the
session's date as its timestamp, the speaker as its source, the turn id in
its metadata; each conversation in its own scope). Nothing else in the file is
ingested (no "observation", "event_summary" or "session_summary"). Then every
question with evidence is asked through ``recall`` with the conversation's
last session date as the reference time.

Reported per system (overall = categories 1-4; category 5, adversarial, apart):
turn-level Recall@k and hit@k for k = 1, 5, 10, 20, session-level recall@5,
MRR, per category, and recall latency p50 / p95 with the query embedding
included, beside the process CPU time per recall (p50 / p95: every thread of
this process, so other jobs on the machine move it less than the wall clock).

Confidence: the ROC AUC of ``result.confidence`` (bench/metrics.py) between
answerable questions (categories 1-4 with evidence in the top 10) and
unanswerable ones (category 5, adversarial, and a fixed sample of another
conversation's questions asked against this conversation's scope:
conversation i gets those of conversation i + 1), with the share of
``low_confidence`` in each group. The recalls that only feed this (category 5
questions without evidence, borrowed questions) run after all scored ones and
are not timed, so the ranking metrics and latencies are those of before.

Systems: ``ucma`` (the default pipeline) and the ablations ``keyword`` (BM25
only), ``dense`` (vectors only) and ``rrf`` (plain RRF of the two, nothing
else).

Store: a new SQLite file in a temporary folder, unless ``--database`` names another
(a path or URL, e.g. ``postgresql://...`` of scripts/postgres.py), which must hold no
memories yet (the figures are then of this run's turns alone); the run's result names
the backend. A store without a local file gets a vault key made for the run.

Document vectors are kept on disk between runs (bench/vector_cache.py,
``--no-vector-cache`` to embed afresh); questions are embedded during the timed
recall every time, so latencies still include the query embedding.

Usage: ``python bench/locomo.py --data ../shared/data/locomo/locomo_dev.json
[--out bench/results/locomo.json] [--systems ucma keyword dense rrf] [--database URL]
[--no-vector-cache]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from cryptography.fernet import Fernet

sys.path.insert(0, str(Path(__file__).parent))

from metrics import percentiles, roc_auc, share  # noqa: E402
from ucma.config import (  # noqa: E402
    EmbeddingConfig,
    PrivacyConfig,
    RetrievalConfig,
    UCMAConfig,
)
from ucma.embeddings import Embedder, LocalEmbedder  # noqa: E402
from ucma.engine import AsyncMemory  # noqa: E402
from ucma.storage.location import StorageLocation, parse_location  # noqa: E402
from vector_cache import DEFAULT_PATH, DiskVectors  # noqa: E402

KS = (1, 5, 10, 20)
CATEGORIES = ("1", "2", "3", "4")
ADVERSARIAL = "5"
ANSWERABLE_K = 10
FOREIGN_PER_CONVERSATION = 20

SYSTEMS: dict[str, RetrievalConfig] = {
    "ucma": RetrievalConfig(),
    "keyword": RetrievalConfig.ablation("keyword"),
    "dense": RetrievalConfig.ablation("dense"),
    "rrf": RetrievalConfig.ablation("rrf"),
}


class MemoEmbedder(Embedder):
    """Reuses document vectors across systems so each conversation is embedded
    once per run; questions are never memoised, so latencies stay honest.

    With ``disk`` (bench/vector_cache.py), vectors are also looked up in and
    written to that file, so a later run embeds only texts it has not seen."""

    def __init__(self, inner: LocalEmbedder, disk: DiskVectors | None = None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.documents: dict[str, np.ndarray] = {}
        self.memoise = True
        self.disk = disk

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        if not self.memoise:
            return await self.inner.embed(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self.documents]
        if missing and self.disk is not None:
            self.documents.update(self.disk.get(self.model_id, missing, self.dimension))
            missing = [t for t in missing if t not in self.documents]
        if missing:
            computed = dict(zip(missing, await self.inner.embed(missing), strict=True))
            self.documents.update(computed)
            if self.disk is not None:
                self.disk.put(self.model_id, computed)
        return np.stack([self.documents[t] for t in texts])


@contextmanager
def bench_store(database: str | None) -> Iterator[StorageLocation]:
    """The store a run works in: ``database`` when given, else a new SQLite file in a
    temporary folder removed afterwards."""
    if database is not None:
        yield parse_location(database)
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield parse_location(Path(tmp) / "locomo.db")


def store_config(location: StorageLocation) -> UCMAConfig:
    """The engine's config for this run's store: a server store (no local file for the
    vault key) gets a key made for the run."""
    if location.path is not None:
        return UCMAConfig()
    return UCMAConfig(privacy=PrivacyConfig(vault_key=Fernet.generate_key().decode("ascii")))


def session_time(text: str) -> float:
    """LoCoMo's "1:56 pm on 8 May, 2023" as epoch seconds (UTC)."""
    parsed = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return parsed.replace(tzinfo=UTC).timestamp()


def sessions(conversation: dict[str, Any]) -> list[tuple[int, float, list[dict[str, Any]]]]:
    found = []
    for key, turns in conversation.items():
        match = re.fullmatch(r"session_(\d+)", key)
        if match and isinstance(turns, list) and turns:
            number = int(match.group(1))
            found.append((number, session_time(conversation[f"{key}_date_time"]), turns))
    return sorted(found)


def turn_text(turn: dict[str, Any]) -> str:
    text = turn["text"]
    if turn.get("blip_caption"):
        text += f" [shares an image: {turn['blip_caption']}]"
    return text


def normalise_evidence(raw: Sequence[str], known: set[str]) -> list[str]:
    """Fix the file's known glitches ("D8:6; D9:17", "D:11:26", "D30:05") and
    drop ids that do not exist in the conversation."""
    ids = []
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            match = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if match:
                dia = f"D{int(match.group(1))}:{int(match.group(2))}"
                if dia in known and dia not in ids:
                    ids.append(dia)
    return ids


async def ingest(mem: AsyncMemory, sample: dict[str, Any]) -> tuple[set[str], float]:
    scope = sample["sample_id"]
    known: set[str] = set()
    last = 0.0
    for number, start, turns in sessions(sample["conversation"]):
        items = []
        for index, turn in enumerate(turns):
            known.add(turn["dia_id"])
            items.append(
                {
                    "content": turn_text(turn),
                    "source": turn["speaker"],
                    "timestamp": start + index,
                    "session_id": f"session_{number}",
                    "metadata": {"dia_id": turn["dia_id"]},
                }
            )
        await mem.observe_many(items, user_id=scope)
        last = max(last, start)
    return known, last


def score_question(ranked: list[str], evidence: list[str]) -> dict[str, float]:
    row: dict[str, float] = {}
    wanted = set(evidence)
    for k in KS:
        top = ranked[:k]
        row[f"recall@{k}"] = len(wanted & set(top)) / len(wanted)
        row[f"hit@{k}"] = 1.0 if wanted & set(top) else 0.0
    sessions_wanted = {e.split(":")[0] for e in evidence}
    sessions_top = {r.split(":")[0] for r in ranked[:5]}
    row["session_recall@5"] = len(sessions_wanted & sessions_top) / len(sessions_wanted)
    rank = next((i for i, r in enumerate(ranked, 1) if r in wanted), None)
    row["mrr"] = 1.0 / rank if rank else 0.0
    return row


def mean_rows(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {key: round(statistics.fmean(r[key] for r in rows), 4) for key in rows[0]}


async def run_system(
    name: str,
    retrieval: RetrievalConfig,
    data: list[dict[str, Any]],
    db: str,
    config: UCMAConfig,
    embedder: MemoEmbedder,
    references: dict[str, float],
    known: dict[str, set[str]],
) -> dict[str, Any]:
    config = replace(
        config,
        retrieval=retrieval,
        embedding=replace(EmbeddingConfig(), lru_size=0, persistent_cache=False),
    )
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    latencies: list[float] = []
    cpu: list[float] = []
    signals: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    unscored: list[tuple[str, str]] = []  # (scope, question) asked for confidence only
    async with AsyncMemory(db, config=config, embedder=embedder) as mem:
        for sample in data:
            scope = sample["sample_id"]
            for qa in sample["qa"]:
                category = str(qa["category"])
                evidence = normalise_evidence(qa.get("evidence", []), known[scope])
                if not evidence:
                    if category == ADVERSARIAL:
                        unscored.append((scope, qa["question"]))
                    continue
                start, used = time.perf_counter(), time.process_time()
                result = await mem.recall(
                    qa["question"], limit=20, user_id=scope, reference_time=references[scope]
                )
                latencies.append((time.perf_counter() - start) * 1000)
                cpu.append((time.process_time() - used) * 1000)
                ranked = [h.memory.metadata.get("dia_id") for h in result.hits]
                row = score_question([r for r in ranked if r], evidence)
                rows[category].append(row)
                signal = (result.confidence, result.low_confidence)
                if category == ADVERSARIAL:
                    signals["adversarial"].append(signal)
                elif row[f"hit@{ANSWERABLE_K}"]:
                    signals["answerable"].append(signal)
        for scope, question in unscored:
            result = await mem.recall(
                question, limit=20, user_id=scope, reference_time=references[scope]
            )
            signals["adversarial"].append((result.confidence, result.low_confidence))
        for scope, question in foreign_questions(data):
            result = await mem.recall(
                question, limit=20, user_id=scope, reference_time=references[scope]
            )
            signals["other_conversation"].append((result.confidence, result.low_confidence))
    overall = [r for c in CATEGORIES for r in rows[c]]
    return {
        "overall": mean_rows(overall),
        "by_category": {c: mean_rows(rows[c]) for c in sorted(rows)},
        "questions": {c: len(rows[c]) for c in sorted(rows)},
        "latency_ms": percentiles(latencies),
        "cpu_ms": percentiles(cpu),
        "confidence": confidence_report(signals),
    }


def foreign_questions(data: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(scope, question): conversation i is asked a fixed sample of conversation
    i + 1's questions, which its own turns cannot answer (none for one conversation)."""
    if len(data) < 2:
        return []
    asked = []
    for index, sample in enumerate(data):
        donor = data[(index + 1) % len(data)]
        pool = sorted(qa["question"] for qa in donor["qa"])
        count = min(FOREIGN_PER_CONVERSATION, len(pool))
        picked = random.Random(sample["sample_id"]).sample(pool, count)
        asked += [(sample["sample_id"], question) for question in picked]
    return asked


def confidence_report(signals: dict[str, list[tuple[float, bool]]]) -> dict[str, Any]:
    """ROC AUC of result confidence, answerable against each unanswerable group and
    both together, and the share of ``low_confidence`` per group."""
    answerable = [c for c, _ in signals["answerable"]]
    groups = ("adversarial", "other_conversation")
    unanswerable = [c for g in groups for c, _ in signals[g]]

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return {
        "auc": rounded(roc_auc(answerable, unanswerable)),
        **{f"auc_{g}": rounded(roc_auc(answerable, [c for c, _ in signals[g]])) for g in groups},
        "count": {g: len(signals[g]) for g in ("answerable", *groups)},
        "low_confidence_share": {
            g: rounded(share([f for _, f in signals[g]])) for g in ("answerable", *groups)
        },
    }


def markdown(results: dict[str, Any]) -> str:
    lines = [
        f"Store: {results.get('backend', 'sqlite')}, {results['date']}.",
        "",
        "| system | R@1 | R@5 | R@10 | R@20 | hit@1 | hit@10 | session R@5 | MRR "
        "| p50 ms | p95 ms | CPU p50 ms | CPU p95 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results["systems"].items():
        o = r["overall"]
        lines.append(
            f"| {name} | {o['recall@1']:.3f} | {o['recall@5']:.3f} | {o['recall@10']:.3f} | "
            f"{o['recall@20']:.3f} | {o['hit@1']:.3f} | {o['hit@10']:.3f} | "
            f"{o['session_recall@5']:.3f} | {o['mrr']:.3f} | {r['latency_ms']['p50']} | "
            f"{r['latency_ms']['p95']} | {r['cpu_ms']['p50']} | {r['cpu_ms']['p95']} |"
        )
    lines += [
        "",
        "Recall@10 by category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, "
        "5 adversarial):",
        "",
        "| system | 1 | 2 | 3 | 4 | 5 |",
        "|---|---|---|---|---|---|",
    ]
    for name, r in results["systems"].items():
        cats = r["by_category"]
        cells = [f"{cats[c]['recall@10']:.3f}" if c in cats else "-" for c in "12345"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Confidence: ROC AUC of result.confidence, answerable (categories 1-4, evidence in the "
        "top 10) against unanswerable (category 5 + another conversation's questions); "
        "low_confidence share per group:",
        "",
        "| system | AUC | AUC vs cat. 5 | AUC vs other conv. | n ans / cat. 5 / other "
        "| low-conf answerable | low-conf cat. 5 | low-conf other conv. |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results["systems"].items():
        c = r["confidence"]
        n, low = c["count"], c["low_confidence_share"]

        def cell(value: float | None) -> str:
            return "-" if value is None else f"{value:.3f}"

        lines.append(
            f"| {name} | {cell(c['auc'])} | {cell(c['auc_adversarial'])} | "
            f"{cell(c['auc_other_conversation'])} | {n['answerable']} / {n['adversarial']} / "
            f"{n['other_conversation']} | {cell(low['answerable'])} | "
            f"{cell(low['adversarial'])} | {cell(low['other_conversation'])} |"
        )
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument(
        "--database",
        help="the store to ingest into, a path or URL holding no memories yet "
        "(default: a new SQLite file in a temporary folder)",
    )
    parser.add_argument(
        "--vector-cache", type=Path, default=DEFAULT_PATH, help="document vectors kept between runs"
    )
    parser.add_argument("--no-vector-cache", action="store_true", help="embed every text afresh")
    args = parser.parse_args()

    data = json.loads(args.data.read_text())
    disk = None if args.no_vector_cache else DiskVectors(args.vector_cache)
    # One intra-op thread, as the engine's own embedder runs (engine/base.py): with one
    # per core, the model call's threads spin and contend with the storage thread.
    embedder = MemoEmbedder(LocalEmbedder(intra_op_threads=1), disk)
    with bench_store(args.database) as location:
        results: dict[str, Any] = {
            "data": str(args.data),
            "date": time.strftime("%Y-%m-%d"),
            "backend": location.scheme,
            "systems": {},
        }
        db = location.url
        config = store_config(location)
        references: dict[str, float] = {}
        known: dict[str, set[str]] = {}
        start = time.perf_counter()
        async with AsyncMemory(db, config=config, embedder=embedder) as mem:
            if await mem.scopes(limit=1):
                sys.exit(f"{location} already holds memories; give an empty database")
            for sample in data:
                known[sample["sample_id"]], references[sample["sample_id"]] = await ingest(
                    mem, sample
                )
        turns = sum(len(k) for k in known.values())
        print(f"ingested {turns} turns in {time.perf_counter() - start:.1f}s", file=sys.stderr)
        embedder.memoise = False
        for name in args.systems:
            row = await run_system(
                name, SYSTEMS[name], data, db, config, embedder, references, known
            )
            results["systems"][name] = row
            o = row["overall"]
            print(
                f"{name:8} R@10 {o['recall@10']:.3f} hit@1 {o['hit@1']:.3f} "
                f"R@5 {o['recall@5']:.3f} MRR {o['mrr']:.3f} p50 {row['latency_ms']['p50']}ms "
                f"p95 {row['latency_ms']['p95']}ms CPU p50 {row['cpu_ms']['p50']}ms "
                f"p95 {row['cpu_ms']['p95']}ms "
                f"AUC {row['confidence']['auc']}",
                file=sys.stderr,
                flush=True,
            )
    table = markdown(results)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(table)


if __name__ == "__main__":
    asyncio.run(main())
