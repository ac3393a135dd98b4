"""What every ``ucma`` command shares: options, the data folder, the engine, output.

Human output goes to stdout through rich; ``--json`` prints JSON on stdout instead;
progress bars and errors go to stderr, so ``--json`` output stays parseable. A UCMA
error prints one red line on stderr and exits with status 1.
"""

from __future__ import annotations

import inspect
import json
import os
import typing
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import anyio
import typer
from rich.console import Console
from rich.text import Text

from ucma.errors import UCMAError
from ucma.memory.levels import ContentType
from ucma.types import Bank

if TYPE_CHECKING:
    from ucma.config import UCMAConfig
    from ucma.engine import AsyncMemory

__all__ = [
    "DATABASE_NAME",
    "LOCAL_HOST",
    "AgentOption",
    "BankOption",
    "ContentTypeOption",
    "DatabaseOption",
    "HomeOption",
    "JsonOption",
    "SalienceOption",
    "TemporalLevelOption",
    "UserOption",
    "fail",
    "home_folder",
    "plural",
    "print_json",
    "reported_errors",
    "scoped_command",
    "show",
    "show_work",
    "stderr",
    "stdout",
    "store_location",
    "store_step",
    "json_option",
    "with_memory",
]

T = TypeVar("T")

DATABASE_NAME = "ucma.db"
LOCAL_HOST = "127.0.0.1"

HomeOption = Annotated[
    Path | None,
    typer.Option(
        "--home",
        envvar="UCMA_HOME",
        file_okay=False,
        show_default=False,
        help="Data folder holding ucma.db [default: $UCMA_HOME or ~/.ucma].",
    ),
]
DatabaseOption = Annotated[
    str | None,
    typer.Option(
        "--database",
        envvar="UCMA_DATABASE",
        show_default=False,
        help="The store: a file path or URL (sqlite:///<path>, postgresql://...) "
        "[default: $UCMA_DATABASE, else <home>/ucma.db].",
    ),
]
UserOption = Annotated[
    str, typer.Option("--user", "-u", help="user_id: whose memory (required).", show_default=False)
]
AgentOption = Annotated[str, typer.Option("--agent", "-a", help="agent_id within that user.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]

# The store step where the caller knows better than the heuristics (seed 003 R1, R2).
ContentTypeOption = Annotated[
    ContentType | None,
    typer.Option(help="What it is: read for how long it lasts [default: heuristics]."),
]
TemporalLevelOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=4,
        help="1 immediate, 2 situational, 3 seasonal, 4 identity [default: heuristics].",
    ),
]
SalienceOption = Annotated[
    float | None,
    typer.Option(
        min=0.0,
        max=1.0,
        help="Starting salience: 1 stated by the user, 0.8 strong, 0.6 inferred, 0.4 a guess "
        "[default: heuristics].",
    ),
]
BankOption = Annotated[
    Bank | None,
    typer.Option(help="[default: opinion for a stated preference, else experience]."),
]


def store_step(
    content_type: ContentType | None,
    temporal_level: int | None,
    salience: float | None,
    bank: Bank | None,
) -> dict[str, Any]:
    """The store-step options given, as the engine's keyword arguments."""
    given = {
        "content_type": content_type,
        "temporal_level": temporal_level,
        "salience": salience,
        "bank": bank,
    }
    return {name: value for name, value in given.items() if value is not None}


def stdout() -> Console:
    return Console(highlight=False)


def stderr() -> Console:
    return Console(stderr=True, highlight=False)


def fail(message: str) -> NoReturn:
    """Print one red line on stderr and exit 1."""
    line = " ".join(message.split()) or "unknown error"
    stderr().print(Text.assemble(("error: ", "bold red"), (line, "red")), soft_wrap=True)
    raise typer.Exit(1)


@contextmanager
def reported_errors() -> Iterator[None]:
    """Turn UCMA and file-system errors into a one-line message and exit status 1."""
    try:
        yield
    except UCMAError as exc:
        fail(str(exc) or type(exc).__name__)
    except OSError as exc:
        fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))


def home_folder(home: Path | None) -> Path:
    path = (home if home is not None else Path.home() / ".ucma").expanduser()
    with reported_errors():
        path.mkdir(parents=True, exist_ok=True)
    return path


def store_location(home: Path | None, database: str | None) -> str:
    """The store a command works on: ``--database`` (or ``$UCMA_DATABASE``, which
    typer reads when the option is absent) when given, else ``<home>/ucma.db``."""
    if database is not None:
        return database
    return str(home_folder(home) / DATABASE_NAME)


VAULT_KEY_VARIABLE = "UCMA_VAULT_KEY"


