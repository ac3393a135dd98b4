"""Three paradigms against episodes and recall, in a world with hidden facts.

The world (``bench/paradigms_world.py``) has seven task domains; five are inside the
agent's competence (in every context some action succeeds at least 80% of the time,
which one depends on hidden facts: "the staging server rejects pushed builds on
Fridays", "bob's API needs a token refresh first"), two are outside it (no action
succeeds more than 15% of the time). Notes others left are in memory before the first
task, helpful ones and wrong ones mixed.

One agent, three memories. For every task the agent reads what its memory offers about
each of the domain's three actions, as counts of successes and failures, chooses the
action with the best optimistic estimate (the posterior mean plus an exploration bonus
that shrinks with the evidence), acts, and writes down what happened:

- ``none``: no memory; every action is untried, so the choice is random;
- ``episodes``: before acting, ``remember`` (the task and its context, ten hits); every
  hit that states an action's result in a compatible context counts one success or
  failure (the agent's own episodes and the notes alike); after acting it ``retain``\\ s
  the episode ("Deploy build 3.1 (deploys): 'push the build' failed when target = staging and
  day = friday (upload refused)");
- ``paradigms``: before acting, ``synthesize`` for each action (the task, the action,
  the context): the world model's prediction counts its observed successes and failures,
  the facts are read like recalled hits; the advice (``should_attempt``, in the
  synthesis) decides whether to act or to hand the task over; after acting,
  ``post_interaction`` with the action, the context, the outcome, the prediction made
  and the strategy followed.

The two agents with memory read the same notes and the same outcomes and state the
task the same way (its text and its kind, "Deploy build 3.1 (deploys)"); what differs is
the memory's structure: counts per action and context (world model), success per capability
(self-model) and strategies, against the few episodes a text search returns.

Scoring, per task: ``success`` when the agent acted and it worked; ``failure`` when it
acted and it did not; ``handed over`` when the advice was to ask for help or to decline
(only the paradigms agent gets advice): the task is done by a person, so it counts as
resolved, at a cost. ``success_by_block`` is the share resolved (successes plus
handovers); ``own_success_by_block`` the share the agent did itself;
``handover_by_block`` the share handed over; ``utility_by_block`` counts a handover
as half a success (the cost of a person's time); ``inside_success_by_block`` is the
agent's own success rate on the tasks inside competence only (what its choice of action
is worth, handovers aside).

Also measured: the world model's Brier score against the world's true probabilities
(the mean over every domain, context and action of (predicted P(success) - true
P(success))², after 500 tasks and at the end), the self-model's expected calibration
error over all capabilities' bins (``ucma.paradigms.self_model.calibration_error``),
help-seeking accuracy on a labelled suite (every domain and context: attempt inside
competence, ask or decline outside), and ``synthesize`` latency at 10,000 memories
(``bench/synthesize.py``'s store and measurement: p95 over read-only calls and calls
after a write). ``by_domain`` counts each agent's successes, failures and handovers per
domain.

Usage: ``python bench/paradigms.py [--tasks 1000] [--block 200] [--seed 1] [--quick]
[--out bench/results/paradigms.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import synthesize  # noqa: E402
from core import run_meta  # noqa: E402
from paradigms_world import DOMAINS, NOTES, Task, World, labelled_suite, make_tasks  # noqa: E402
from ucma import HelpDecision  # noqa: E402
from ucma.config import EpisodicConfig, UCMAConfig  # noqa: E402
from ucma.embeddings import LocalEmbedder  # noqa: E402
from ucma.engine import AsyncMemory  # noqa: E402
from ucma.paradigms.self_model import calibration_error  # noqa: E402
from ucma.paradigms.world_model import success_probability  # noqa: E402

DEFAULT_OUT = Path(__file__).parent / "results" / "paradigms.json"
ARMS = ("none", "episodes", "paradigms")
EXPLORE = 0.3
"""The exploration bonus: EXPLORE / sqrt(evidence + 1) on top of the posterior mean."""
RECALL = 10
"""Hits the episodes agent reads before acting (seed 000 pattern 3 reads ten)."""
MIN_ATTEMPTS = 8
"""The paradigms agent acts whatever the advice until its self-model holds this many
attempts of the capability: with no evidence every input of ``should_attempt`` is 0.5,
which asks for help, and an agent that never tries never learns."""
HANDOVER = 0.5
"""What a handed-over task is worth in ``utility_by_block`` (a success is 1)."""
BRIER_AT = 500

_CLAIM = re.compile(r"'([^']+)' (works|worked|fails|failed) when ([^.(]+)")


@dataclass
class Claim:
    action: str
    works: bool
    conditions: dict[str, str]


def read_claim(text: str) -> Claim | None:
    """What a memory says about an action, when it says it the way the agent writes
    episodes (and the notes are written): "'push the build' failed when target =
    staging and day = friday"."""
    found = _CLAIM.search(text)
    if found is None:
        return None
    conditions = {}
    for part in found.group(3).split(" and "):
        key, sep, value = part.partition(" = ")
        if not sep:
            return None
        conditions[key.strip()] = value.strip()
    return Claim(found.group(1), found.group(2) in ("works", "worked"), conditions)


