"""Paraphrase benchmark: facts asked about later in other words, among close distractors.

The set comes from ``bench/paraphrase_data.py`` (its own generator and
vocabulary, seeded): by default 360 facts about named people and their
relatives, each with a question sharing almost no content word with it and two
or three close distractors (same person, neighbouring relation, namesake).

Protocol, through the public API only: every fact and distractor is written
with ``observe``, one at a time, in a seeded random order, over 90 simulated
days (``SimulatedClock``; each memory's timestamp is the time it was observed).
With ``--stores 1`` all pairs share one scope; ``--stores N`` deals the pairs
into N scopes of the same file (the everyday case: small stores). A fact that
``observe`` did not store as its own memory (below the importance threshold, or
merged into a near-duplicate) is reported and its question left out. Each
question's gold is the memory id ``observe`` returned for the fact.

Then every question is asked, in a seeded random order, by each system, each on
its own copy of the store (so one system's reads, which reinforce memories, do
not change another's). Systems: ``recall`` (default pipeline, cascade on),
``remember`` (default pipeline, no cascade), ``dense`` and ``keyword`` (``recall``
under ``RetrievalConfig.ablation``), and ``cosine``: exact cosine between the
question and every stored memory with the same embedder, outside the engine, as
the reference the dense channel should reach. A fact the engine extracted from
an observed statement counts as that statement when it holds the whole answer
(so finding the gold through its extracted fact is a hit; a fragment is not).
Reported: Recall@1, @5, @10 (the gold is in the top k), MRR over the top 10,
latency p50 / p95 (query embedding included), per domain, and what took first
place when the gold did not.

Usage: ``python bench/paraphrase.py [--pairs 360] [--stores 1 12]
[--out bench/results/paraphrase.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from locomo import MemoEmbedder  # noqa: E402
from metrics import percentiles  # noqa: E402
from paraphrase_data import Pair, Statement, generate, split  # noqa: E402
from ucma import SimulatedClock  # noqa: E402
from ucma.config import EmbeddingConfig, RetrievalConfig, UCMAConfig  # noqa: E402
from ucma.embeddings import LocalEmbedder  # noqa: E402
from ucma.engine import AsyncMemory  # noqa: E402

KS = (1, 5, 10)
LIMIT = 10
START = 1_748_736_000.0  # 2025-06-01 00:00 UTC
SPAN_DAYS = 90.0
SYSTEMS = ("recall", "remember", "dense", "keyword", "cosine")
CONFIGS: dict[str, RetrievalConfig] = {
    "recall": RetrievalConfig(),
    "remember": RetrievalConfig(),
    "dense": RetrievalConfig.ablation("dense"),
    "keyword": RetrievalConfig.ablation("keyword"),
}


@dataclass
class Store:
    """One scope's pairs, what ``observe`` did with each statement, and the gold ids."""

    scope: str
    pairs: list[Pair]
    by_id: dict[str, Statement] = field(default_factory=dict)
    gold: dict[int, str] = field(default_factory=dict)
    not_stored: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Asked:
    store: Store
    pair: Pair


async def ingest(mem: AsyncMemory, clock: SimulatedClock, stores: list[Store], seed: int) -> None:
    rng = random.Random(seed)
    total = sum(len(p.statements) for s in stores for p in s.pairs)
    step = SPAN_DAYS * 86_400 / total
    for store in stores:
        statements = [st for p in store.pairs for st in p.statements]
        rng.shuffle(statements)
        for st in statements:
            clock.advance(seconds=step * rng.uniform(0.5, 1.5))
            obs = await mem.observe(st.text, timestamp=clock.now(), user_id=store.scope)
            if obs.stored and obs.merged_into is None:
                store.by_id[obs.id] = st
                if st.role == "fact":
                    store.gold[st.pair] = obs.id
            else:
                store.not_stored.append(
                    {
                        "text": st.text,
                        "role": st.role,
                        "stored": obs.stored,
                        "importance": round(obs.importance, 3),
                        "merged_into": store.by_id[obs.merged_into].text
                        if obs.merged_into in store.by_id
                        else obs.merged_into,
                    }
                )


