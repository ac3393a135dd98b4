"""The learning loop in a simulated world, through the public API only.

A world of ``--topics`` problems. For each, one stored memory gives advice
that works and ``--misleading`` others give plausible advice that does not;
only the simulator knows which is which. An agent asks ``recall`` about a
problem, follows the top-ranked memory's advice (``decide``), and the world
answers with the true outcome: helpful advice succeeds (quality +0.8, with
probability ``--noise`` a -0.5 surprise), misleading advice fails (quality
-0.8, with the same probability a +0.3 fluke). With learning on the agent
reports every outcome (``outcome``); with learning off it never does. Both
agents live in the same run, with the same memories, problems and seed, each
in its own database.

Printed: decision accuracy (share of decisions that followed helpful advice)
per block of 50 decisions, both arms; at the end, per topic, where the
helpful memory ranks against the misleading ones. ``--out PATH`` writes JSON
with ``accuracy_by_block_on``, ``accuracy_by_block_off`` and
``final_gap_points`` (last block, on minus off, in percentage points).

Usage: ``python bench/learning.py [--decisions 500] [--out bench/results/learning.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ucma.config import UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory

BLOCK = 50

# (problem, helpful advice, misleading advice, misleading advice)
WORLD = [
    (
        "slow checkout page",
        "cache the product catalogue in Redis",
        "add more web servers behind the balancer",
        "rewrite the page in a faster framework",
    ),
    (
        "flaky integration tests",
        "pin the test database to a fixed snapshot",
        "rerun the failing tests until they pass",
        "raise the test timeouts tenfold",
    ),
    (
        "memory leak in the worker",
        "close the HTTP sessions the worker opens per job",
        "restart the worker process every hour",
        "give the worker twice the memory",
    ),
    (
        "late nightly reports",
        "move the report query to the read replica",
        "start the report job two hours earlier",
        "split the report into smaller files",
    ),
    (
        "duplicate customer emails",
        "make the send step idempotent with a message key",
        "add a delay before each email is sent",
        "send emails from a second mail server",
    ),
    (
        "high cloud bill",
        "delete the unattached storage volumes",
        "move everything to bigger reserved instances",
        "turn off the monitoring agents",
    ),
    (
        "login timeouts",
        "raise the connection pool size of the auth service",
        "ask users to clear their browser cookies",
        "extend the session token lifetime",
    ),
    (
        "broken search results",
        "rebuild the search index after the schema change",
        "lower the relevance threshold of the search",
        "add synonyms for every product name",
    ),
    (
        "slow mobile app start",
        "load the dashboard data lazily after the first screen",
        "compress every image in the app bundle",
        "ship the app with fewer fonts",
    ),
    (
        "failed payment retries",
        "retry payments with exponential backoff and jitter",
        "retry payments immediately in a tight loop",
        "switch the payment provider",
    ),
    (
        "stale dashboard numbers",
        "invalidate the dashboard cache on each data load",
        "refresh the dashboard page every minute",
        "show the numbers with one decimal less",
    ),
    (
        "noisy on-call alerts",
        "alert on symptoms users see instead of CPU usage",
        "mute alerts during the night",
        "send alerts to a shared mailbox",
    ),
    (
        "slow docker builds",
        "order the Dockerfile so dependencies install before the code copy",
        "build images on a larger machine",
        "use a different base image each week",
    ),
    (
        "data import crashes",
        "stream the import file in chunks instead of loading it whole",
        "import the file twice to be safe",
        "convert the import file to XML first",
    ),
    (
        "timezone bugs in invoices",
        "store invoice times in UTC and convert on display",
        "add one hour to invoice times in summer",
        "print the timezone name on invoices",
    ),
    (
        "unreadable error logs",
        "log structured JSON with a request id on every line",
        "log everything at debug level",
        "email the logs to the team daily",
    ),
    (
        "deploys that break production",
        "run a canary release before the full rollout",
        "deploy only on Friday evenings",
        "deploy all services at the same time",
    ),
    (
        "slow database migrations",
        "add the new index concurrently before backfilling",
        "lock the tables during the whole migration",
        "run migrations from a laptop",
    ),
    (
        "lost file uploads",
        "upload files directly to object storage with signed URLs",
        "keep uploads on the web server disk",
        "ask users to upload smaller files",
    ),
    (
        "confusing API errors",
        "return error codes with a message that says how to fix it",
        "return HTTP 500 for every error",
        "hide error details from all clients",
    ),
    (
        "spiky queue backlog",
        "autoscale consumers on queue depth",
        "drop the oldest messages when the queue grows",
        "pause producers every hour",
    ),
    (
        "slow CSV export",
        "generate the CSV export in a background job",
        "limit exports to the first hundred rows",
        "export to a spreadsheet format instead",
    ),
    (
        "security audit findings",
        "rotate the leaked API keys and revoke the old ones",
        "rename the API keys in the config file",
        "move the keys to a comment in the code",
    ),
    (
        "broken password resets",
        "make reset links single use with a short expiry",
        "send the new password by email",
        "disable password resets for a week",
    ),
    (
        "high page weight",
        "serve images in modern formats at the displayed size",
        "inline every script into the page",
        "add a loading spinner to the page",
    ),
]


def memory_text(problem: str, advice: str) -> str:
    return f"For the {problem}, the fix that worked was to {advice}."


def question(problem: str) -> str:
    return f"How do we fix the {problem}?"


async def build(path: Path, embedder: LocalEmbedder, topics: list[tuple[str, ...]]) -> dict:
    truth: dict[str, dict[str, Any]] = {}
    async with AsyncMemory(path, user_id="agent", embedder=embedder) as mem:
        for index, (problem, good, *bad) in enumerate(topics):
            for advice, helpful in [(good, True), *((b, False) for b in bad)]:
                obs = await mem.observe(memory_text(problem, advice), source="team")
                truth[obs.id] = {"topic": index, "helpful": helpful}
    return truth


async def run_arm(
    path: Path,
    embedder: LocalEmbedder,
    topics: list[tuple[str, ...]],
    truth: dict[str, dict[str, Any]],
    schedule: list[int],
    *,
    learning: bool,
    noise: float,
    seed: int,
    config: UCMAConfig,
) -> dict[str, Any]:
    rng = random.Random(seed)
    followed_helpful: list[int] = []
    async with AsyncMemory(path, user_id="agent", embedder=embedder, config=config) as mem:
        for topic in schedule:
            problem = topics[topic][0]
            result = await mem.recall(question(problem), limit=5, cascade=False)
            advice = [h for h in result.hits if h.id in truth]
            top = advice[0]
            helpful = truth[top.id]["helpful"] and truth[top.id]["topic"] == topic
            followed_helpful.append(1 if helpful else 0)
            trace = await mem.decide(
                [top.id],
                [max(top.score, 1e-6)],
                decision_type="recommendation",
                summary=f"followed advice for problem {topic}",
                confidence=0.6,
                alternatives_count=len(advice) - 1,
                retrieval_id=result.retrieval_id,
            )
            surprise = rng.random() < noise
            quality = (-0.5 if surprise else 0.8) if helpful else (0.3 if surprise else -0.8)
            if learning:
                signal = "task_completed" if quality > 0 else "task_failed"
                await mem.outcome(trace.id, quality, signal)
        ranks = await final_ranks(mem, topics, truth)
        projection = await mem.replay()
    blocks = [
        round(100 * statistics.fmean(followed_helpful[i : i + BLOCK]), 1)
        for i in range(0, len(followed_helpful), BLOCK)
    ]
    return {"blocks": blocks, "ranks": ranks, "replay_matches_live": projection.matches_live}


async def final_ranks(
    mem: AsyncMemory, topics: list[tuple[str, ...]], truth: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Per topic: rank of the helpful memory and of the best misleading one."""
    above = 0
    helpful_ranks: list[int] = []
    misleading_ranks: list[int] = []
    for index, (problem, *_rest) in enumerate(topics):
        hits = await mem.remember(question(problem), limit=10)
        own = [h for h in hits if truth.get(h.id, {}).get("topic") == index]
        ranked = [truth[h.id]["helpful"] for h in own]
        if True in ranked:
            helpful_ranks.append(ranked.index(True) + 1)
        bad = [i + 1 for i, ok in enumerate(ranked) if not ok]
        misleading_ranks.extend(bad)
        if ranked and ranked[0]:
            above += 1
    return {
        "topics_helpful_first": above,
        "topics": len(topics),
        "mean_rank_helpful": round(statistics.fmean(helpful_ranks), 3) if helpful_ranks else None,
        "mean_rank_misleading": round(statistics.fmean(misleading_ranks), 3)
        if misleading_ranks
        else None,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=500)
    parser.add_argument("--topics", type=int, default=len(WORLD))
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.decisions < BLOCK:
        parser.error(f"--decisions must be at least {BLOCK}")
    topics = WORLD[: max(1, min(args.topics, len(WORLD)))]
    schedule_rng = random.Random(args.seed)
    schedule = [schedule_rng.randrange(len(topics)) for _ in range(args.decisions)]
    embedder = LocalEmbedder()
    config = UCMAConfig()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        arms = {}
        for name, learning in (("on", True), ("off", False)):
            path = Path(tmp) / f"{name}.db"
            truth = await build(path, embedder, topics)
            arms[name] = await run_arm(
                path,
                embedder,
                topics,
                truth,
                schedule,
                learning=learning,
                noise=args.noise,
                seed=args.seed,
                config=config,
            )
    await embedder.aclose()
    on, off = arms["on"]["blocks"], arms["off"]["blocks"]
    print(f"{'block':>5} {'decisions':>10} {'learning on':>12} {'learning off':>13}")
    for i, (a, b) in enumerate(zip(on, off, strict=True)):
        print(f"{i + 1:>5} {f'{i * BLOCK + 1}-{(i + 1) * BLOCK}':>10} {a:>11.1f}% {b:>12.1f}%")
    gap = round(on[-1] - off[-1], 1)
    print(f"final gap: {gap:+.1f} points (last block, on - off)")
    for name in ("on", "off"):
        r = arms[name]["ranks"]
        print(
            f"learning {name}: helpful memory ranked first for {r['topics_helpful_first']}/"
            f"{r['topics']} problems; mean rank helpful {r['mean_rank_helpful']}, "
            f"misleading {r['mean_rank_misleading']}; replay equals live state: "
            f"{arms[name]['replay_matches_live']}"
        )
    print(f"({time.perf_counter() - started:.1f} s)")
    if args.out:
        result = {
            "decisions": args.decisions,
            "topics": len(topics),
            "misleading_per_topic": 2,
            "noise": args.noise,
            "seed": args.seed,
            "block_size": BLOCK,
            "salience_weight": config.retrieval.salience_weight,
            "outcome_weight": config.retrieval.outcome_weight,
            "ranking": config.retrieval.ranking,
            "accuracy_by_block_on": on,
            "accuracy_by_block_off": off,
            "final_gap_points": gap,
            "final_ranks_on": arms["on"]["ranks"],
            "final_ranks_off": arms["off"]["ranks"],
            "replay_matches_live": {k: v["replay_matches_live"] for k, v in arms.items()},
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp_out = args.out.with_suffix(args.out.suffix + ".tmp")
        tmp_out.write_text(json.dumps(result, indent=2) + "\n")
        tmp_out.replace(args.out)


if __name__ == "__main__":
    asyncio.run(main())