def describe(task: Task) -> str:
    """The task as the agent states it: its text and its kind ("Deploy build 3.1
    (deploys)"), the kind being the capability the self-model tracks."""
    return f"{task.text} ({task.domain.name})"


def phrase(context: Mapping[str, str]) -> str:
    return " and ".join(f"{k} = {v}" for k, v in context.items())


def compatible(conditions: Mapping[str, str], context: Mapping[str, str]) -> bool:
    return all(context.get(k, v) == v for k, v in conditions.items())


def count_claims(texts: Sequence[str], task: Task) -> dict[str, list[float]]:
    """[successes, failures] per action from the texts that state a result of one of
    the task's actions in a context compatible with the task's."""
    counts = {a: [0.0, 0.0] for a in task.domain.actions}
    for text in texts:
        claim = read_claim(text)
        if claim is None or claim.action not in counts:
            continue
        if compatible(claim.conditions, task.context):
            counts[claim.action][0 if claim.works else 1] += 1
    return counts


def choose(counts: Mapping[str, Sequence[float]], rng: random.Random) -> str:
    """The action with the best posterior mean plus exploration bonus (ties at random)."""

    def score(action: str) -> float:
        wins, losses = counts[action]
        n = wins + losses
        return (wins + 1) / (n + 2) + EXPLORE / math.sqrt(n + 1)

    best = max(score(a) for a in counts)
    return rng.choice([a for a in counts if score(a) >= best - 1e-12])


@dataclass
class Step:
    """What the agent did with one task."""

    kind: str  # success, failure, handed_over
    action: str | None
    predicted: float | None


class Agent:
    """The same agent over three memories (``arm``)."""

    def __init__(self, arm: str, memory: AsyncMemory | None, seed: int) -> None:
        self.arm = arm
        self.memory = memory
        self.rng = random.Random(seed)

    async def plan(self, task: Task) -> tuple[str, float | None, Any]:
        """(action, predicted success, what the memory advised) for ``task``."""
        if self.arm == "none" or self.memory is None:
            counts = {a: [0.0, 0.0] for a in task.domain.actions}
            return choose(counts, self.rng), None, None
        if self.arm == "episodes":
            hits = await self.memory.remember(
                f"{describe(task)} ({phrase(task.context)})", limit=RECALL
            )
            counts = count_claims([h.content for h in hits], task)
            return choose(counts, self.rng), None, None
        syntheses = {}
        counts = {}
        for action in task.domain.actions:
            synthesis = await self.memory.synthesize(
                describe(task),
                task=describe(task),
                action=action,
                context=task.context,
                limit=RECALL,
            )
            wins, losses = _prediction_counts(synthesis.prediction)
            claimed = count_claims(_fact_texts(synthesis.facts), task)[action]
            counts[action] = [wins + claimed[0], losses + claimed[1]]
            syntheses[action] = synthesis
        action = choose(counts, self.rng)
        wins, losses = _prediction_counts(syntheses[action].prediction)
        return action, (wins + 1) / (wins + losses + 2), syntheses[action]

    async def run(self, task: Task, world: World) -> Step:
        action, predicted, synthesis = await self.plan(task)
        if synthesis is not None and hands_over(synthesis.advice):
            return Step("handed_over", None, predicted)
        success, error = world.attempt(task, action)
        if self.memory is not None and self.arm == "episodes":
            result = "worked" if success else "failed"
            tail = f" ({error})" if error else ""
            await self.memory.retain(
                f"{describe(task)}: '{action}' {result} when {phrase(task.context)}{tail}.",
                bank="experience",
            )
        elif self.memory is not None:
            await self.memory.post_interaction(
                describe(task),
                action,
                success=success,
                capability=task.domain.name,
                predicted=predicted,
                action=action,
                context=task.context,
                observed_outcome="success" if success else "failure",
                strategy_id=_strategy_of(synthesis, action),
                trajectory=[action],
                failure_reason=error,
                domain=task.domain.name,
            )
        return Step("success" if success else "failure", action, predicted)


