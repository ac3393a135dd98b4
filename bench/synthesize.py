"""``synthesize`` latency at 10,000 memories (issue 16: p95 at most 50 ms on this machine).

A fresh SQLite file is filled with a store of about ``--size`` memories: synthetic chat
lines (``bench/core.py``'s, imported) and, through the public API, for the paradigms
synthesis reads, preferences, facts about actions, strategies and pitfalls learned from
trajectories in five task domains, world-model transitions, self-model attempts and
active goals. Then ``synthesize`` runs on distinct queries, each with a task and an
action (every paradigm read), query embedding included, in two conditions:

- ``read_only``: nothing is written between calls, so the scope-wide parts (preferences,
  goals, competences) come from the cache; each task's strategies are new (distinct
  tasks);
- ``after_write``: an observation is written before every call, so every cached part
  that observation can change is read again (the strategies; a fact or preference
  observed would also drop those parts) - the cold path.

The rounds interleave both with two references measured in the same run, so that the
machine's load (other processes share its two cores) moves every series alike:
``remember`` of a fresh query (seed 004's read, what ``bench/core.py`` times) and the
model's embedding of two fresh texts alone (synthesize embeds the query and the task in
one batch). ``synthesize_vs_remember_p50`` is the same-run ratio of medians.

``measure_synthesize(path_or_memory, n_queries)`` is the measurement alone, over an
existing file or an open ``AsyncMemory`` (``bench/paradigms.py`` calls it).

Usage: ``python bench/synthesize.py [--size 10000] [--queries 200] [--out
bench/results/synthesize.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ucma import exchange
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory

sys.path.insert(0, str(Path(__file__).parent))
from core import percentile, run_meta, synthetic_texts  # noqa: E402 - the core bench's helpers
from import_throughput import write_export  # noqa: E402 - its synthetic export

USER = "bench"
DOMAINS: dict[str, dict[str, Any]] = {
    "deploy": {
        "tasks": ["deploy the {x} service to {y}", "roll back the {x} release in {y}"],
        "x": ["billing", "search", "auth", "checkout", "reports", "gateway"],
        "y": ["staging", "eu-west", "us-east", "production", "the canary pool"],
        "steps": [
            ["run the test suite", "build the image", "push the image", "apply the manifest"],
            ["freeze merges", "tag the release", "deploy to canary", "promote to all"],
        ],
        "failure": "the migration locked the table",
    },
    "sql queries": {
        "tasks": ["write a sql query for {x} by {y}", "speed up the {x} report query on {y}"],
        "x": ["monthly revenue", "active users", "churned accounts", "refunds", "signups"],
        "y": ["region", "week", "plan", "country", "channel"],
        "steps": [
            ["inspect the schema", "write the joins", "add the group by", "check the plan"],
            ["read the explain plan", "add an index", "rewrite the subquery", "compare timings"],
        ],
        "failure": "recursive queries",
    },
    "email": {
        "tasks": ["draft an email to {x} about {y}", "reply to {x} about {y}"],
        "x": ["the client", "the landlord", "our manager", "the vendor", "the recruiter"],
        "y": ["the delay", "the invoice", "the contract", "next week's meeting", "the refund"],
        "steps": [
            ["read the thread", "state the ask first", "propose a date", "keep it short"],
            ["check the tone", "answer each question", "add the attachment", "send"],
        ],
        "failure": "the attachment was too large",
    },
    "travel booking": {
        "tasks": ["book a flight to {x} for {y}", "find a hotel in {x} for {y}"],
        "x": ["Lisbon", "Berlin", "Tokyo", "Toronto", "Nairobi", "Lima"],
        "y": ["the offsite", "the conference", "a client visit", "the team trip", "a wedding"],
        "steps": [
            ["check the dates", "compare fares", "pick the refundable fare", "book it"],
            ["check the policy", "filter by distance", "read the reviews", "reserve"],
        ],
        "failure": "the fare expired before payment",
    },
    "data cleaning": {
        "tasks": ["clean the {x} export from {y}", "deduplicate the {x} table from {y}"],
        "x": ["customer", "orders", "inventory", "leads", "payments"],
        "y": ["the CRM", "the old warehouse", "the web form", "the partner feed", "the ERP"],
        "steps": [
            ["profile the columns", "fix the encodings", "drop empty rows", "validate totals"],
            ["normalise the keys", "match near duplicates", "merge them", "spot check"],
        ],
        "failure": "dates in two formats",
    },
}
PREFERENCES = [
    "I prefer short emails with the ask in the first line.",
    "I prefer refundable fares when I travel for work.",
    "I like deploys to happen before noon.",
    "I prefer window seats on long flights.",
    "I hate meetings before 9am.",
    "I prefer dark mode in every editor.",
    "I like reports that start with a chart.",
    "I prefer CSV exports over Excel files.",
]


def _task(rng: random.Random, domain: str) -> str:
    spec = DOMAINS[domain]
    return str(rng.choice(spec["tasks"])).format(x=rng.choice(spec["x"]), y=rng.choice(spec["y"]))


async def fill(mem: AsyncMemory, size: int, workdir: Path, seed: int = 16) -> int:
    """Fill ``mem`` (scope ``bench``) with about ``size`` memories: the chat lines
    through an import (the bulk path; observing them one batch at a time is another
    benchmark's subject), then the paradigms' records through the public API. Returns
    how many memories it holds."""
    rng = random.Random(seed)
    export = workdir / "chat.jsonl"
    write_export(export, synthetic_texts(max(0, size - 150), seed=size), None, "another-model")
    limit = mem.config.limits.max_import_line_bytes
    await mem.import_lines(exchange.iter_lines(export, limit), source=str(export))
    for text in PREFERENCES:
        await mem.observe(text)
    domains = list(DOMAINS)
    for domain in domains:
        spec = DOMAINS[domain]
        for i in range(12):
            task = _task(rng, domain)
            steps = spec["steps"][i % 2]
            success = rng.random() < 0.7
            await mem.learn_from_trajectory(
                task,
                steps,
                success,
                None if success else spec["failure"],
                domain=domain,
            )
        for _ in range(20):
            await mem.record_competence(domain, rng.random() < 0.6, predicted=0.6)
        for region in ("staging", "production"):
            for _ in range(8):
                outcome = "success" if rng.random() < 0.7 else "failure"
                await mem.observe_transition(domain, outcome, context={"target": region})
        await mem.assert_fact(domain, "leads to", "failure when target = production")
        await mem.add_goal(f"get better at {domain} this quarter", priority=rng.random())
    held = int(sum((await mem.stats())["memories"].values()))
    if held < size:  # top up to the size asked for
        await mem.observe_many(synthetic_texts(size - held, seed=size + 1))
    return int(sum((await mem.stats())["memories"].values()))


def queries(count: int, seed: int) -> list[tuple[str, str, str]]:
    """Distinct (query, task, action) triples over the five domains."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[tuple[str, str, str]] = []
    shapes = ["How do I {t}?", "Help me {t}.", "What will happen if I {t}?", "Can I {t} today?"]
    while len(out) < count:
        domain = rng.choice(list(DOMAINS))
        task = _task(rng, domain) + f" (ticket {rng.randrange(10_000)})"
        if task in seen:
            continue
        seen.add(task)
        out.append((rng.choice(shapes).format(t=task), task, domain))
    return out


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


async def _round(mem: AsyncMemory, n: int, items: list[tuple[str, str, str]]) -> list[float]:
    """One round, interleaved so that the machine's load drifts alike for every series:
    ``remember`` of a fresh query (seed 004's read, the reference), the embedding of
    two fresh texts alone (the model's part), ``synthesize`` with nothing written since
    the last call, and ``synthesize`` right after an observation."""
    (q1, _, _), (q2, t2, a2), (q3, t3, a3) = items
    start = time.perf_counter()
    await mem.remember(q1)
    reference = _ms(start)
    start = time.perf_counter()
    await mem.embedder.embed([f"{q1} (again)", f"{t2} (again)"])
    model = _ms(start)
    start = time.perf_counter()
    await mem.synthesize(q2, task=t2, action=a2, context={"target": "staging"})
    read_only = _ms(start)
    await mem.observe(f"Checked the dashboard again, run {n}.")
    start = time.perf_counter()
    await mem.synthesize(q3, task=t3, action=a3, context={"target": "staging"})
    return [reference, model, read_only, _ms(start)]


def _summary(latencies: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(latencies), 2),
        "p95_ms": round(percentile(latencies, 0.95), 2),
        "max_ms": round(max(latencies), 2),
    }


