"""Lifecycle benchmark: 90 simulated days with the gardener on schedule.

Streams at least 50,000 short synthetic observations over 90 simulated days
(a ``SimulatedClock``) into a fresh SQLite file, with the maintenance the
server runs: every ``--tick-hours`` (12) a sleep cycle for every scope and the
gardener's due jobs (daily decay, weekly consolidate + prune, monthly
identity). Mixed into the stream are ``--important`` (up to 100) explicit
statements, "Remember that my <attribute> is <value>." with every attribute
and value unique, at random days in the first 75; like real important facts
they come up again: each is recalled once, two to three weeks after it was
stated. At the end every important fact is asked about ("what is my
<attribute>?") and counts as recalled when its value appears in one of the
top five hits.

The run is done twice on the same stream, forgetting on (the defaults) and
off (``ForgettingConfig(enabled=False)``: nothing archived or purged), and
prints:

- the store size (live memories) at the end of each day, both runs;
- recall of the important set at the end, on versus off;
- consolidation throughput: episodes handled by the compress and abstract
  phases per second of sleep-cycle time (forgetting on).

Embeddings are computed once by the packaged model and memoised across the
two runs (the same real vectors; it halves the run time).

Usage: ``python bench/lifecycle.py [--observations 50000] [--out bench/results/lifecycle.json]``
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
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ucma.config import ConsolidationConfig, ForgettingConfig, UCMAConfig
from ucma.embeddings import Embedder, LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.lifecycle.clock import SimulatedClock

DAYS = 90
T0 = 1_700_000_000.0
DAY = 86_400.0

SUBJECTS = ["I", "We", "The team", "Jon", "Caroline", "My neighbour", "Grandma", "The client"]
VERBS = ["talked about", "cooked", "cancelled", "tried", "painted", "forgot about", "booked"]
OBJECTS = [
    "the quarterly report", "a lemon cake", "the dentist appointment", "the bike repair",
    "a new playlist", "the garden fence", "the train tickets", "a board game night",
    "the kitchen lamp", "the weekend hike", "a pottery class", "the tax forms",
]  # fmt: skip
TAILS = ["after lunch", "this morning", "before the meeting", "late at night", "on the bus"]
ATTRIBUTES = [
    "gym locker code", "dentist", "blood type", "car plate", "wifi password", "favourite tea",
    "bank branch", "passport office", "bike lock combination", "cat's name", "landlord",
    "shoe size", "family doctor", "office floor", "parking spot", "insurance company",
    "router brand", "piano teacher", "childhood street", "sister's name", "brother's job",
    "mother's home town", "father's favourite band", "best friend's birthday", "dog's vet",
    "allergy", "middle name", "favourite pizza topping", "running club", "book club host",
    "tax advisor", "electricity supplier", "mobile carrier", "favourite beach", "yoga studio",
    "barber", "plumber", "locksmith", "guitar brand", "laptop model", "coffee grinder",
    "preferred airline", "frequent flyer number", "seat preference", "hotel chain",
    "rental car company", "favourite museum", "wine region", "cheese shop", "bakery",
    "florist", "tailor", "optician", "pharmacy", "physiotherapist", "swimming pool",
    "chess opponent", "tennis partner", "climbing gym", "ski resort", "camping spot",
    "fishing lake", "garden centre", "hardware store", "bookshop", "record store",
    "cinema", "theatre", "concert hall", "football team", "cricket club", "rugby team",
    "podcast", "newspaper", "magazine subscription", "streaming service", "video game",
    "board game", "card game", "crossword setter", "poet", "painter", "sculptor",
    "architect", "composer", "violin maker", "pottery teacher", "language tutor",
    "driving instructor", "mortgage broker", "accountant", "lawyer", "notary", "dentist's nurse",
    "children's school", "nursery teacher", "babysitter", "cleaner", "window washer",
    "chimney sweep",
]  # fmt: skip
SYLLABLES = ["zeph", "quill", "mar", "tob", "vel", "ori", "kes", "brin", "sol", "ave", "cal", "dun"]


class MemoEmbedder(Embedder):
    """The packaged model with an unbounded text -> vector memo (shared by both runs)."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.memo: dict[str, np.ndarray] = {}

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.memo))
        if missing:
            vectors = await self.inner.embed(missing)
            self.memo.update(zip(missing, vectors, strict=True))
        return np.stack([self.memo[t] for t in texts])