def hands_over(advice: Any) -> bool:
    """Ask for help or decline, once the self-model has seen enough attempts."""
    if advice is None:
        return False
    if advice.introspection.sample_size < MIN_ATTEMPTS:
        return False
    return advice.decision in (HelpDecision.ASK_FOR_HELP, HelpDecision.DECLINE)


def _prediction_counts(prediction: Any) -> tuple[float, float]:
    """Observed successes and failures behind a simulation (0, 0 without one)."""
    if prediction is None:
        return 0.0, 0.0
    support = {o.outcome.casefold(): o.support for o in prediction.outcomes}
    return support.get("success", 0.0), support.get("failure", 0.0)


def _fact_texts(facts: Sequence[Any]) -> list[str]:
    out = []
    for fact in facts:
        memory = getattr(fact, "memory", None)
        text = getattr(memory if memory is not None else fact, "content", None)
        if isinstance(text, str):
            out.append(text)
    return out


def _strategy_of(synthesis: Any, action: str) -> str | None:
    """The id of the synthesised strategy whose first step is ``action``, if any."""
    for entry in synthesis.strategies if synthesis is not None else ():
        steps = getattr(entry, "steps", None) or ()
        first = steps[0] if steps else None
        text = getattr(first, "description", first)
        if isinstance(text, str) and text.casefold() == action.casefold():
            return str(entry.procedure_id)
    return None


def _config() -> UCMAConfig:
    # Each attempt is its own event: the same task in the same context, tried again with
    # the same result, is a second observation, not a near-duplicate to merge (seed 003
    # R4 would otherwise reinforce the first and the count would be lost).
    return UCMAConfig(episodic=EpisodicConfig(duplicate_similarity=1.01))


async def world_model_brier(memory: AsyncMemory) -> float:
    """Mean over every domain, context and action of (P(success) predicted by
    ``simulate`` - the world's true probability)²."""
    errors = []
    for domain in DOMAINS:
        for context in domain.contexts():
            for action in domain.actions:
                simulation = await memory.simulate(action, context)
                predicted = success_probability(simulation)
                errors.append((predicted - domain.probability(action, context)) ** 2)
    return statistics.fmean(errors)


async def self_model_ece(memory: AsyncMemory) -> tuple[float | None, int]:
    """The expected calibration error over every capability's bins pooled, and how
    many predictions they hold."""
    pooled: list[list[float]] = []
    for competence in await memory.competences():
        for i, row in enumerate(competence.bins):
            if i == len(pooled):
                pooled.append([0.0, 0.0, 0.0])
            for j in range(3):
                pooled[i][j] += row[j]
    return calibration_error(pooled), int(sum(row[0] for row in pooled))