def snapshot(source: Path, target: Path) -> None:
    """A consistent copy of the SQLite file (the online backup API)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


@dataclass(frozen=True)
class Found:
    """One ranked result as the benchmark reads it."""

    key: str
    """The observed statement's memory id, or the hit's own id."""
    statement: Statement | None
    """The observed statement it is or was extracted from (None: neither)."""
    extracted: bool = False


def resolve(store: Store, hit: Any) -> Found:
    """A hit as a statement. A fact the engine extracted from an observed statement
    stands for that statement when it states the whole answer (the slot's words),
    so the gold may be found through it; otherwise it counts as a miss."""
    statement = store.by_id.get(hit.id)
    if statement is not None:
        return Found(hit.id, statement)
    for source in getattr(hit.memory, "source_episode_ids", None) or ():
        statement = store.by_id.get(source)
        if statement is not None:
            text = hit.content.lower()
            whole = all(part.lower() in text for part in statement.answer)
            return Found(source if whole else hit.id, statement, extracted=True)
    return Found(hit.id, None)


def top_error(pair: Pair, top: Found | None) -> str:
    """What took first place instead of the gold."""
    if top is None:
        return "nothing"
    st = top.statement
    if st is None:
        label = "not from an observed statement"
    elif st.pair == pair.index:
        is_gold = st.role == "fact"
        label = "gold, extracted without the answer" if is_gold else f"own distractor: {st.role}"
    elif st.person == pair.fact.person:
        label = "same person, other pair"
    elif st.person.split()[0] == pair.fact.person.split()[0]:
        label = "same first name, other pair"
    elif st.relation == pair.fact.relation:
        label = "same relation, other person"
    else:
        label = "unrelated"
    if top.extracted and label != "gold, extracted without the answer":
        label += " (extracted fact)"
    return label


def gold_rank(ranked: list[Found], gold: str) -> int | None:
    return next((i for i, f in enumerate(ranked, 1) if f.key == gold), None)


def score(rank: int | None) -> dict[str, float]:
    row = {f"recall@{k}": 1.0 if rank and rank <= k else 0.0 for k in KS}
    row["mrr"] = 1.0 / rank if rank else 0.0
    return row


def mean_rows(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.fmean(r[key] for r in rows), 4) for key in rows[0]}


async def ask_engine(name: str, mem: AsyncMemory, asked: Asked) -> tuple[list[Found], float]:
    start = time.perf_counter()
    if name == "remember":
        hits = await mem.remember(asked.pair.question, limit=LIMIT, user_id=asked.store.scope)
    else:
        result = await mem.recall(asked.pair.question, limit=LIMIT, user_id=asked.store.scope)
        hits = result.hits
    elapsed = (time.perf_counter() - start) * 1000
    return [resolve(asked.store, h) for h in hits], elapsed


class CosineIndex:
    """Exact cosine over each scope's stored memories, with the same embedder."""

    def __init__(self, embedder: MemoEmbedder, stores: list[Store]) -> None:
        self.embedder = embedder
        self.matrices: dict[str, tuple[list[str], np.ndarray]] = {}
        for store in stores:
            ids = list(store.by_id)
            vectors = np.stack([embedder.documents[store.by_id[i].text] for i in ids])
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            self.matrices[store.scope] = (ids, vectors)

    async def ask(self, asked: Asked) -> tuple[list[Found], float]:
        start = time.perf_counter()
        query = (await self.embedder.inner.embed([asked.pair.question]))[0]
        ids, vectors = self.matrices[asked.store.scope]
        sims = vectors @ (query / np.linalg.norm(query))
        order = np.argsort(-sims, kind="stable")[:LIMIT]
        by_id = asked.store.by_id
        elapsed = (time.perf_counter() - start) * 1000
        return [Found(ids[i], by_id[ids[i]]) for i in order], elapsed


def _hit(hit: Any) -> dict[str, Any]:
    return {
        "content": hit.content,
        "score": round(hit.score, 4),
        "relevance": round(hit.relevance, 4),
        "channels": {k: round(v, 4) for k, v in hit.channels.items()},
    }


async def explain_failures(
    db: Path, end: float, embedder: MemoEmbedder, chosen: list[Asked]
) -> list[dict[str, Any]]:
    """Ask failed questions again with ``explain=True`` on the store ``recall`` used,
    as it stands after its run: the gold, what ranked first, and their channel scores."""
    config = UCMAConfig(embedding=replace(EmbeddingConfig(), lru_size=0, persistent_cache=False))
    out = []
    async with AsyncMemory(db, config=config, embedder=embedder, clock=SimulatedClock(end)) as mem:
        for asked in chosen:
            result = await mem.recall(
                asked.pair.question, limit=LIMIT, user_id=asked.store.scope, explain=True
            )
            gold = asked.store.gold[asked.pair.index]
            hits = result.hits
            found = [resolve(asked.store, h) for h in hits]
            rank = gold_rank(found, gold)
            plan = {k: v for k, v in result.explanation.items() if k != "hits"}
            out.append(
                {
                    "question": asked.pair.question,
                    "gold": asked.pair.fact.text,
                    "gold_rank": rank,
                    "gold_hit": _hit(hits[rank - 1]) if rank else None,
                    "first": _hit(hits[0]) if hits else None,
                    "first_is": top_error(asked.pair, found[0] if found else None),
                    "plan": plan,
                }
            )
    return out


async def run_system(
    name: str,
    db: Path,
    end: float,
    embedder: MemoEmbedder,
    questions: list[Asked],
    cosine: CosineIndex,
) -> dict[str, Any]:
    rows: list[dict[str, float]] = []
    by_domain: dict[str, list[dict[str, float]]] = defaultdict(list)
    errors: Counter[str] = Counter()
    times: list[float] = []
    ranks: dict[int, int | None] = {}
    extracted = [0]

    def record(asked: Asked, ranked: list[Found], elapsed: float) -> None:
        rank = gold_rank(ranked, asked.store.gold[asked.pair.index])
        ranks[asked.pair.index] = rank
        if rank and ranked[rank - 1].extracted:
            extracted[0] += 1
        row = score(rank)
        rows.append(row)
        by_domain[asked.pair.domain].append(row)
        times.append(elapsed)
        if row["recall@1"] < 1:
            errors[top_error(asked.pair, ranked[0] if ranked else None)] += 1

    if name == "cosine":
        for asked in questions:
            ranked, elapsed = await cosine.ask(asked)
            record(asked, ranked, elapsed)
    else:
        config = UCMAConfig(
            retrieval=CONFIGS[name],
            embedding=replace(EmbeddingConfig(), lru_size=0, persistent_cache=False),
        )
        clock = SimulatedClock(end)
        async with AsyncMemory(db, config=config, embedder=embedder, clock=clock) as mem:
            for asked in questions:
                ranked, elapsed = await ask_engine(name, mem, asked)
                record(asked, ranked, elapsed)
    return {
        "overall": mean_rows(rows),
        "questions": len(rows),
        "latency_ms": percentiles(times),
        "by_domain": {d: mean_rows(r) for d, r in sorted(by_domain.items())},
        "top1_errors": dict(errors.most_common()),
        "gold_found_as_extracted_fact": extracted[0],
        "ranks": ranks,
    }


async def run_setting(
    pairs: list[Pair], n_stores: int, args: argparse.Namespace, embedder: MemoEmbedder
) -> dict[str, Any]:
    stores = [
        Store(f"paraphrase-{n_stores}-{i}", group) for i, group in enumerate(split(pairs, n_stores))
    ]
    clock = SimulatedClock(START)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "paraphrase.db"
        embedder.memoise = True
        started = time.perf_counter()
        async with AsyncMemory(base, embedder=embedder, clock=clock) as mem:
            await ingest(mem, clock, stores, args.seed)
        print(
            f"stores={n_stores}: observed {sum(len(p.statements) for p in pairs)} statements "
            f"in {time.perf_counter() - started:.1f}s",
            file=sys.stderr,
        )
        embedder.memoise = False
        end = clock.now() + 3_600
        questions = [Asked(s, p) for s in stores for p in s.pairs if p.index in s.gold]
        random.Random(args.seed + 1).shuffle(questions)
        if args.limit:
            questions = questions[: args.limit]
        cosine = CosineIndex(embedder, stores)
        systems: dict[str, Any] = {}
        for name in args.systems:
            copy = Path(tmp) / f"{name}.db"
            if name != "cosine":
                snapshot(base, copy)
            systems[name] = await run_system(name, copy, end, embedder, questions, cosine)
            o = systems[name]["overall"]
            print(
                f"  {name:8} R@1 {o['recall@1']:.3f} R@5 {o['recall@5']:.3f} "
                f"R@10 {o['recall@10']:.3f} MRR {o['mrr']:.3f} "
                f"p50 {systems[name]['latency_ms']['p50']}ms",
                file=sys.stderr,
                flush=True,
            )
        failures = []
        if "recall" in systems and args.examples:
            failures = await explain_failures(
                Path(tmp) / "recall.db", end, embedder, pick_failures(systems, questions, args)
            )
    not_stored = [n for s in stores for n in s.not_stored]
    sizes = [sum(len(p.statements) for p in s.pairs) for s in stores]
    return {
        "stores": n_stores,
        "memories_per_store": {"min": min(sizes), "max": max(sizes)},
        "questions": len(questions),
        "facts_not_stored": sum(1 for n in not_stored if n["role"] == "fact"),
        "distractors_not_stored": sum(1 for n in not_stored if n["role"] != "fact"),
        "not_stored": not_stored,
        "systems": systems,
        "recall_failures": failures,
    }


def pick_failures(
    systems: dict[str, Any], questions: list[Asked], args: argparse.Namespace
) -> list[Asked]:
    """Questions ``recall`` missed at rank 1, those the baseline (``dense``, else
    ``cosine``) got right first, in a seeded random order."""
    baseline = systems.get("dense") or systems.get("cosine")
    recall = systems["recall"]["ranks"]
    missed = [a for a in questions if recall[a.pair.index] != 1]
    random.Random(args.seed + 2).shuffle(missed)
    if baseline:
        missed.sort(key=lambda a: baseline["ranks"][a.pair.index] != 1)
    return missed[: args.examples]


def describe(pairs: list[Pair]) -> dict[str, Any]:
    overlaps = [p.overlap for p in pairs]
    return {
        "pairs": len(pairs),
        "distractors": sum(len(p.distractors) for p in pairs),
        "distractor_roles": dict(Counter(d.role for p in pairs for d in p.distractors)),
        "people": len({s.person for p in pairs for s in p.statements}),
        "domains": dict(sorted(Counter(p.domain for p in pairs).items())),
        "relations": len({p.relation for p in pairs}),
        "question_fact_overlap": {
            "mean": round(statistics.fmean(overlaps), 4),
            "zero_share": round(sum(o == 0 for o in overlaps) / len(overlaps), 4),
        },
    }


def markdown(results: dict[str, Any]) -> str:
    lines = [
        "| stores | system | R@1 | R@5 | R@10 | MRR | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for setting in results["settings"]:
        for name, r in setting["systems"].items():
            o = r["overall"]
            lines.append(
                f"| {setting['stores']} | {name} | {o['recall@1']:.3f} | {o['recall@5']:.3f} | "
                f"{o['recall@10']:.3f} | {o['mrr']:.3f} | {r['latency_ms']['p50']} | "
                f"{r['latency_ms']['p95']} |"
            )
    for setting in results["settings"]:
        systems = setting["systems"]
        names = list(systems)
        domains = sorted(next(iter(systems.values()))["by_domain"])
        lines += [
            "",
            f"Recall@1 by domain, {setting['stores']} store(s):",
            "",
            "| domain | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(names),
        ]
        for d in domains:
            cells = [f"{systems[n]['by_domain'][d]['recall@1']:.3f}" for n in names]
            lines.append(f"| {d} | " + " | ".join(cells) + " |")
        kinds = sorted({k for r in systems.values() for k in r["top1_errors"]})
        lines += [
            "",
            f"What ranked first when the gold did not, {setting['stores']} store(s):",
            "",
            "| first place | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(names),
        ]
        for k in kinds:
            cells = [str(systems[n]["top1_errors"].get(k, 0)) for n in names]
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
        if setting["recall_failures"]:
            lines += ["", f"Questions recall missed at rank 1, {setting['stores']} store(s):", ""]
        for f in setting["recall_failures"][:5]:
            first = f["first"] or {}
            gold = f["gold_hit"] or {}
            lines += [
                f"- Q: {f['question']} (class {f['plan'].get('query_class')})",
                f"  - gold (rank {f['gold_rank']}): {f['gold']} {gold.get('channels', '')}",
                f"  - first ({f['first_is']}): {first.get('content')} {first.get('channels')}",
            ]
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=360)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--stores", type=int, nargs="+", default=[1])
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--limit", type=int, default=0, help="ask only the first N questions")
    parser.add_argument("--examples", type=int, default=10, help="failing recall questions kept")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results/paraphrase.json"
    )
    args = parser.parse_args()

    pairs = generate(args.pairs, args.seed)
    embedder = MemoEmbedder(LocalEmbedder())
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "seed": args.seed,
        "limit": LIMIT,
        "data": describe(pairs),
        "settings": [],
    }
    for n in args.stores:
        results["settings"].append(await run_setting(pairs, n, args, embedder))
    results["pairs"] = [
        {
            "question": p.question,
            "fact": p.fact.text,
            "distractors": {d.role: d.text for d in p.distractors},
            "domain": p.domain,
            "relation": p.relation,
            "overlap": round(p.overlap, 3),
        }
        for p in pairs
    ]
    table = markdown(results)
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    args.out.with_suffix(".md").write_text(table)


if __name__ == "__main__":
    asyncio.run(main())
