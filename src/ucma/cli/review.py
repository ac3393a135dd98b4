"""``ucma retention | sources | duplicates | salience-history | memory-influence | trace |
traces | counterfactuals | replay | extract-patterns | share-patterns | review-flags |
clear-review | fact-history | conflicts | find-learnings``: commands to review what the
memory holds and how it learnt, each named like the Python method it calls and printing
the same JSON the REST route and MCP tool of that name answer (``--json``), or a
readable form of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import (
    AgentOption,
    HomeOption,
    JsonOption,
    UserOption,
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


def retention(
    memory_id: MemoryIdArgument,
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """How much of a memory is retained now, from 0 to 1, on its forgetting curve."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return {"memory_id": memory_id, "retention": round(await memory.retention(memory_id), 4)}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def sources(
    memory_id: MemoryIdArgument,
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """The occurrences merged into a memory (each near-repeat that reinforced it)."""
    from ucma.serialization import source_to_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.sources(memory_id)
        return {"memory_id": memory_id, "sources": [source_to_dict(s) for s in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def duplicates(
    user: UserOption,
    agent: AgentOption = "default",
    limit: LimitOption = 20,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Writes that nearly repeated a memory and reinforced it instead, newest first."""
    from ucma.serialization import duplicate_to_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.duplicates(limit=limit)
        return {"duplicates": [duplicate_to_dict(d) for d in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def salience_history(
    memory_id: MemoryIdArgument,
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Every change outcomes made to a memory's salience, oldest first."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.salience_history(memory_id)
        return {"memory_id": memory_id, "salience_history": [u.to_dict() for u in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def memory_influence(
    user: UserOption,
    agent: AgentOption = "default",
    min_decisions: Annotated[
        int | None, typer.Option(help="Outcomes a memory needs for a verdict.")
    ] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """How the decisions each memory fed turned out, with a verdict per memory."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.memory_influence(min_decisions=min_decisions)
        return {"influence": [i.to_dict() for i in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def trace(
    decision_id: DecisionIdArgument,
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """One recorded decision: the memories it used and its outcome."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return (await memory.trace(decision_id)).to_dict()

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def traces(
    user: UserOption,
    agent: AgentOption = "default",
    observed: Annotated[
        bool | None,
        typer.Option("--observed/--open", help="Only decisions with an outcome, or without."),
    ] = None,
    limit: LimitOption = 20,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """The recorded decisions, newest first."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.traces(observed=observed, limit=limit)
        return {"decisions": [t.to_dict() for t in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def counterfactuals(
    decision_id: DecisionIdArgument,
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """How a decision would likely have gone without each memory it used."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return (await memory.counterfactuals(decision_id)).to_dict()

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def replay(
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Rebuild salience, opinions and learned strategies from the event log alone and
    compare them with the live records (changes nothing)."""
    from ucma.serialization import replay_to_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return replay_to_dict(await memory.replay())

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def extract_patterns(
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Groups of similar memories that consistently came before good outcomes."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return {"patterns": [p.to_dict() for p in await memory.extract_patterns()]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def share_patterns(
    epsilon: Annotated[
        float | None, typer.Option(help="Privacy budget of the noise (smaller: more noise).")
    ] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Patterns seen across the users of this database, privacy-protected for sharing
    (enough users and decisions, noise added, no personal data); the others with why."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return (await memory.share_patterns(epsilon=epsilon)).to_dict()

    show_work(work, user=None, agent="default", home=home, as_json=as_json)


def review_flags(
    user: UserOption,
    agent: AgentOption = "default",
    include_cleared: Annotated[bool, typer.Option(help="Also list cleared flags.")] = False,
    limit: LimitOption = 20,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Memories flagged for review because a fact they rest on changed."""
    from ucma.conflicts.reports import review_flag_to_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        flags = await memory.review_flags(include_cleared=include_cleared, limit=limit)
        return {"review_flags": [review_flag_to_dict(f) for f in flags]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def clear_review(
    memory_id: MemoryIdArgument,
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Mark a flagged memory as reviewed: its rank recovers."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return {"memory_id": memory_id, "cleared": await memory.clear_review(memory_id)}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def fact_history(
    subject: Annotated[str, typer.Argument(help='e.g. "Alice"', show_default=False)],
    predicate: Annotated[str, typer.Argument(help='e.g. "works_at"', show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Every value a fact has had, newest first, with the conflicts between them."""
    from ucma.serialization import record_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.fact_history(subject, predicate)
        return {
            "facts": [record_to_api_dict(f) for f in found],
            "conflicts": [c.to_dict() for c in found.conflicts],
        }

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def conflicts(
    user: UserOption,
    agent: AgentOption = "default",
    subject: Annotated[str | None, typer.Option(help="Only about this subject.")] = None,
    pending: Annotated[bool, typer.Option(help="Only those waiting for the user.")] = False,
    limit: LimitOption = 20,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Recorded conflicts between facts, newest first."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.conflicts(
            subject=subject, status="pending" if pending else None, limit=limit
        )
        return {"conflicts": [c.to_dict() for c in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def find_learnings(
    tags: Annotated[list[str], typer.Argument(help="Tags of the situation.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    limit: LimitOption = 5,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Lessons learned that apply to a situation, by its tags, most confident first."""
    from ucma.serialization import record_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.find_learnings(tags, limit=limit)
        return {"learnings": [record_to_api_dict(r) for r in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


COMMANDS = (
    retention,
    sources,
    duplicates,
    salience_history,
    memory_influence,
    trace,
    traces,
    counterfactuals,
    replay,
    extract_patterns,
    share_patterns,
    review_flags,
    clear_review,
    fact_history,
    conflicts,
    find_learnings,
)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for function in COMMANDS:
        app.command(function.__name__.replace("_", "-"))(function)
