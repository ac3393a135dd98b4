"""``ucma answer | learn | validate-learning | assert-fact | resolve-conflict |
add-procedure | find-procedures | record-procedure-outcome``: commands that write and
read what the memory knows (facts, lessons, procedures) and answer from it, each named
like the Python method it calls and printing the JSON its REST route answers
(``--json``), or a readable form of it.

Structured input comes as repeated options (``--step``, ``--tag``, ``--evidence``) or
as a JSON option (``--steps``, ``--metadata``); the engine validates it and a
ValidationError prints one line that names what is wrong."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import (
    AgentOption,
    DatabaseOption,
    HomeOption,
    JsonOption,
    UserOption,
    json_option,
    show_work,
)
from ucma.types import LearningType, ProcedureStatus, Provenance

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]

MetadataOption = Annotated[
    str | None, typer.Option(help="A JSON object stored with it, e.g. '{\"a\": 1}'.")
]
ConfidenceOption = Annotated[float, typer.Option(min=0.0, max=1.0, help="From 0 to 1.")]
SuccessOption = Annotated[
    bool,
    typer.Option("--success/--failure", help="Whether it worked (required).", show_default=False),
]
TagOption = Annotated[
    list[str] | None, typer.Option("--tag", "-t", help="A tag (repeatable).", show_default=False)
]


def answer(
    message: Annotated[str, typer.Argument(help="The question, as asked.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    limit: Annotated[
        int | None, typer.Option(min=1, help="Most memories to consult [default: 10].")
    ] = None,
    entity: Annotated[str | None, typer.Option(help="Only memories about this.")] = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Answer MESSAGE from memory, with the conflicts it had to settle said out loud
    ("I don't know" when recall is not confident)."""
    from ucma.serialization import with_iso_times

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        report = (await memory.answer(message, limit=limit, entity=entity)).to_dict()
        for kind in ("facts", "procedures"):
            report[kind] = [with_iso_times(record) for record in report[kind]]
        return report if as_json else {"response": report["response"], **report}

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def learn(
    insight: Annotated[str, typer.Argument(help="The lesson, in a sentence.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    learning_type: Annotated[
        LearningType, typer.Option("--type", help="What kind of lesson.")
    ] = LearningType.DOMAIN_INSIGHT,
    title: Annotated[str | None, typer.Option(help="A short title.")] = None,
    evidence: Annotated[
        list[str] | None,
        typer.Option(help="Id of a memory the lesson came from (repeatable).", show_default=False),
    ] = None,
    tag: TagOption = None,
    confidence: ConfidenceOption = 0.5,
    impact: Annotated[float, typer.Option(min=0.0, max=1.0, help="How much it matters.")] = 0.5,
    metadata: MetadataOption = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Store a lesson learned, linked to the memories it came from and tagged with the
    situations it applies to."""
    from ucma.serialization import record_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        learning = await memory.learn(
            insight,
            learning_type=learning_type,
            title=title,
            evidence_ids=evidence or (),
            applicability=tag or (),
            confidence=confidence,
            impact_score=impact,
            metadata=json_option(metadata, "--metadata"),
        )
        return record_to_api_dict(learning)

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def validate_learning(
    learning_id: Annotated[str, typer.Argument(help="A lesson's id.", show_default=False)],
    success: SuccessOption,
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Confirm (--success) or refute (--failure) a lesson after applying it: its
    confidence rises or falls."""
    from ucma.serialization import record_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return record_to_api_dict(await memory.validate_learning(learning_id, success))

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def assert_fact(
    subject: Annotated[str, typer.Argument(help='e.g. "Alice"', show_default=False)],
    predicate: Annotated[str, typer.Argument(help='e.g. "works_at"', show_default=False)],
    value: Annotated[str, typer.Argument(help='The object, e.g. "Acme"', show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    confidence: ConfidenceOption = 0.8,
    provenance: Annotated[
        Provenance, typer.Option(help="Where the fact came from.")
    ] = Provenance.USER_STATED,
    source: Annotated[
        list[str] | None,
        typer.Option(help="Id of an episode it was drawn from (repeatable).", show_default=False),
    ] = None,
    valid_from: Annotated[
        float | None, typer.Option(help="True from this moment (epoch seconds).")
    ] = None,
    valid_until: Annotated[
        float | None, typer.Option(help="True until this moment (epoch seconds).")
    ] = None,
    content: Annotated[str | None, typer.Option(help='Text form [default: "S P O"].')] = None,
    metadata: MetadataOption = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Assert (or reinforce) a fact SUBJECT PREDICATE VALUE and show what it changed: a
    new value for a single-valued predicate is a conflict, settled by the conflict rules
    or left for the user (then see ucma resolve-conflict)."""
    from ucma.serialization import with_iso_times

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        result = await memory.assert_fact_detailed(
            subject,
            predicate,
            value,
            confidence=confidence,
            source_episode_ids=source or (),
            provenance=provenance,
            valid_from=valid_from,
            valid_until=valid_until,
            content=content,
            metadata=json_option(metadata, "--metadata"),
        )
        report = result.to_dict()
        report["fact"] = with_iso_times(report["fact"])
        return report

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def resolve_conflict(
    conflict_id: Annotated[
        str, typer.Argument(help="A conflict id (cfl_...).", show_default=False)
    ],
    chosen_value: Annotated[
        str,
        typer.Argument(help="The value the user chose: one of its options.", show_default=False),
    ],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Apply the user's choice to a pending conflict: the chosen value's fact is
    reinforced, the other kept as history."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return (await memory.resolve_conflict(conflict_id, chosen_value)).to_dict()

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def add_procedure(
    name: Annotated[str, typer.Argument(help="A short name.", show_default=False)],
    description: Annotated[str, typer.Argument(help="What it does.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    step: Annotated[
        list[str] | None,
        typer.Option(help="A step's description, in order (repeatable).", show_default=False),
    ] = None,
    steps: Annotated[
        str | None,
        typer.Option(
            help="The steps as a JSON list of objects, each with a description and "
            "optionally action_type, action_spec, success_criteria, on_failure, max_retries: "
            '\'[{"description": "generate a new key"}]\'. Not with --step.'
        ),
    ] = None,
    tag: TagOption = None,
    status: Annotated[ProcedureStatus, typer.Option(help="Its status.")] = ProcedureStatus.DRAFT,
    metadata: MetadataOption = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Store a reusable procedure, found later by its trigger tags (--tag) or its text."""
    from ucma.errors import ValidationError
    from ucma.serialization import record_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        parsed: Any = [{"description": text} for text in step or ()]
        if steps is not None:
            if step:
                raise ValidationError("give the steps with --step or with --steps, not both")
            parsed = json_option(steps, "--steps")
            if not isinstance(parsed, list):
                raise ValidationError("--steps must be a JSON list of step objects")
        procedure = await memory.add_procedure(
            name,
            description,
            steps=parsed,
            trigger_tags=tag or (),
            status=status,
            metadata=json_option(metadata, "--metadata"),
        )
        return record_to_api_dict(procedure)

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def find_procedures(
    tags: Annotated[list[str], typer.Argument(help="Trigger tags to match.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    min_success_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Leave out procedures below this rate.")
    ] = 0.0,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Most to show.")] = 20,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Procedures sharing a tag, best confidence-weighted success rate first."""
    from ucma.serialization import record_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        found = await memory.find_procedures(tags, min_success_rate=min_success_rate)
        return {"procedures": [record_to_api_dict(p) for p in found[:limit]]}

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


def record_procedure_outcome(
    procedure_id: Annotated[str, typer.Argument(help="A procedure's id.", show_default=False)],
    success: SuccessOption,
    user: UserOption,
    task: Annotated[
        str | None, typer.Option(help="The task it was applied to: kept as an experience.")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why it failed: a failure mode.")] = None,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Record one run of a procedure or strategy (--success or --failure): its success
    rate, and with enough evidence its status, follow."""
    from ucma.serialization import record_to_api_dict

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return record_to_api_dict(
            await memory.record_procedure_outcome(
                procedure_id, success, task=task, failure_reason=reason
            )
        )

    show_work(work, user=user, agent=agent, home=home, database=database, as_json=as_json)


COMMANDS = (
    answer,
    learn,
    validate_learning,
    assert_fact,
    resolve_conflict,
    add_procedure,
    find_procedures,
    record_procedure_outcome,
)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for function in COMMANDS:
        app.command(function.__name__.replace("_", "-"))(function)
