"""``ucma retention | sources | duplicates | sleep-runs | salience-history |
memory-influence | trace | traces | counterfactuals | replay | extract-patterns |
share-patterns | review-flags | clear-review | fact-history | conflicts | find-learnings``:
commands to review what the memory holds and how it learnt, each named like the Python
method it calls and printing the same JSON the REST route and MCP tool of that name answer
(``--json``), or a readable form of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import (
    DatabaseOption,
    HomeOption,
    JsonOption,
    scoped_command,
    show_work,
)

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]

MemoryIdArgument = Annotated[str, typer.Argument(help="A memory id.", show_default=False)]
DecisionIdArgument = Annotated[
    str, typer.Argument(help="A decision id (trc_...).", show_default=False)
]
LimitOption = Annotated[int, typer.Option("--limit", "-n", help="Most items to show.")]


async def retention(
    memory: AsyncMemory,
    memory_id: MemoryIdArgument,
) -> dict[str, Any]:
    """How much of a memory is retained now, from 0 to 1, on its forgetting curve."""
    return {"memory_id": memory_id, "retention": round(await memory.retention(memory_id), 4)}


async def sources(
    memory: AsyncMemory,
    memory_id: MemoryIdArgument,
) -> dict[str, Any]:
    """The occurrences merged into a memory (each near-repeat that reinforced it)."""
    from ucma.serialization import source_to_dict

    found = await memory.sources(memory_id)
    return {"memory_id": memory_id, "sources": [source_to_dict(s) for s in found]}


async def duplicates(
    memory: AsyncMemory,
    limit: LimitOption = 20,
) -> dict[str, Any]:
    """Writes that nearly repeated a memory and reinforced it instead, newest first."""
    from ucma.serialization import duplicate_to_dict

    found = await memory.duplicates(limit=limit)
    return {"duplicates": [duplicate_to_dict(d) for d in found]}


async def sleep_runs(
    memory: AsyncMemory,
    limit: LimitOption = 20,
    offset: Annotated[int, typer.Option(min=0, help="Runs to skip: the start of the page.")] = 0,
) -> dict[str, Any]:
    """The sleep cycles that ran for the scope, newest first: why, when, how long, and
    what each phase changed."""
    from ucma.serialization import sleep_run_to_dict

    found = await memory.sleep_runs(limit=limit, offset=offset)
    return {"sleep_runs": [sleep_run_to_dict(r) for r in found]}


async def salience_history(
    memory: AsyncMemory,
    memory_id: MemoryIdArgument,
) -> dict[str, Any]:
    """Every change outcomes made to a memory's salience, oldest first."""
    found = await memory.salience_history(memory_id)
    return {"memory_id": memory_id, "salience_history": [u.to_dict() for u in found]}


async def memory_influence(
    memory: AsyncMemory,
    min_decisions: Annotated[
        int | None, typer.Option(help="Outcomes a memory needs for a verdict.")
    ] = None,
) -> dict[str, Any]:
    """How the decisions each memory fed turned out, with a verdict per memory."""
    found = await memory.memory_influence(min_decisions=min_decisions)
    return {"influence": [i.to_dict() for i in found]}


async def trace(
    memory: AsyncMemory,
    decision_id: DecisionIdArgument,
) -> dict[str, Any]:
    """One recorded decision: the memories it used and its outcome."""
    return (await memory.trace(decision_id)).to_dict()


async def traces(
    memory: AsyncMemory,
    observed: Annotated[
        bool | None,
        typer.Option("--observed/--open", help="Only decisions with an outcome, or without."),
    ] = None,
    limit: LimitOption = 20,
) -> dict[str, Any]:
    """The recorded decisions, newest first."""
    found = await memory.traces(observed=observed, limit=limit)
    return {"decisions": [t.to_dict() for t in found]}


