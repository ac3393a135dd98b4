"""``ucma retain | find-opinion | opinions | opinions-below | get-opinion |
opinion-history | reinforce-opinion | weaken-opinion``: banks and opinions (seed 000),
each named like the Python method it calls and printing the JSON its REST route answers
(``--json``), or a readable form of it."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import AgentOption, HomeOption, JsonOption, UserOption, show_work
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


def retain(
    text: Annotated[str, typer.Argument(help="The statement.", show_default=False)],
    bank: Annotated[Bank, typer.Option(help="The bank to store it in (required).")],
    user: UserOption,
    agent: AgentOption = "default",
    confidence: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="How sure, from 0 to 1.")
    ] = None,
    entity: Annotated[
        list[str] | None,
        typer.Option(help="Who or what it involves (repeatable).", show_default=False),
    ] = None,
    topic: Annotated[str | None, typer.Option(help="For an opinion: what it is about.")] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Store TEXT in a bank (world, experience, opinion, observation); in the opinion
    bank it forms an opinion, or reinforces or weakens the one held on its topic."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        observation = await memory.retain(
            text, bank=bank, confidence=confidence, entities=entity, topic=topic
        )
        return dataclasses.asdict(observation)

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def find_opinion(
    topic: Annotated[str, typer.Argument(help='e.g. "Alice\'s editor theme"', show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """The opinion held now on TOPIC (null when none is)."""
    from ucma.serialization import opinion_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.find_opinion(topic)
        return {"opinion": opinion_to_api_dict(found) if found else None}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def opinions(
    user: UserOption,
    agent: AgentOption = "default",
    include_replaced: Annotated[
        bool, typer.Option("--include-replaced", help="Also the stances held before.")
    ] = False,
    limit: LimitOption = 100,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """The opinions held now, newest change first."""
    from ucma.serialization import opinion_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.opinions(include_replaced=include_replaced, limit=limit)
        return {"opinions": [opinion_to_api_dict(o) for o in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def opinions_below(
    confidence: Annotated[
        float, typer.Argument(min=0.0, max=1.0, help="The bound.", show_default=False)
    ],
    user: UserOption,
    agent: AgentOption = "default",
    limit: LimitOption = 100,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Opinions held with less than CONFIDENCE: beliefs to check."""
    from ucma.serialization import opinion_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.opinions_below(confidence, limit=limit)
        return {"opinions": [opinion_to_api_dict(o) for o in found]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def get_opinion(
    opinion_id: OpinionArgument,
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one opinion, with its evidence."""
    from ucma.serialization import opinion_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return opinion_to_api_dict(await memory.get_opinion(opinion_id))

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def opinion_history(
    opinion_id: OpinionArgument,
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """The stances held on an opinion's topic, oldest first."""
    from ucma.serialization import opinion_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        chain = await memory.opinion_history(opinion_id)
        return {"opinions": [opinion_to_api_dict(o) for o in chain]}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def reinforce_opinion(
    opinion_id: OpinionArgument,
    user: UserOption,
    agent: AgentOption = "default",
    evidence: EvidenceOption = None,
    weight: WeightOption = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Evidence for an opinion: its confidence rises gradually."""
    from ucma.serialization import opinion_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.reinforce_opinion(opinion_id, evidence=evidence, weight=weight)
        return opinion_to_api_dict(found)

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def weaken_opinion(
    opinion_id: OpinionArgument,
    user: UserOption,
    agent: AgentOption = "default",
    evidence: EvidenceOption = None,
    weight: WeightOption = None,
    stance: Annotated[
        str | None, typer.Option(help="What replaces it if its confidence falls too low.")
    ] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Evidence against an opinion: its confidence falls gradually; too low, STANCE
    replaces it (history kept)."""
    from ucma.serialization import opinion_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.weaken_opinion(
            opinion_id, evidence=evidence, weight=weight, stance=stance
        )
        return opinion_to_api_dict(found)

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


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
    for function in COMMANDS:
        app.command(function.__name__.replace("_", "-"))(function)