async def help_seeking(memory: AsyncMemory, seed: int, per_context: int) -> dict[str, Any]:
    """The paradigms agent's advice on a labelled suite: attempt (with or without a
    caveat) inside competence, ask for help or decline outside."""
    agent = Agent("paradigms", memory, seed)
    correct = 0
    rows = []
    suite = labelled_suite(seed, per_context)
    for task, inside in suite:
        _, _, synthesis = await agent.plan(task)
        advice = synthesis.advice
        attempts = advice.decision in (HelpDecision.ATTEMPT, HelpDecision.ATTEMPT_WITH_CAVEAT)
        correct += attempts == inside
        rows.append(
            {
                "domain": task.domain.name,
                "context": task.context,
                "inside": inside,
                "decision": advice.decision.value,
                "score": round(advice.adjusted_score, 3),
            }
        )
    return {"accuracy": round(correct / len(suite), 4), "tasks": len(suite), "decisions": rows}


def by_domain(tasks: Sequence[Task], steps: Sequence[Step]) -> dict[str, dict[str, int]]:
    """Per domain: tasks, own successes, failures and handovers."""
    out: dict[str, dict[str, int]] = {
        d.name: {"tasks": 0, "success": 0, "failure": 0, "handed_over": 0} for d in DOMAINS
    }
    for task, step in zip(tasks, steps, strict=True):
        out[task.domain.name]["tasks"] += 1
        out[task.domain.name][step.kind] += 1
    return out


