"""``ucma``: run the memory service, the seed demo, and scoped memory operations.

Every command works on ``<home>/ucma.db``; ``--home`` defaults to ``$UCMA_HOME`` or
``~/.ucma`` (the CLI reads the environment, the library never does). Commands that touch
memory need ``--user`` (every memory belongs to a user). ``--json`` prints machine-readable
JSON on stdout. A UCMA error prints one red line on stderr and exits with status 1.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import anyio
import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ucma.errors import UCMAError

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory
    from ucma.types import Hit

__all__ = ["app"]

T = TypeVar("T")

DATABASE_NAME = "ucma.db"
LOCAL_HOST = "127.0.0.1"

app = typer.Typer(
    name="ucma",
    help="UCMA: offline long-term memory for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

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
UserOption = Annotated[
    str, typer.Option("--user", "-u", help="user_id: whose memory (required).", show_default=False)
]
AgentOption = Annotated[str, typer.Option("--agent", "-a", help="agent_id within that user.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


# ------------------------------------------------------------------------------ helpers


def _stdout() -> Console:
    return Console(highlight=False)


def _fail(message: str) -> NoReturn:
    """Print one red line on stderr and exit 1."""
    line = " ".join(message.split()) or "unknown error"
    Console(stderr=True, highlight=False).print(
        Text.assemble(("error: ", "bold red"), (line, "red")), soft_wrap=True
    )
    raise typer.Exit(1)


@contextmanager
def _reported_errors() -> Iterator[None]:
    """Turn UCMA and file-system errors into a one-line message and exit status 1."""
    try:
        yield
    except UCMAError as exc:
        _fail(str(exc) or type(exc).__name__)
    except OSError as exc:
        _fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))


def _home(home: Path | None) -> Path:
    path = (home if home is not None else Path.home() / ".ucma").expanduser()
    with _reported_errors():
        path.mkdir(parents=True, exist_ok=True)
    return path


def _with_memory(
    database: Path,
    work: Callable[[AsyncMemory], Awaitable[T]],
    *,
    user: str | None = None,
    agent: str = "default",
) -> T:
    """Open the engine on ``database``, run ``work`` with it, close it; report UCMA errors."""

    async def main() -> T:
        from ucma.engine import AsyncMemory

        async with AsyncMemory(database, user_id=user, agent_id=agent) as memory:
            return await work(memory)

    with _reported_errors():
        return anyio.run(main)
    raise AssertionError("unreachable")  # pragma: no cover - _reported_errors exits


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _hits_table(hits: list[Hit], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("kind")
    table.add_column("score", justify="right")
    table.add_column("content", overflow="fold")
    for rank, hit in enumerate(hits, 1):
        table.add_row(str(rank), str(hit.kind), f"{hit.score:.3f}", Text(hit.content))
    return table


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows: list[tuple[str, Any]] = []
        for key, item in value.items():
            rows.extend(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return rows
    return [(prefix, value)]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _hits_json(hits: list[Hit]) -> list[dict[str, Any]]:
    from ucma.serialization import hit_to_dict

    return [hit_to_dict(hit) for hit in hits]


# ----------------------------------------------------------------------------- commands


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = LOCAL_HOST,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8765,
    home: HomeOption = None,
) -> None:
    """Run the REST memory service (OpenAPI at /docs)."""
    try:
        import uvicorn

        from ucma.server import create_app
    except ImportError as exc:
        _fail(
            f"the server needs the server extra ({exc.name} is missing): pip install 'ucma[server]'"
        )
    folder = _home(home)
    out = _stdout()
    out.print("[bold]UCMA memory service[/bold]")
    out.print(f"  database  {folder / DATABASE_NAME}", markup=False)
    out.print(f"  listening http://{host}:{port}  (API docs at /docs)", markup=False)
    if host == LOCAL_HOST:
        out.print(f"  local mode: bound to {LOCAL_HOST} only, no authentication", markup=False)
    else:
        out.print(f"[yellow]  warning: bound to {host}; the API has no authentication yet[/yellow]")
    with _reported_errors():
        uvicorn.run(create_app(home=folder), host=host, port=port)


@app.command()
def demo(
    home: Annotated[
        Path | None,
        typer.Option("--home", file_okay=False, help="Write the demo into <home>/ucma.db."),
    ] = None,
    db: Annotated[Path | None, typer.Option("--db", dir_okay=False, help="Database file.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Run seed 001's two-session JWT example and show what session 2 remembers.

    Without --home or --db the demo uses a throwaway database.
    """
    from ucma.demo import DEMO_AGENT, DEMO_QUERY, DEMO_USER, SESSION_1, run_demo

    if home is not None and db is not None:
        raise typer.BadParameter("use either --home or --db, not both", param_hint="--db")
    with tempfile.TemporaryDirectory(prefix="ucma-demo-") as scratch:
        if db is not None:
            database, keep = db.expanduser(), True
            with _reported_errors():
                database.parent.mkdir(parents=True, exist_ok=True)
        elif home is not None:
            database, keep = _home(home) / DATABASE_NAME, True
        else:
            database, keep = Path(scratch) / DATABASE_NAME, False
        hits = _with_memory(database, run_demo)

    if as_json:
        _print_json(
            {
                "database": str(database) if keep else None,
                "user_id": DEMO_USER,
                "agent_id": DEMO_AGENT,
                "query": DEMO_QUERY,
                "results": _hits_json(hits),
            }
        )
        return
    out = _stdout()
    out.print("[bold]Session 1[/bold]: observed", len(SESSION_1), "inputs and stored a learning")
    for content, source in SESSION_1:
        out.print(Text(f"  {source:>11}  {content}"))
    out.print("  learning: JWT tokens expiring early? check clock skew, add a leeway")
    out.print(f"[bold]Session 2[/bold]: remember({DEMO_QUERY!r})", markup=True)
    out.print(_hits_table(hits, f"What session 2 remembers (user {DEMO_USER})"))
    where = f"database: {database}" if keep else "database: throwaway (use --home or --db to keep)"
    out.print(where, markup=False)


