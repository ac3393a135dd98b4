"""``ucma episodes-between | related | links | link``: the episodes of a period and the memory
graph, each named like the Python method it calls and printing the JSON its REST route
answers (``--json``), or a readable form of it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import (
    AgentOption,
    DatabaseOption,
    HomeOption,
    JsonOption,
    UserOption,
    show_work,
)

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]

MomentArgument = Annotated[
    str,
    typer.Argument(
        help="Epoch seconds or an ISO 8601 time, e.g. 2026-11-24T09:00 (UTC unless it "
        "names a zone).",
        show_default=False,
    ),
]
MemoryIdArgument = Annotated[str, typer.Argument(help="A memory id.", show_default=False)]


def moment(text: str, name: str) -> float:
    """Epoch seconds from a number or an ISO 8601 time (UTC when it names no zone); a
    ValidationError naming ``name`` otherwise."""
    from ucma.errors import ValidationError

    try:
        return float(text)
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValidationError(
            f"{name} must be epoch seconds or an ISO 8601 time such as 2026-11-24T09:00, "
            f"got {text!r}"
        ) from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def episodes_between(
    start: MomentArgument,
    end: MomentArgument,
    user: UserOption,
    agent: AgentOption = "default",
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Most to show.")] = 100,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Episodes that happened between START and END, oldest first."""
    from ucma.serialization import record_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.episodes_between(
            moment(start, "START"), moment(end, "END"), limit=limit
        )
        return {"episodes": [record_to_api_dict(e) for e in found]}

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def related(
    memory_id: MemoryIdArgument,
    user: UserOption,
    agent: AgentOption = "default",
    max_hops: Annotated[int, typer.Option(min=1, max=10, help="Edges to follow at most.")] = 2,
    edge_type: Annotated[
        list[str] | None,
        typer.Option(help="Follow only edges of this type (repeatable).", show_default=False),
    ] = None,
    min_weight: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Leave out weaker paths.")
    ] = 0.0,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Memories reachable from a memory along the graph's links, best path first."""
    from ucma.serialization import record_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.related(
            memory_id, max_hops=max_hops, edge_types=edge_type, min_weight=min_weight
        )
        return {
            "results": [
                {"memory": record_to_api_dict(record), "weight": weight, "hops": hops}
                for record, weight, hops in found
            ]
        }

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def links(
    memory_id: MemoryIdArgument,
    user: UserOption,
    agent: AgentOption = "default",
    edge_type: Annotated[
        list[str] | None,
        typer.Option(help="Only links of this type (repeatable).", show_default=False),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Most to show.")] = 100,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """A memory's outgoing links one by one, strongest first, with their type and weight."""
    from ucma.serialization import link_to_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.links(memory_id, edge_types=edge_type, limit=limit)
        return {"memory_id": memory_id, "links": [link_to_dict(e, r) for e, r in found]}

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def link(
    source_id: Annotated[
        str, typer.Argument(help="The memory it starts from.", show_default=False)
    ],
    target_id: Annotated[str, typer.Argument(help="The memory it points to.", show_default=False)],
    edge_type: Annotated[str, typer.Argument(help='e.g. "caused"', show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    weight: Annotated[float, typer.Option(min=0.0, max=1.0, help="Its strength.")] = 1.0,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Link two memories with a typed, weighted edge (replacing one of that type)."""
    from ucma.serialization import edge_to_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return edge_to_dict(await memory.link(source_id, target_id, edge_type, weight=weight))

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


COMMANDS = (episodes_between, related, links, link)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for function in COMMANDS:
        app.command(function.__name__.replace("_", "-"))(function)
