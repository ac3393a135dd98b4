"""Strategies learned from trajectories, in a task world with hidden rules.

Six domains, each with an environment the agent can observe (three properties, as
facts: which pagination a site uses, how strict its rate limit is, ...) and six
actions it can take. Whether an action works depends on hidden rules only this
module's ``World`` knows:

- each of three specific actions works when the first property has its value (``follow
  the next links`` when the site paginates by links) ...
- ... and one shortcut works whatever the first property says, so it succeeds in more
  situations than any of them;
- except that when the second and the third property both have their restrictive value
  (a strict rate limit and a required login), neither works: only a careful action does
  (ask the site owner for an export token), and it works only then;
- one action never works.

The shortcut's rule has an "unless": the situations where it worked share no condition,
so preconditions learned from successes alone generalise to "always" and an agent that
learns only from successes keeps choosing it where it fails, never looking further;
pitfalls learned from failures say where to avoid it (and the specific actions), which
sends the agent to find the careful action.

The agent reads only the task text (a paraphrase naming a target, no rule), the
environment's properties (which it asserts as facts, seed 000 flow 1) and, after
acting, the outcome with the error the world reports ("'bulk download' failed:
request rejected"), which names the failing step but never the rule or the fix.

The agent: ask ``strategies_for(task, domain)`` (strategies whose preconditions
contradict the current facts are left out); pitfalls whose conditions all hold name
steps to avoid; take the best-ranked strategy whose steps are not avoided, or else
explore a random action not avoided; record the application's outcome
(``record_procedure_outcome``) and the trajectory (``learn_from_trajectory``, with the
facts that held as context). The "successes only" agent is the same agent that
learns from successful trajectories only. Both run on the same task sequence and
seed, each in its own database. The engine knows nothing of the world: the agent
talks to it only through the public API.

Each seed draws its own task sequence (and exploration); the blocks are averaged over
the seeds (five by default), and each seed's own blocks, its improvement from the first
to the last block and its last-block gap are kept in ``per_seed``, with the medians of
both over the seeds. One seed's last-block gap spreads widely: it is decided by which of
the six domains the successes-only agent is trapped in (in a domain where a strategy it
learned from successes generalised to the locked situations before it had happened on
the careful action, it keeps failing there and never explores again), a handful of
chance events per sequence, and by how many of the last block's sixty tasks are locked
(about fifteen). More tasks do not steady it: the longer it runs, the more domains the
successes-only agent stumbles on the careful action in, so the gap narrows on average and
spreads as widely (docs/paradigms.md).

Printed: success rate per block of tasks for both agents. ``--out PATH`` writes JSON
``{"success_by_block", "success_by_block_successes_only", "tasks", "domains", ...}``.

Usage: ``python bench/procedural.py [--tasks 360] [--seeds 1 2 3 4 5]
[--out bench/results/procedural.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ucma.config import ConflictConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory

DEFAULT_OUT = Path(__file__).parent / "results" / "procedural.json"


@dataclass(frozen=True)
class Domain:
    name: str
    subject: str
    first: tuple[str, tuple[str, str, str]]  # property, its three values
    second: tuple[str, tuple[str, str]]  # property, (restrictive, permissive)
    third: tuple[str, tuple[str, str]]  # property, (restrictive, permissive)
    specific: tuple[str, str, str]  # the action that works under each first value
    shortcut: str
    careful: str
    useless: tuple[str]
    finish: str
    templates: tuple[str, ...]
    targets: tuple[str, ...]
    symptom: str


DOMAINS = (
    Domain(
        "scraping",
        "target site",
        ("pagination", ("links", "page numbers", "cursor tokens")),
        ("rate limit", ("strict", "lenient")),
        ("login", ("required", "optional")),
        ("follow the next links", "increment the page number", "pass the cursor token"),
        "download the full sitemap dump",
        "ask the site owner for an export token",
        ("guess the item URLs",),
        "parse the items",
        (
            "Collect every product review from {t}",
            "Gather all the customer comments on {t}",
            "Scrape the complete listing of {t}",
            "Fetch each catalogue entry published by {t}",
        ),
        ("the bookshop", "the garden store", "the shoe outlet", "the toy market", "the deli"),
        "no new items returned",
    ),
    Domain(
        "deployment",
        "service",
        ("runtime", ("containers", "virtual machines", "serverless functions")),
        ("traffic", ("peak", "quiet")),
        ("change window", ("closed", "open")),
        (
            "roll out the new container image",
            "upgrade the packages on the machines",
            "publish a new function version",
        ),
        "restart every instance at once",
        "schedule a canary release with a rollback plan",
        ("clear the browser cache",),
        "check the health endpoint",
        (
            "Ship release {t} to production",
            "Deploy version {t} of the billing service",
            "Put build {t} live for customers",
            "Release {t} to the production cluster",
        ),
        ("2.4", "3.1", "3.7", "4.0", "5.2"),
        "health check still reports the old version",
    ),
    Domain(
        "cleaning",
        "dataset",
        ("format", ("csv", "json", "parquet")),
        ("size", ("huge", "small")),
        ("encoding", ("mixed", "utf-8")),
        ("split the rows on commas", "walk the json tree", "read the columns with arrow"),
        "load everything into a spreadsheet",
        "stream the file in chunks with an explicit decoder",
        ("sort the folder by date",),
        "drop the duplicate records",
        (
            "Clean up the {t} export",
            "Deduplicate the records in the {t} dump",
            "Tidy the {t} data before the report",
            "Remove the broken rows from the {t} file",
        ),
        ("sales", "inventory", "survey", "sensor", "payroll"),
        "parser produced no records",
    ),
    Domain(
        "email",
        "mailbox",
        ("protocol", ("imap", "exchange", "gmail")),
        ("volume", ("heavy", "light")),
        ("attachments", ("large", "small")),
        ("fetch the messages over imap", "call the exchange web service", "use the gmail api"),
        "export the whole mailbox archive",
        "ask the administrator for a delegated export",
        ("print the inbox",),
        "file the invoices",
        (
            "Sort the invoices out of the {t} inbox",
            "Find every receipt the {t} mailbox received",
            "Archive the supplier mails of {t}",
            "Pull the billing messages from {t}'s mail",
        ),
        ("finance", "support", "sales team", "the director", "purchasing"),
        "login refused by the server",
    ),
    Domain(
        "backup",
        "database",
        ("engine", ("postgres", "mysql", "sqlite")),
        ("load", ("busy", "idle")),
        ("replication", ("on", "off")),
        ("run pg_dump", "run mysqldump", "copy the sqlite file with its journal"),
        "snapshot the disk volume",
        "pause replication and take a consistent dump",
        ("vacuum every table",),
        "upload the backup offsite",
        (
            "Back up the {t} database tonight",
            "Take a copy of the {t} data",
            "Save a restorable backup of {t}",
            "Archive the {t} tables before the migration",
        ),
        ("orders", "users", "analytics", "ledger", "catalogue"),
        "the backup file is empty",
    ),
    Domain(
        "integration",
        "partner api",
        ("authentication", ("oauth", "api keys", "basic auth")),
        ("quota", ("tight", "generous")),
        ("sandbox", ("absent", "available")),
        ("exchange an oauth token", "send the api key header", "send basic credentials"),
        "replay the recorded requests",
        "use the partner's nightly batch window",
        ("retry without credentials",),
        "store the response",
        (
            "Sync the shipments from the {t} partner",
            "Pull today's orders from the {t} API",
            "Import the price list offered by {t}",
            "Download the stock levels of {t}",
        ),
        ("acme", "globex", "initech", "umbrella", "hooli"),
        "401 unauthorised",
    ),
)


@dataclass(frozen=True)
class Task:
    domain: Domain
    text: str
    first: int  # index of the first property's value
    restrictive: bool  # the second property's restrictive value holds
    third_restrictive: bool  # the third property's restrictive value holds

    def facts(self) -> list[dict[str, str]]:
        d = self.domain
        second = d.second[1][0] if self.restrictive else d.second[1][1]
        third = d.third[1][0] if self.third_restrictive else d.third[1][1]
        return [
            {"subject": d.subject, "predicate": d.first[0], "object": d.first[1][self.first]},
            {"subject": d.subject, "predicate": d.second[0], "object": second},
            {"subject": d.subject, "predicate": d.third[0], "object": third},
        ]


class World:
    """The hidden rules. The agent sees ``Task.text``, ``Task.facts()``, the actions of
    a domain, and what ``attempt`` answers."""

    @staticmethod
    def actions(domain: Domain) -> list[str]:
        return [*domain.specific, domain.shortcut, domain.careful, *domain.useless]

    @staticmethod
    def attempt(task: Task, action: str) -> tuple[bool, str | None]:
        d = task.domain
        locked = task.restrictive and task.third_restrictive
        if action in d.specific:
            works = d.specific.index(action) == task.first and not locked
            return works, None if works else f"'{action}' failed: {d.symptom}"
        if action == d.shortcut:
            return not locked, f"'{action}' failed: request rejected" if locked else None
        if action == d.careful:
            return locked, None if locked else f"'{action}' failed: not available here"
        return False, f"'{action}' failed: timed out"


def make_tasks(count: int, seed: int) -> list[Task]:
    rng = random.Random(seed)
    tasks = []
    for i in range(count):
        domain = DOMAINS[i % len(DOMAINS)]
        text = rng.choice(domain.templates).format(t=rng.choice(domain.targets))
        tasks.append(Task(domain, text, rng.randrange(3), rng.random() < 0.5, rng.random() < 0.5))
    rng.shuffle(tasks)
    return tasks


class Agent:
    """Picks its next action from ``strategies_for``; learns from trajectories."""

    def __init__(self, memory: AsyncMemory, *, from_failures: bool, seed: int) -> None:
        self.memory = memory
        self.from_failures = from_failures
        self.rng = random.Random(seed)
        self.told: dict[tuple[str, str], str] = {}

    async def observe_environment(self, facts: list[dict[str, str]]) -> None:
        """Assert each property that changed since the last task (valid from now): a
        change supersedes the old value; repeating an unchanged one would only
        reinforce it."""
        for fact in facts:
            key = (fact["subject"], fact["predicate"])
            if self.told.get(key) != fact["object"]:
                await self.memory.assert_fact(*key, fact["object"], valid_from=self.memory.clock())
                self.told[key] = fact["object"]

    async def run(self, task: Task) -> bool:
        d = task.domain
        context = task.facts()
        await self.observe_environment(context)
        found = await self.memory.strategies_for(task.text, domain=d.name, limit=100)
        avoid = {
            step.description
            for m in found
            if m.is_pitfall and m.grounding == "met"
            for step in m.procedure.steps
        }
        chosen = next(
            (
                m.procedure
                for m in found
                if not m.is_pitfall and not {s.description for s in m.procedure.steps} & avoid
            ),
            None,
        )
        if chosen is not None:
            action = chosen.steps[0].description
        else:
            options = [a for a in World.actions(d) if a not in avoid] or World.actions(d)
            action = self.rng.choice(options)
        success, reason = World.attempt(task, action)
        if chosen is not None:
            await self.memory.record_procedure_outcome(chosen.id, success)
        if success or self.from_failures:
            await self.memory.learn_from_trajectory(
                task.text,
                [action, d.finish],
                success,
                reason,
                domain=d.name,
                context=context,
            )
        return success


def _config() -> UCMAConfig:
    # The agent knows each property has one value at a time (functional predicates),
    # so a new observation replaces the last instead of piling up beside it.
    properties = tuple(p for d in DOMAINS for p in (d.first[0], d.second[0], d.third[0]))
    return UCMAConfig(conflicts=ConflictConfig(functional_predicates=properties))


async def run(tasks: int, block: int, seed: int, embedder: LocalEmbedder) -> dict[str, Any]:
    """Both agents on one task sequence; success rate per block of ``block`` tasks."""
    sequence = make_tasks(tasks, seed)
    results: dict[str, list[bool]] = {"full": [], "successes_only": []}
    with tempfile.TemporaryDirectory() as tmp:
        for arm in results:
            async with AsyncMemory(
                Path(tmp) / f"{arm}.db", user_id="agent", config=_config(), embedder=embedder
            ) as memory:
                agent = Agent(memory, from_failures=arm == "full", seed=seed + 1)
                for task in sequence:
                    results[arm].append(await agent.run(task))

    def blocks(outcomes: list[bool]) -> list[float]:
        return [
            round(sum(outcomes[i : i + block]) / len(outcomes[i : i + block]), 4)
            for i in range(0, len(outcomes), block)
        ]

    full, only = blocks(results["full"]), blocks(results["successes_only"])
    return {
        "seed": seed,
        "success_by_block": full,
        "success_by_block_successes_only": only,
        "improvement_points": round(100 * (full[-1] - full[0]), 1),
        "last_block_gap_points": round(100 * (full[-1] - only[-1]), 1),
    }


def _mean(rows: list[list[float]]) -> list[float]:
    return [round(sum(column) / len(column), 4) for column in zip(*rows, strict=True)]


async def run_all(tasks: int, block: int, seeds: list[int]) -> dict[str, Any]:
    embedder = LocalEmbedder()
    started = time.perf_counter()
    runs = []
    for seed in seeds:
        result = await run(tasks, block, seed, embedder)
        full, only = result["success_by_block"], result["success_by_block_successes_only"]
        print(
            f"seed {seed}: full {full}, successes only {only}; first->last "
            f"{result['improvement_points']}, last-block gap {result['last_block_gap_points']}",
            flush=True,
        )
        runs.append(result)
    full = _mean([r["success_by_block"] for r in runs])
    only = _mean([r["success_by_block_successes_only"] for r in runs])
    return {
        "success_by_block": full,
        "success_by_block_successes_only": only,
        "tasks": tasks,
        "domains": len(DOMAINS),
        "block_size": block,
        "seeds": seeds,
        "per_seed": runs,
        "improvement_points": round(100 * (full[-1] - full[0]), 1),
        "last_block_gap_points": round(100 * (full[-1] - only[-1]), 1),
        "improvement_points_median": statistics.median(r["improvement_points"] for r in runs),
        "last_block_gap_points_median": statistics.median(r["last_block_gap_points"] for r in runs),
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=360)
    parser.add_argument("--block", type=int, default=60)
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[1, 2, 3, 4, 5],
        help="One task sequence per seed; the blocks are averaged over them.",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    if args.tasks < 1 or args.block < 1:
        parser.error("--tasks and --block must be positive")
    report = asyncio.run(run_all(args.tasks, args.block, args.seeds))
    print(f"{'block':>5} {'full':>6} {'successes only':>15}   (mean of {len(args.seeds)} seeds)")
    for i, (a, b) in enumerate(
        zip(report["success_by_block"], report["success_by_block_successes_only"], strict=True)
    ):
        print(f"{i + 1:>5} {a:>6.2f} {b:>15.2f}")
    print(
        f"improvement first->last block: {report['improvement_points']} points "
        f"(median of seeds {report['improvement_points_median']}); last block, full minus "
        f"successes only: {report['last_block_gap_points']} points (median of seeds "
        f"{report['last_block_gap_points_median']}) ({report['tasks']} tasks, "
        f"{report['domains']} domains, {report['seconds']} s)"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