@app.command()
def observe(
    text: Annotated[str, typer.Argument(help="What happened.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    source: Annotated[str, typer.Option(help="user, assistant, tool_result, ...")] = "user",
    session: Annotated[
        str | None, typer.Option(help="Session id [default: the current one].")
    ] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Observe one input; it is stored when it is important enough."""
    database = _home(home) / DATABASE_NAME
    observation = _with_memory(
        database,
        lambda memory: memory.observe(text, source=source, session_id=session),
        user=user,
        agent=agent,
    )
    if as_json:
        _print_json(dataclasses.asdict(observation))
    elif observation.stored:
        _stdout().print(
            f"stored {observation.id} (importance {observation.importance:.2f}, "
            f"level {observation.temporal_level})",
            markup=False,
        )
    else:
        _stdout().print(
            f"not stored: importance {observation.importance:.2f} is below the storage "
            "threshold (kept in the sensory buffer only)",
            markup=False,
        )


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to remember.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    limit: Annotated[int, typer.Option(min=1, help="Most results to return.")] = 10,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Retrieve the memories most relevant to QUERY, best first."""
    database = _home(home) / DATABASE_NAME
    hits = _with_memory(
        database, lambda memory: memory.remember(query, limit=limit), user=user, agent=agent
    )
    if as_json:
        _print_json({"results": _hits_json(hits)})
    elif not hits:
        _stdout().print("no memories match", markup=False)
    else:
        _stdout().print(_hits_table(hits, f"recall: {query}"))


@app.command()
def stats(
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Counts and sizes of one user's memory."""
    database = _home(home) / DATABASE_NAME
    numbers = _with_memory(database, lambda memory: memory.stats(), user=user, agent=agent)
    if as_json:
        _print_json(numbers)
        return
    table = Table(title=f"UCMA stats: {user} / {agent}", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in _flatten(numbers):
        table.add_row(Text(key), Text(str(value)))
    _stdout().print(table)


@app.command()
def export(
    path: Annotated[Path, typer.Argument(dir_okay=False, help="JSONL file to write.")],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
) -> None:
    """Write one user's memories to a JSONL file."""
    database = _home(home) / DATABASE_NAME
    count = _with_memory(database, lambda memory: memory.export_jsonl(path), user=user, agent=agent)
    _stdout().print(f"exported {_plural(count, 'record')} to {path}", markup=False)


@app.command("import")
def import_records(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSONL file to read.")],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
) -> None:
    """Load memories from a JSONL file (written by export) into one user's memory."""
    database = _home(home) / DATABASE_NAME
    count = _with_memory(database, lambda memory: memory.import_jsonl(path), user=user, agent=agent)
    _stdout().print(f"imported {_plural(count, 'record')} from {path}", markup=False)


# ------------------------------------------------------------ lifecycle (issue 4)

gardener_app = typer.Typer(help="The gardener: scheduled maintenance jobs.", no_args_is_help=True)
app.add_typer(gardener_app, name="gardener")


@app.command()
def sleep(
    user: Annotated[
        str | None,
        typer.Option(
            "--user", "-u", help="Only this user [default: every scope].", show_default=False
        ),
    ] = None,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run a sleep cycle: compress, abstract facts, reinforce, forget, clean up."""
    from rich.progress import BarColumn, Progress, TextColumn

    database = _home(home) / DATABASE_NAME
    quiet = as_json
    with Progress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[phase]}"),
        console=Console(stderr=True), disable=quiet, transient=True,
    ) as bar:  # fmt: skip
        task = bar.add_task("sleep", total=5, phase="")

        def progress(phase: str, number: int, total: int) -> None:
            bar.update(task, completed=number - 1, total=total, phase=phase)

        async def work(memory: AsyncMemory) -> list[Any]:
            if user is None:
                return await memory.sleep_all(progress=progress)
            return [await memory.sleep(progress=progress)]

        reports = _with_memory(database, work, user=user, agent=agent)
        bar.update(task, completed=5, phase="done")
    if as_json:
        _print_json([r.to_dict() for r in reports])
        return
    table = Table(title="Sleep cycle", title_justify="left")
    for column in ("scope", "compressed", "promoted", "archived", "facts", "edges", "forgotten"):
        table.add_column(column, justify="left" if column == "scope" else "right")
    for r in reports:
        table.add_row(
            Text(f"{r.user_id}/{r.agent_id}"),
            str(r.compress.get("expired", 0)),
            str(r.compress.get("promoted", 0)),
            str(r.compress.get("archived", 0)),
            f"{r.abstract.get('facts_new', 0)} new, {r.abstract.get('facts_reinforced', 0)} again",
            str(r.reinforce.get("edges_strengthened", 0)),
            f"{r.prune.get('archived', 0)} archived, {r.prune.get('purged', 0)} purged",
        )
    out = _stdout()
    out.print(table)
    if not reports:
        out.print("nothing to consolidate: the database holds no memories", markup=False)
    elif any(r.interrupted for r in reports):
        out.print("interrupted: the next sleep resumes where this one stopped", markup=False)


@gardener_app.command("run")
def gardener_run(
    job: Annotated[
        str | None,
        typer.Option(help="Run only this job now: decay, consolidate, prune or identity."),
    ] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the gardener's due jobs (or one job) over every scope."""
    database = _home(home) / DATABASE_NAME
    report = _with_memory(database, lambda memory: memory.run_gardener(job))
    if as_json:
        _print_json(report.to_dict())
    else:
        out = _stdout()
        for name, summary in report.ran.items():
            details = ", ".join(f"{k} {v}" for k, v in summary.items())
            out.print(f"ran {name}: {details}", markup=False)
        for name, why in report.skipped.items():
            out.print(f"skipped {name}: {why}", markup=False)
    if report.failed:
        _fail("; ".join(f"{name}: {error}" for name, error in report.failed.items()))


@app.command()
def forget(
    user: UserOption,
    agent: AgentOption = "default",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List, change nothing.")] = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Archive what the forgetting engine forgets; purge old archives."""
    database = _home(home) / DATABASE_NAME
    report = _with_memory(
        database, lambda memory: memory.forget(dry_run=dry_run), user=user, agent=agent
    )
    if as_json:
        _print_json(report.to_dict())
        return
    out = _stdout()
    verb = "would archive" if dry_run else "archived"
    for verdict in report.archived:
        out.print(f"{verb} {verdict.memory_id}: {verdict.reason}", markup=False)
    gone = "would purge" if dry_run else "purged"
    out.print(
        f"{verb} {len(report.archived)} memories, {gone} {len(report.purged)} "
        f"of {report.examined} examined",
        markup=False,
    )


if __name__ == "__main__":  # pragma: no cover - python -m ucma.cli.main
    app(prog_name="ucma")
