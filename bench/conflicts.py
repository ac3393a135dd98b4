"""Conflict resolution benchmark: scripted fact streams through the public API.

Each scenario runs in its own scope of one AsyncMemory whose clock the script
moves (``clock=``), so "40 days later" is exact. Families:

- ``temporal``: a functional value changes more than 30 days later (newest wins);
- ``late_report``: an older value arrives late with an explicit ``valid_from``;
- ``simultaneous``: real ambiguity: two different sources (``metadata={"source":
  ...}``) assert different values within a few days with similar confidence
  (ask the user; some are then answered with ``resolve_conflict``);
- ``restated``: one source states a new value a few days after its own earlier,
  unconfirmed one, with similar confidence: a clear later statement, so the
  newest supersedes (``keep_newest``) and nobody is asked;
- ``confidence``: a clear confidence gap decides;
- ``reinforced``: a value confirmed several times beats a new one-off;
- ``low_confidence``: a weak belief is simply replaced;
- ``multi_valued``: values of likes / visited / speaks ... accumulate, never conflict;
- ``unrelated``: a change next to many bystander facts;
- ``source_of_truth``: a real SQLite sales_orders database overrides memory;
- ``multi_hop``: a premise changes under conclusions derived from it 1 to 3 hops away;
- ``seed``: seed 002's examples 2 and 3.

Every scenario also asserts bystander facts (other predicates of the same
subject, the same predicate of other subjects, multi-valued facts, a
conclusion drawn from a bystander). Metrics:

- resolution accuracy: scenarios whose final current value(s), pending state
  and strategy are the expected ones;
- collateral invalidations: bystanders superseded, decayed, disputed or
  flagged for review (target 0);
- stale conclusions flagged: conclusions resting on a changed premise that
  were flagged for review (target 100%).

Usage: ``python bench/conflicts.py [--out bench/results/conflicts.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ucma import AsyncMemory, ConflictStatus, FactStatus, LearningType, SQLSourceOfTruth
from ucma.embeddings import LocalEmbedder

DAY = 86_400.0
T0 = 1_704_096_000.0  # 2024-01-01 08:00 UTC


@dataclass
class Step:
    """One event of a stream: assert, reinforce, resolve (the user's choice) or wait.

    ``source`` names who states an assertion (``metadata["source"]``); without it
    the fact's source is its provenance, the same for every plain assertion.
    """

    action: str
    subject: str = ""
    predicate: str = ""
    value: str = ""
    days: float = 0.0
    confidence: float = 0.8
    valid_from_days: float | None = None
    source: str | None = None


@dataclass
class Scenario:
    family: str
    name: str
    subject: str
    predicate: str
    steps: list[Step]
    expect: set[str]
    strategy: str | None = None
    expect_pending: bool = False
    db_value: str | None = None
    chain_hops: int = 0
    chain_edge: str = "derived_from"
    bystanders: list[tuple[str, str, str]] = field(default_factory=list)


FUNCTIONAL = [
    ("status", ["open", "in_progress", "closed"]),
    ("lives_in", ["Berlin", "Paris", "Lisbon"]),
    ("employer", ["Acme", "Globex", "Initech"]),
    ("delivery_pref", ["Thursday", "Friday", "Monday"]),
    ("job_title", ["engineer", "lead", "manager"]),
    ("manager", ["Dana", "Eli", "Farah"]),
    ("phone", ["555-0100", "555-0199", "555-0142"]),
    ("email", ["a@x.io", "b@x.io", "c@x.io"]),
    ("order_status", ["placed", "packed", "delivered"]),
    ("preferred_airline", ["KLM", "Iberia", "Finnair"]),
    ("current_project", ["Atlas", "Borealis", "Cygnus"]),
    ("timezone", ["UTC", "CET", "PST"]),
]
MULTI = [
    ("likes", ["green tea", "jazz", "hiking", "chess"]),
    ("visited", ["Rome", "Oslo", "Lima", "Kyoto"]),
    ("speaks", ["English", "Spanish", "German"]),
    ("knows", ["Dana", "Eli", "Farah", "Gus"]),
    ("hobbies", ["pottery", "running", "baking"]),
    ("owns", ["a bike", "a kettle", "a kayak"]),
    ("attended", ["PyCon", "KubeCon", "FOSDEM"]),
    ("uses", ["FastAPI", "Postgres", "Redis"]),
]


def bystanders(subject: str, n: int) -> list[tuple[str, str, str]]:
    return [
        (subject, "nickname" if n % 2 else "birthday", f"value-{n}"),
        (f"neighbour_{n}", FUNCTIONAL[n % len(FUNCTIONAL)][0], f"steady-{n}"),
        (subject, "likes", f"topic-{n}"),
    ]


def assertion(s: str, p: str, v: str, days: float = 0.0, conf: float = 0.8, **kw: Any) -> Step:
    return Step("assert", s, p, v, days, conf, **kw)


def build() -> list[Scenario]:
    out: list[Scenario] = []
    n = 0

    def add(sc: Scenario) -> None:
        nonlocal n
        sc.bystanders = bystanders(sc.subject, n)
        out.append(sc)
        n += 1

    for i, (pred, vals) in enumerate(FUNCTIONAL):  # 12 temporal changes
        subject = f"person_{i}"
        steps = [assertion(subject, pred, vals[0], conf=0.9)]
        steps.append(assertion(subject, pred, vals[1], days=31 + 15 * i, conf=0.6))
        if i % 3 == 0:
            steps.append(assertion(subject, pred, vals[2], days=45, conf=0.7))
        last = vals[2] if i % 3 == 0 else vals[1]
        add(Scenario("temporal", f"{pred} changes", subject, pred, steps, {last}, "keep_newest"))
    for i, (pred, vals) in enumerate(FUNCTIONAL[:4]):  # 4 late reports of older values
        subject = f"late_{i}"
        steps = [
            assertion(subject, pred, vals[1], valid_from_days=-10),
            assertion(subject, pred, vals[0], days=5, conf=0.95, valid_from_days=-120),
        ]
        add(Scenario("late_report", f"late {pred}", subject, pred, steps, {vals[1]}, "keep_newest"))
    sources = ["crm", "support_call", "email_thread", "user", "web_form", "agent_notes"]
    for i, (pred, vals) in enumerate(FUNCTIONAL[:8]):  # 8 ambiguous contradictions
        subject = f"twin_{i}"
        first, second = sources[i % len(sources)], sources[(i + 1) % len(sources)]
        steps = [
            assertion(subject, pred, vals[0], conf=0.8, source=first),
            assertion(
                subject,
                pred,
                vals[1],
                days=i % 4,
                conf=0.8 + (0.05 if i % 2 else -0.05),
                source=second,
            ),
        ]
        if i >= 5:  # the user answers
            steps.append(Step("resolve", subject, pred, vals[i % 2], days=1))
            expect, pending = {vals[i % 2]}, False
        else:
            expect, pending = {vals[0], vals[1]}, True
        add(
            Scenario(
                "simultaneous", f"{pred} twin", subject, pred, steps, expect, "ask_user", pending
            )
        )
    for i, (pred, vals) in enumerate(FUNCTIONAL[4:12]):  # 8 sources restating themselves
        subject = f"restate_{i}"
        # Half name their source, half are plain assertions (source: the provenance).
        source = sources[i % len(sources)] if i % 2 == 0 else None
        steps = [
            assertion(subject, pred, vals[0], conf=0.8, source=source),
            assertion(
                subject,
                pred,
                vals[1],
                days=i % 4 + 0.5,
                conf=0.8 + (0.05 if i % 2 else -0.05),
                source=source,
            ),
        ]
        if i % 4 == 3:  # a third value later still, from the same source
            steps.append(assertion(subject, pred, vals[2], days=2, source=source))
        last = vals[2] if i % 4 == 3 else vals[1]
        add(Scenario("restated", f"{pred} restated", subject, pred, steps, {last}, "keep_newest"))
    for i, (pred, vals) in enumerate(FUNCTIONAL[4:10]):  # 6 clear confidence gaps
        subject = f"sure_{i}"
        strong_first = i % 2 == 0
        c0, c1 = (0.92, 0.55) if strong_first else (0.55, 0.92)
        steps = [
            assertion(subject, pred, vals[0], conf=c0),
            assertion(subject, pred, vals[1], 3, c1),
        ]
        winner = vals[0] if strong_first else vals[1]
        add(
            Scenario(
                "confidence",
                f"{pred} gap",
                subject,
                pred,
                steps,
                {winner},
                "keep_highest_confidence",
            )
        )
    for i, (pred, vals) in enumerate(FUNCTIONAL[:8]):  # 8 reinforced old values
        subject = f"habit_{i}"
        steps = [assertion(subject, pred, vals[0], conf=0.6)]
        steps += [assertion(subject, pred, vals[0], days=1) for _ in range(3 + i % 3)]
        steps.append(assertion(subject, pred, vals[1], days=2 + i, conf=0.75))
        add(
            Scenario(
                "reinforced",
                f"{pred} habit",
                subject,
                pred,
                steps,
                {vals[0]},
                "keep_most_reinforced",
            )
        )
    for i, (pred, vals) in enumerate(FUNCTIONAL[8:12]):  # 4 weak beliefs replaced
        subject = f"weak_{i}"
        steps = [
            assertion(subject, pred, vals[0], conf=0.3),
            assertion(subject, pred, vals[1], 1, 0.6),
        ]
        add(
            Scenario(
                "low_confidence",
                f"{pred} weak",
                subject,
                pred,
                steps,
                {vals[1]},
                "replace_low_confidence",
            )
        )
    for i, (pred, vals) in enumerate(MULTI):  # 8 multi-valued streams
        subject = f"fan_{i}"
        steps = [
            assertion(subject, pred, v, days=j * 2, conf=0.5 + 0.1 * j) for j, v in enumerate(vals)
        ]
        add(Scenario("multi_valued", f"{pred} accumulates", subject, pred, steps, set(vals)))
    for i, (pred, vals) in enumerate(FUNCTIONAL[:6]):  # 6 changes among many bystanders
        subject = f"crowd_{i}"
        steps = [assertion(subject, p, v[2], conf=0.8) for p, v in FUNCTIONAL if p != pred]
        steps += [assertion(subject, pred, vals[0]), assertion(subject, pred, vals[1], days=40)]
        add(
            Scenario(
                "unrelated", f"{pred} in a crowd", subject, pred, steps, {vals[1]}, "keep_newest"
            )
        )
    db_values = [
        "shipped",
        "delivered",
        "cancelled",
        "returned",
        "on_hold",
        "shipped",
        "packed",
        "open",
    ]
    for i, db_value in enumerate(db_values):  # 8 source-of-truth reads (2 agree)
        subject = f"sales_order_so_{1001 + i}"
        held = db_value if i >= 6 else "in_fulfillment"
        steps = [assertion(subject, "status", held, conf=0.85), Step("read", subject, days=2)]
        strategy = "trust_db" if held != db_value else None
        add(
            Scenario(
                "source_of_truth",
                f"order {i}",
                subject,
                "status",
                steps,
                {db_value},
                strategy,
                db_value=db_value,
            )
        )
    for i in range(8):  # 8 changed premises under derived conclusions
        subject = f"client_{i}"
        steps = [assertion(subject, "delivery_pref", "Thursday", conf=0.9)]
        steps.append(assertion(subject, "delivery_pref", "Monday", days=35 + i))
        add(
            Scenario(
                "multi_hop",
                f"{1 + i % 3} hops",
                subject,
                "delivery_pref",
                steps,
                {"Monday"},
                "keep_newest",
                chain_hops=1 + i % 3,
                chain_edge="supports" if i % 4 == 3 else "derived_from",
            )
        )
    gai = "customer_gai_123"
    example2 = [
        assertion(gai, "delivery_pref", "Thursday", conf=0.7),
        assertion(gai, "delivery_pref", "Thursday"),
    ]
    example2 += [assertion(gai, "delivery_pref", "Friday", days=9, conf=0.75)]
    example2 += [assertion(gai, "delivery_pref", "Friday") for _ in range(2)]
    add(Scenario("seed", "example 2", gai, "delivery_pref", example2, {"Friday"}, "keep_newest"))
    example3 = [assertion(gai, "delivery_pref", "Thursday", conf=0.7)]
    example3 += [assertion(gai, "delivery_pref", "Thursday") for _ in range(2)]
    example3 += [assertion(gai, "delivery_pref", "Friday", days=3, conf=0.72)]
    example3 += [assertion(gai, "delivery_pref", "Friday") for _ in range(2)]
    add(
        Scenario(
            "seed",
            "example 3",
            gai,
            "delivery_pref",
            example3,
            {"Thursday", "Friday"},
            "ask_user",
            True,
        )
    )
    return out


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


async def run(scenario: Scenario, index: int, mem: AsyncMemory, clock: Clock) -> dict[str, Any]:
    scope = {"user_id": f"bench_{index:03d}"}
    clock.now = T0
    watched: dict[str, tuple[float, FactStatus]] = {}
    for s, p, o in scenario.bystanders:
        fact = await mem.assert_fact(s, p, o, confidence=0.7, **scope)
        watched[fact.id] = (fact.confidence, fact.status)
    conclusions: list[str] = []
    innocent: list[str] = []
    bystander_id = next(iter(watched))
    lesson = await mem.learn(
        f"lesson resting on bystander {index}", evidence_ids=[bystander_id], **scope
    )
    innocent.append(lesson.id)
    for i, step in enumerate(scenario.steps):
        clock.now += step.days * DAY
        if step.action == "assert":
            valid_from = (
                None if step.valid_from_days is None else clock.now + step.valid_from_days * DAY
            )
            fact = await mem.assert_fact(
                step.subject,
                step.predicate,
                step.value,
                confidence=step.confidence,
                valid_from=valid_from,
                metadata=None if step.source is None else {"source": step.source},
                **scope,
            )
            if i == 0 and scenario.chain_hops:
                conclusions = await build_chain(mem, scenario, fact.id, scope)
        elif step.action == "resolve":
            # The user answers the question asked; no question asked fails the
            # scenario (its values or pending state differ) instead of the run.
            asked = await mem.conflicts(status="pending", **scope)
            if len(asked) == 1:
                await mem.resolve_conflict(asked[0].id, step.value, **scope)
        elif step.action == "read":
            await mem.facts_about(step.subject, **scope)
    current = await mem.facts_about(scenario.subject, **scope)
    values = {f.object for f in current if f.predicate == scenario.predicate}
    conflicts = await mem.conflicts(subject=scenario.subject, predicate=scenario.predicate, **scope)
    pending = [c for c in conflicts if c.status is ConflictStatus.PENDING]
    strategies = {c.resolution_strategy.value for c in conflicts}
    strategy_ok = (not conflicts) if scenario.strategy is None else scenario.strategy in strategies
    # A bystander with the probed (subject, predicate) (a multi-valued one) must survive too.
    expect = scenario.expect | {
        o for s, p, o in scenario.bystanders if (s, p) == (scenario.subject, scenario.predicate)
    }
    correct = values == expect and bool(pending) == scenario.expect_pending and strategy_ok
    if scenario.family == "source_of_truth" and scenario.strategy == "trust_db":
        history = await mem.fact_history(scenario.subject, "status", **scope)
        decayed = [f for f in history if f.status is FactStatus.CONFLICTED]
        correct = correct and len(decayed) == 1 and abs(decayed[0].confidence - 0.425) < 1e-9
    collateral = 0
    for fact_id, (confidence, status) in watched.items():
        stored = await mem.get(fact_id, **scope)
        if (
            stored.superseded_at is not None
            or stored.status is not status
            or stored.confidence != confidence
        ):
            collateral += 1
    flagged = {f.memory_id for f in await mem.review_flags(limit=1000, **scope)}
    collateral += sum(1 for memory_id in innocent if memory_id in flagged)
    collateral += len(flagged - set(conclusions))
    return {
        "family": scenario.family,
        "name": scenario.name,
        "correct": correct,
        "values": sorted(values),
        "expected": sorted(expect),
        "strategies": sorted(strategies),
        "collateral": collateral,
        "conclusions": len(conclusions),
        "conclusions_flagged": len(set(conclusions) & flagged),
    }


async def build_chain(
    mem: AsyncMemory, sc: Scenario, premise_id: str, scope: dict[str, str]
) -> list[str]:
    """Conclusions resting on the premise, ``chain_hops`` deep."""
    made: list[str] = []
    parent = premise_id
    for hop in range(sc.chain_hops):
        if hop == sc.chain_hops - 1:
            lesson = await mem.learn(
                f"Plan {sc.subject} deliveries around their preferred day (hop {hop + 1})",
                learning_type=LearningType.USER_PREFERENCE,
                evidence_ids=[] if sc.chain_edge == "supports" else [parent],
                **scope,
            )
            if sc.chain_edge == "supports":
                await mem.link(parent, lesson.id, "supports", **scope)
            made.append(lesson.id)
        else:
            derived = await mem.assert_fact(
                sc.subject,
                f"dock_slot_{hop}",
                f"slot before day {hop}",
                source_episode_ids=[parent],
                **scope,
            )
            made.append(derived.id)
            parent = derived.id
    return made


def sales_database(path: Path, scenarios: list[Scenario]) -> Path:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE sales_orders (id TEXT PRIMARY KEY, status TEXT NOT NULL)")
        for sc in scenarios:
            if sc.db_value is not None:
                order = sc.subject.removeprefix("sales_order_")
                conn.execute("INSERT INTO sales_orders VALUES (?, ?)", (order, sc.db_value))
    return path


async def main(out: Path | None) -> dict[str, Any]:
    scenarios = build()
    embedder = LocalEmbedder()
    clock = Clock()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        shop = sales_database(Path(tmp) / "shop.db", scenarios)
        source = SQLSourceOfTruth.sqlite(
            shop,
            {"status": "SELECT status FROM sales_orders WHERE id = :id"},
            subject_pattern=r"sales_order_(?P<id>so_\d+)",
        )
        async with AsyncMemory(
            Path(tmp) / "bench.db", embedder=embedder, clock=clock, sources=[source]
        ) as mem:
            results = [await run(sc, i, mem, clock) for i, sc in enumerate(scenarios)]
    elapsed = time.perf_counter() - started
    correct = sum(r["correct"] for r in results)
    conclusions = sum(r["conclusions"] for r in results)
    flagged = sum(r["conclusions_flagged"] for r in results)
    by_family: dict[str, list[int]] = {}
    for r in results:
        by_family.setdefault(r["family"], [0, 0])
        by_family[r["family"]][0] += r["correct"]
        by_family[r["family"]][1] += 1
    report = {
        "scenarios": len(results),
        "resolution_accuracy": correct / len(results),
        "collateral_invalidations": sum(r["collateral"] for r in results),
        "stale_conclusions_flagged": flagged / conclusions if conclusions else 1.0,
        "stale_conclusions": conclusions,
        "families": {k: {"correct": v[0], "total": v[1]} for k, v in sorted(by_family.items())},
        "failures": [r for r in results if not r["correct"]],
        "seconds": round(elapsed, 2),
        "python": sys.version.split()[0],
        "details": results,
    }
    families = dict(Counter(r["family"] for r in results))
    print(f"scenarios:                  {report['scenarios']} {families}")
    print(f"resolution accuracy:        {report['resolution_accuracy']:.1%} (target >= 95%)")
    print(f"collateral invalidations:   {report['collateral_invalidations']} (target 0)")
    rate = report["stale_conclusions_flagged"]
    print(f"stale conclusions flagged:  {rate:.1%} of {conclusions} (target 100%)")
    for bad in report["failures"]:
        print(f"  FAILED {bad['family']}/{bad['name']}: {bad['values']} != {bad['expected']}")
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n")
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="write the JSON report here")
    asyncio.run(main(parser.parse_args().out))