def engine_config() -> UCMAConfig:
    """The engine's config as the CLI and ``ucma serve`` build it: the vault key of the
    content guard from ``$UCMA_VAULT_KEY`` when set (docs/privacy.md), else the key file
    beside the database."""
    from ucma.config import PrivacyConfig, UCMAConfig

    key = os.environ.get(VAULT_KEY_VARIABLE) or None
    return UCMAConfig(privacy=PrivacyConfig(vault_key=key))


def with_memory(
    database: str | Path,
    work: Callable[[AsyncMemory], Awaitable[T]],
    *,
    user: str | None = None,
    agent: str = "default",
) -> T:
    """Open the engine on the store ``database`` names (a path or URL), run ``work``
    with it, close it; report UCMA errors."""

    async def main() -> T:
        from ucma.engine import AsyncMemory

        async with AsyncMemory(
            database, user_id=user, agent_id=agent, config=engine_config()
        ) as memory:
            return await work(memory)

    with reported_errors():
        return anyio.run(main)
    raise AssertionError("unreachable")  # pragma: no cover - reported_errors exits


def print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _cell(value: Any) -> Text:
    if isinstance(value, float):
        return Text(f"{value:.4g}")
    if isinstance(value, dict | list):
        return Text(json.dumps(value, ensure_ascii=False))
    return Text("" if value is None else str(value))


def show(data: dict[str, Any], as_json: bool) -> None:
    """``data`` as JSON, or one ``name: value`` line per field, each record of a list as
    an indented block of such lines."""
    if as_json:
        print_json(data)
        return
    console = stdout()
    for name, value in data.items():
        title = name.replace("_", " ")
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            console.print(Text(f"{title}: {len(value)}", style="bold"))
            for row in value:
                for index, (key, item) in enumerate(row.items()):
                    lead = "- " if index == 0 else "  "
                    console.print(Text.assemble(lead, (f"{key}: ", "bold"), _cell(item)))
        elif isinstance(value, list) and not value:
            console.print(Text.assemble((f"{title}: ", "bold"), "none"))
        else:
            console.print(Text.assemble((f"{title}: ", "bold"), _cell(value)))


def show_work(
    work: Callable[[AsyncMemory], Awaitable[dict[str, Any]]],
    *,
    user: str | None,
    agent: str,
    home: Path | None,
    database: str | None,
    as_json: bool,
) -> None:
    """Run ``work`` on the store of ``home`` (or ``database``) in the scope
    ``user``/``agent`` and ``show`` the dictionary it returns."""
    show(with_memory(store_location(home, database), work, user=user, agent=agent), as_json)


_SCOPE_PARAMETERS = (
    inspect.Parameter("user", inspect.Parameter.KEYWORD_ONLY, annotation=UserOption),
    inspect.Parameter(
        "agent", inspect.Parameter.KEYWORD_ONLY, default="default", annotation=AgentOption
    ),
    inspect.Parameter("home", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=HomeOption),
    inspect.Parameter(
        "database", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=DatabaseOption
    ),
    inspect.Parameter(
        "as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=JsonOption
    ),
)


def scoped_command(
    work: Callable[..., Awaitable[dict[str, Any]]],
) -> Callable[..., None]:
    """The command of ``work(memory, **arguments)``, an async function that calls one
    method of the engine and returns what to show: the command takes ``work``'s
    arguments and options (after ``memory``, as ``work`` declares them) between the
    scope's (``--user``, ``--agent``) and ``--home``, ``--database`` and ``--json``,
    runs ``work`` in that scope and ``show``s its answer. Name and help are ``work``'s."""
    # Only the command's own annotations are read: ``memory``'s type is for mypy alone.
    own = list(inspect.signature(work).parameters.values())[1:]
    hints = typing.get_type_hints(work, include_extras=True, localns={"AsyncMemory": object})
    parameters = [
        _SCOPE_PARAMETERS[0],
        _SCOPE_PARAMETERS[1],
        *(p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[p.name]) for p in own),
        *_SCOPE_PARAMETERS[2:],
    ]

    def command(
        *,
        user: str,
        agent: str,
        home: Path | None,
        database: str | None,
        as_json: bool,
        **given: Any,
    ) -> None:
        show_work(
            lambda memory: work(memory, **given),
            user=user,
            agent=agent,
            home=home,
            database=database,
            as_json=as_json,
        )

    command.__name__ = work.__name__
    command.__qualname__ = work.__qualname__
    command.__doc__ = work.__doc__
    command.__module__ = work.__module__
    command.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    return command


def json_option(raw: str | None, option: str) -> Any:
    """The value of a JSON option, None when it is absent; a ValidationError that names
    the option when it is not JSON."""
    if raw is None:
        return None
    from ucma.errors import ValidationError

    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"{option} is not JSON: {exc}") from exc