async def counterfactuals(
    memory: AsyncMemory,
    decision_id: DecisionIdArgument,
) -> dict[str, Any]:
    """How a decision would likely have gone without each memory it used."""
    return (await memory.counterfactuals(decision_id)).to_dict()


async def replay(memory: AsyncMemory) -> dict[str, Any]:
    """Rebuild salience, opinions and learned strategies from the event log alone and
    compare them with the live records (changes nothing)."""
    from ucma.serialization import replay_to_dict

    return replay_to_dict(await memory.replay())


async def extract_patterns(memory: AsyncMemory) -> dict[str, Any]:
    """Groups of similar memories that consistently came before good outcomes."""
    return {"patterns": [p.to_dict() for p in await memory.extract_patterns()]}


def share_patterns(
    epsilon: Annotated[
        float | None, typer.Option(help="Privacy budget of the noise (smaller: more noise).")
    ] = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Patterns seen across the users of this database, privacy-protected for sharing
    (enough users and decisions, noise added, no personal data); the others with why."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return (await memory.share_patterns(epsilon=epsilon)).to_dict()

    show_work(work, user=None, agent="default", home=home, database=database, as_json=as_json)


async def review_flags(
    memory: AsyncMemory,
    include_cleared: Annotated[bool, typer.Option(help="Also list cleared flags.")] = False,
    limit: LimitOption = 20,
) -> dict[str, Any]:
    """Memories flagged for review because a fact they rest on changed."""
    from ucma.conflicts.reports import review_flag_to_dict

    flags = await memory.review_flags(include_cleared=include_cleared, limit=limit)
    return {"review_flags": [review_flag_to_dict(f) for f in flags]}


async def clear_review(
    memory: AsyncMemory,
    memory_id: MemoryIdArgument,
) -> dict[str, Any]:
    """Mark a flagged memory as reviewed: its rank recovers."""
    return {"memory_id": memory_id, "cleared": await memory.clear_review(memory_id)}


async def fact_history(
    memory: AsyncMemory,
    subject: Annotated[str, typer.Argument(help='e.g. "Alice"', show_default=False)],
    predicate: Annotated[str, typer.Argument(help='e.g. "works_at"', show_default=False)],
) -> dict[str, Any]:
    """Every value a fact has had, newest first, with the conflicts between them."""
    from ucma.serialization import record_to_api_dict

    found = await memory.fact_history(subject, predicate)
    return {
        "facts": [record_to_api_dict(f) for f in found],
        "conflicts": [c.to_dict() for c in found.conflicts],
    }


async def conflicts(
    memory: AsyncMemory,
    subject: Annotated[str | None, typer.Option(help="Only about this subject.")] = None,
    pending: Annotated[bool, typer.Option(help="Only those waiting for the user.")] = False,
    limit: LimitOption = 20,
) -> dict[str, Any]:
    """Recorded conflicts between facts, newest first."""
    found = await memory.conflicts(
        subject=subject, status="pending" if pending else None, limit=limit
    )
    return {"conflicts": [c.to_dict() for c in found]}


async def find_learnings(
    memory: AsyncMemory,
    tags: Annotated[list[str], typer.Argument(help="Tags of the situation.", show_default=False)],
    limit: LimitOption = 5,
) -> dict[str, Any]:
    """Lessons learned that apply to a situation, by its tags, most confident first."""
    from ucma.serialization import record_to_api_dict

    found = await memory.find_learnings(tags, limit=limit)
    return {"learnings": [record_to_api_dict(r) for r in found]}


COMMANDS = (
    retention,
    sources,
    duplicates,
    sleep_runs,
    salience_history,
    memory_influence,
    trace,
    traces,
    counterfactuals,
    replay,
    extract_patterns,
    review_flags,
    clear_review,
    fact_history,
    conflicts,
    find_learnings,
)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``: one scope's each, and ``share-patterns`` over all."""
    for work in COMMANDS:
        app.command(work.__name__.replace("_", "-"))(scoped_command(work))
    app.command("share-patterns")(share_patterns)