async def measure_synthesize(
    path_or_memory: str | Path | AsyncMemory, n_queries: int, seed: int = 2
) -> dict:
    """``synthesize`` p50/p95 over ``n_queries`` distinct queries (each with a task and an
    action, so every paradigm is read; query embedding included), read-only and with an
    observation written before each call, in the default scope of an open
    ``AsyncMemory``, or of user ``bench`` in the file at a path (``fill`` builds one).
    The second condition writes ``n_queries`` observations into that scope. Queries are
    new to the store only once per ``seed`` (the store keeps query vectors it computed)."""
    if isinstance(path_or_memory, AsyncMemory):
        return await _measure(path_or_memory, n_queries, seed)
    async with AsyncMemory(path_or_memory, user_id=USER) as mem:
        return await _measure(mem, n_queries, seed)


async def _measure(mem: AsyncMemory, n_queries: int, seed: int) -> dict:
    held = int(sum((await mem.stats())["memories"].values()))
    await mem.prepare_search()
    warm = queries(24, seed=1000 + seed)
    for n in range(8):  # model, caches, first-query costs
        await _round(mem, -n, warm[3 * n : 3 * n + 3])
    items = queries(3 * n_queries, seed=seed)
    rounds = [await _round(mem, n, items[3 * n : 3 * n + 3]) for n in range(n_queries)]
    remember, model, read_only, after_write = (list(series) for series in zip(*rounds, strict=True))
    both = read_only + after_write
    return {
        "memories": held,
        "queries": n_queries,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "remember": _summary(remember),
        "embedding_two_texts": _summary(model),
        "read_only": _summary(read_only),
        "after_write": _summary(after_write),
        "synthesize_p50_ms": round(statistics.median(both), 2),
        "synthesize_p95_ms": round(percentile(both, 0.95), 2),
        "synthesize_vs_remember_p50": round(
            statistics.median(both) / statistics.median(remember), 2
        ),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--db", type=Path, help="reuse (or create) this file")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    embedder = LocalEmbedder()
    embedder.load()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "synthesize.db"
        async with AsyncMemory(path, user_id=USER, embedder=embedder) as mem:
            if not path.exists() or sum((await mem.stats())["memories"].values()) == 0:
                start = time.perf_counter()
                held = await fill(mem, args.size, Path(tmp))
                print(f"filled {held} memories in {time.perf_counter() - start:.0f} s",
                      file=sys.stderr)  # fmt: skip
            row = await measure_synthesize(mem, args.queries)
    results = {"meta": run_meta(embedder), **row}
    print(json.dumps(results, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