def _inside_block(tasks: Sequence[Task], block: int) -> int:
    """The block size that splits the tasks inside competence into as many blocks as
    the whole sequence."""
    count = sum(t.domain.inside for t in tasks)
    return max(1, -(-count // -(-len(tasks) // block)))


def blocks(values: Sequence[float], size: int) -> list[float]:
    return [round(statistics.fmean(values[i : i + size]), 4) for i in range(0, len(values), size)]


async def run_arm(
    arm: str, tasks: Sequence[Task], seed: int, path: Path, embedder: LocalEmbedder
) -> dict[str, Any]:
    """One agent over the task sequence; its steps, and the paradigms agent's models."""
    world = World(seed)
    started = time.perf_counter()
    extra: dict[str, Any] = {}
    if arm == "none":
        agent = Agent(arm, None, seed + 1)
        steps = [await agent.run(task, world) for task in tasks]
    else:
        async with AsyncMemory(path, user_id="agent", config=_config(), embedder=embedder) as mem:
            for note in NOTES:
                await mem.retain(note.text, bank="world")
            agent = Agent(arm, mem, seed + 1)
            steps = []
            for i, task in enumerate(tasks, 1):
                steps.append(await agent.run(task, world))
                if arm == "paradigms" and i == BRIER_AT:
                    extra["world_model_brier"] = round(await world_model_brier(mem), 4)
            if arm == "paradigms":
                extra["world_model_brier_end"] = round(await world_model_brier(mem), 4)
                extra.setdefault("world_model_brier", extra["world_model_brier_end"])
                ece, predictions = await self_model_ece(mem)
                extra["self_model_ece"] = round(ece, 4) if ece is not None else None
                extra["self_model_predictions"] = predictions
    extra["seconds"] = round(time.perf_counter() - started, 1)
    return {"steps": steps, **extra}


async def run_all(
    tasks: int,
    block: int,
    seed: int,
    *,
    memories: int,
    queries: int,
    per_context: int,
    embedder: LocalEmbedder | None = None,
) -> dict[str, Any]:
    embedder = embedder or LocalEmbedder()
    started = time.perf_counter()
    sequence = make_tasks(tasks, seed)
    report: dict[str, Any] = {
        "success_by_block": {},
        "own_success_by_block": {},
        "handover_by_block": {},
        "utility_by_block": {},
        "inside_success_by_block": {},
        "tasks": tasks,
        "block_size": block,
        "domains": len(DOMAINS),
        "domains_outside_competence": sum(not d.inside for d in DOMAINS),
        "notes": len(NOTES),
        "misleading_notes": sum(not n.true for n in NOTES),
        "seed": seed,
        "by_domain": {},
        "seconds_by_arm": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for arm in ARMS:
            result = await run_arm(arm, sequence, seed, Path(tmp) / f"{arm}.db", embedder)
            steps: list[Step] = result.pop("steps")
            kinds = [s.kind for s in steps]
            report["success_by_block"][arm] = blocks([k != "failure" for k in kinds], block)
            report["own_success_by_block"][arm] = blocks([k == "success" for k in kinds], block)
            report["handover_by_block"][arm] = blocks([k == "handed_over" for k in kinds], block)
            report["utility_by_block"][arm] = blocks(
                [{"success": 1.0, "failure": 0.0}.get(k, HANDOVER) for k in kinds], block
            )
            # The agent's own success on tasks inside competence, where acting is right:
            # what choosing the action is worth, without the handovers.
            inside = [
                s.kind == "success" for t, s in zip(sequence, steps, strict=True) if t.domain.inside
            ]
            report["inside_success_by_block"][arm] = blocks(inside, _inside_block(sequence, block))
            report["by_domain"][arm] = by_domain(sequence, steps)
            report["seconds_by_arm"][arm] = result.pop("seconds")
            report.update(result)
            print(f"{arm}: {report['success_by_block'][arm]}", flush=True)
            if arm == "paradigms":
                async with AsyncMemory(
                    Path(tmp) / f"{arm}.db", user_id="agent", config=_config(), embedder=embedder
                ) as mem:
                    suite = await help_seeking(mem, seed + 3, per_context)
                report["help_seeking_accuracy"] = suite["accuracy"]
                report["help_seeking"] = suite
        # The latency store and its measurement are bench/synthesize.py's (one way to
        # measure it): chat lines and every paradigm's records, distinct queries, read
        # only and after a write.
        async with AsyncMemory(
            Path(tmp) / "latency.db", user_id=synthesize.USER, embedder=embedder
        ) as mem:
            await synthesize.fill(mem, memories, Path(tmp))
            latency = await synthesize.measure_synthesize(mem, queries)
    report["synthesize_p95_ms"] = latency["synthesize_p95_ms"]
    report["synthesize"] = latency
    last = {arm: report["success_by_block"][arm][-1] for arm in ARMS}
    report["last_block_gap_points"] = round(100 * (last["paradigms"] - last["episodes"]), 1)
    report["meta"] = run_meta(embedder)
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


QUICK = {"tasks": 140, "block": 70, "memories": 500, "queries": 20, "per_context": 1}
"""``--quick``: every part of the run, small (the test in tests/engine runs it)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--block", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help=f"A small run: {QUICK}.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    sizes = (
        dict(QUICK)
        if args.quick
        else {
            "tasks": args.tasks,
            "block": args.block,
            "memories": args.memories,
            "queries": args.queries,
            "per_context": 2,
        }
    )
    if min(sizes.values()) < 1:
        parser.error("--tasks, --block, --memories and --queries must be positive")
    tasks, block = sizes.pop("tasks"), sizes.pop("block")
    report = asyncio.run(run_all(tasks, block, args.seed, **sizes))
    print(format_report(report))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


def format_report(report: dict[str, Any]) -> str:
    lines = [f"{'block':>5} " + " ".join(f"{arm:>10}" for arm in ARMS) + "   (resolved)"]
    for i in range(len(report["success_by_block"]["none"])):
        row = " ".join(f"{report['success_by_block'][arm][i]:>10.2f}" for arm in ARMS)
        lines.append(f"{i + 1:>5} {row}")
    lines.append(
        f"handed over by block (paradigms): {report['handover_by_block']['paradigms']}; "
        f"own success: {report['own_success_by_block']['paradigms']}; utility: "
        f"{report['utility_by_block']['paradigms']} "
        f"(episodes {report['utility_by_block']['episodes']})"
    )
    lines.append(
        f"last block, paradigms minus episodes: {report['last_block_gap_points']} points; "
        f"world model Brier {report['world_model_brier']} (after {BRIER_AT} tasks; end "
        f"{report['world_model_brier_end']}); self-model ECE {report['self_model_ece']}; "
        f"help-seeking accuracy {report['help_seeking_accuracy']}; synthesize p95 "
        f"{report['synthesize_p95_ms']} ms at {report['synthesize']['memories']} memories "
        f"({report['seconds']} s)"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
