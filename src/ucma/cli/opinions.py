"""``ucma retain | find-opinion | opinions | opinions-below | get-opinion |
opinion-history | reinforce-opinion | weaken-opinion``: banks and opinions (seed 000),
each named like the Python method it calls and printing the JSON its REST route answers
(``--json``), or a readable form of it."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import scoped_command
from ucma.types import Bank

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]

OpinionArgument = Annotated[str, typer.Argument(help="An opinion's id.", show_default=False)]
EvidenceOption = Annotated[str | None, typer.Option(help="What was seen or said.")]
WeightOption = Annotated[
    float | None,
    typer.Option(min=0.0, max=1.0, help="How strong, above 0 and at most 1 [default: 0.5]."),
]
LimitOption = Annotated[int, typer.Option("--limit", "-n", min=1, max=10_000, help="Most to show.")]


async def retain(
    memory: AsyncMemory,
    text: Annotated[str, typer.Argument(help="The statement.", show_default=False)],
    bank: Annotated[Bank, typer.Option(help="The bank to store it in (required).")],
    confidence: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="How sure, from 0 to 1.")
    ] = None,
    entity: Annotated[
        list[str] | None,
        typer.Option(help="Who or what it involves (repeatable).", show_default=False),
    ] = None,
    topic: Annotated[str | None, typer.Option(help="For an opinion: what it is about.")] = None,
) -> dict[str, Any]:
    """Store TEXT in a bank (world, experience, opinion, observation); in the opinion
    bank it forms an opinion, or reinforces or weakens the one held on its topic."""
    observation = await memory.retain(
        text, bank=bank, confidence=confidence, entities=entity, topic=topic
    )
    return dataclasses.asdict(observation)


async def find_opinion(
    memory: AsyncMemory,
    topic: Annotated[str, typer.Argument(help='e.g. "Alice\'s editor theme"', show_default=False)],
) -> dict[str, Any]:
    """The opinion held now on TOPIC (null when none is)."""
    from ucma.serialization import opinion_to_api_dict

    found = await memory.find_opinion(topic)
    return {"opinion": opinion_to_api_dict(found) if found else None}


async def opinions(
    memory: AsyncMemory,
    include_replaced: Annotated[
        bool, typer.Option("--include-replaced", help="Also the stances held before.")
    ] = False,
    limit: LimitOption = 100,
) -> dict[str, Any]:
    """The opinions held now, newest change first."""
    from ucma.serialization import opinion_to_api_dict

    found = await memory.opinions(include_replaced=include_replaced, limit=limit)
    return {"opinions": [opinion_to_api_dict(o) for o in found]}


async def opinions_below(
    memory: AsyncMemory,
    confidence: Annotated[
        float, typer.Argument(min=0.0, max=1.0, help="The bound.", show_default=False)
    ],
    limit: LimitOption = 100,
) -> dict[str, Any]:
    """Opinions held with less than CONFIDENCE: beliefs to check."""
    from ucma.serialization import opinion_to_api_dict

    found = await memory.opinions_below(confidence, limit=limit)
    return {"opinions": [opinion_to_api_dict(o) for o in found]}


async def get_opinion(memory: AsyncMemory, opinion_id: OpinionArgument) -> dict[str, Any]:
    """Show one opinion, with its evidence."""
    from ucma.serialization import opinion_to_api_dict

    return opinion_to_api_dict(await memory.get_opinion(opinion_id))


async def opinion_history(memory: AsyncMemory, opinion_id: OpinionArgument) -> dict[str, Any]:
    """The stances held on an opinion's topic, oldest first."""
    from ucma.serialization import opinion_to_api_dict

    chain = await memory.opinion_history(opinion_id)
    return {"opinions": [opinion_to_api_dict(o) for o in chain]}


async def reinforce_opinion(
    memory: AsyncMemory,
    opinion_id: OpinionArgument,
    evidence: EvidenceOption = None,
    weight: WeightOption = None,
) -> dict[str, Any]:
    """Evidence for an opinion: its confidence rises gradually."""
    from ucma.serialization import opinion_to_api_dict

    found = await memory.reinforce_opinion(opinion_id, evidence=evidence, weight=weight)
    return opinion_to_api_dict(found)


async def weaken_opinion(
    memory: AsyncMemory,
    opinion_id: OpinionArgument,
    evidence: EvidenceOption = None,
    weight: WeightOption = None,
    stance: Annotated[
        str | None, typer.Option(help="What replaces it if its confidence falls too low.")
    ] = None,
) -> dict[str, Any]:
    """Evidence against an opinion: its confidence falls gradually; too low, STANCE
    replaces it (history kept)."""
    from ucma.serialization import opinion_to_api_dict

    found = await memory.weaken_opinion(opinion_id, evidence=evidence, weight=weight, stance=stance)
    return opinion_to_api_dict(found)


COMMANDS = (
    retain,
    find_opinion,
    opinions,
    opinions_below,
    get_opinion,
    opinion_history,
    reinforce_opinion,
    weaken_opinion,
)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for work in COMMANDS:
        app.command(work.__name__.replace("_", "-"))(scoped_command(work))