def stream(total: int, important: int, seed: int) -> tuple[list[list[str]], list[dict]]:
    """Observations per day, and the important facts (day stated, day recalled, query, value)."""
    rng = random.Random(seed)
    per_day = -(-total // DAYS)
    days: list[list[str]] = [[] for _ in range(DAYS)]
    counter = 0
    for day in range(DAYS):
        for _ in range(per_day):
            counter += 1
            days[day].append(
                f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
                f"{rng.choice(TAILS)}, note {counter}."
            )
    facts = []
    values: set[str] = set()
    while len(values) < important:
        values.add("".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize())
    ordered = sorted(values)
    rng.shuffle(ordered)
    for thing, value in zip(ATTRIBUTES[:important], ordered, strict=True):
        stated = rng.randint(0, 75)
        facts.append(
            {
                "statement": f"Remember that my {thing} is {value}.",
                "query": f"what is my {thing}?",
                "value": value,
                "stated": stated,
                "recalled": min(DAYS - 1, stated + rng.randint(14, 21)),
            }
        )
    return days, facts


async def simulate(
    embedder: Embedder,
    days: Sequence[Sequence[str]],
    facts: Sequence[dict],
    *,
    forgetting: bool,
    tick_hours: float,
    folder: Path,
) -> dict:
    clock = SimulatedClock(T0)
    config = UCMAConfig(
        consolidation=ConsolidationConfig(on_new_session="off"),
        forgetting=ForgettingConfig(enabled=forgetting),
    )
    path = folder / f"lifecycle-{'on' if forgetting else 'off'}.db"
    sizes: list[int] = []
    sleep_seconds = 0.0
    episodes = 0
    ticks = int(24 / tick_hours)
    async with AsyncMemory(
        path, user_id="bench", embedder=embedder, clock=clock, config=config
    ) as memory:
        for day, texts in enumerate(days):
            todays = [f["statement"] for f in facts if f["stated"] == day]
            chunk = -(-len(texts) // ticks)
            for tick in range(ticks):
                part = list(texts[tick * chunk : (tick + 1) * chunk])
                if tick == 0:
                    part = todays + part
                if part:
                    await memory.observe_many(part)
                clock.advance(hours=tick_hours)
                started = time.perf_counter()
                reports = await memory.sleep_all()
                sleep_seconds += time.perf_counter() - started
                episodes += sum(r.episodes_processed for r in reports)
                await memory.run_gardener()
            for fact in facts:
                if fact["recalled"] == day:
                    await memory.remember(fact["query"], limit=5)
            stats = await memory.stats()
            sizes.append(sum(stats["memories"].values()))
            if day % 10 == 9:
                print(f"  forgetting {'on ' if forgetting else 'off'} day {day + 1}: "
                      f"{sizes[-1]} live memories", file=sys.stderr, flush=True)  # fmt: skip
        found = 0
        for fact in facts:
            hits = await memory.remember(fact["query"], limit=5)
            found += any(fact["value"] in hit.content for hit in hits)
    return {
        "store_size_by_day": sizes,
        "important_recall": found / len(facts),
        "consolidation_episodes_per_s": episodes / sleep_seconds if sleep_seconds else 0.0,
        "sleep_seconds": sleep_seconds,
        "episodes_consolidated": episodes,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--observations", type=int, default=50_000)
    parser.add_argument("--important", type=int, default=100, help="at most 100")
    parser.add_argument("--tick-hours", type=float, default=12.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    days, facts = stream(args.observations, args.important, args.seed)
    observations = sum(len(d) for d in days) + len(facts)
    embedder = MemoEmbedder(LocalEmbedder())
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ucma-lifecycle-") as scratch:
        options = {"tick_hours": args.tick_hours, "folder": Path(scratch)}
        on = await simulate(embedder, days, facts, forgetting=True, **options)
        off = await simulate(embedder, days, facts, forgetting=False, **options)
    result = {
        "days": DAYS,
        "observations": observations,
        "important_facts": len(facts),
        "tick_hours": args.tick_hours,
        "store_size_by_day": on["store_size_by_day"],
        "store_size_by_day_forgetting_off": off["store_size_by_day"],
        "important_recall_forgetting_on": on["important_recall"],
        "important_recall_forgetting_off": off["important_recall"],
        "consolidation_episodes_per_s": round(on["consolidation_episodes_per_s"], 1),
        "episodes_consolidated": on["episodes_consolidated"],
        "sleep_seconds_forgetting_on": round(on["sleep_seconds"], 2),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "processor": platform.machine()},
    }
    print(f"observations: {observations} over {DAYS} simulated days")
    print("store size (live memories) every 10 days, forgetting on / off:")
    for day in range(9, DAYS, 10):
        print(f"  day {day + 1:>2}: {on['store_size_by_day'][day]:>6} / "
              f"{off['store_size_by_day'][day]:>6}")  # fmt: skip
    print(
        f"important-set recall@5: forgetting on {on['important_recall']:.3f}, "
        f"off {off['important_recall']:.3f}"
    )
    print(f"consolidation throughput: {result['consolidation_episodes_per_s']} episodes/s")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
