"""``ucma``: run the memory service (REST and MCP), the demo, and scoped operations.

Every command works on the store ``--database`` names (a file path or a URL such as
``postgresql://...``; default ``$UCMA_DATABASE``), else on ``<home>/ucma.db``, ``--home``
defaulting to ``$UCMA_HOME`` or ``~/.ucma`` (the CLI reads the environment, the library
never does). Commands that touch memory need ``--user`` (every memory belongs to a
user). ``--json`` prints machine-readable JSON on stdout. A UCMA error prints one red
line on stderr and exits with status 1.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ucma.cli.context import (
    DATABASE_NAME,
    LOCAL_HOST,
    AgentOption,
    BankOption,
    ContentTypeOption,
    DatabaseOption,
    HomeOption,
    JsonOption,
    SalienceOption,
    TemporalLevelOption,
    UserOption,
    engine_config,
    fail,
    plural,
    print_json,
    reported_errors,
    stderr,
    stdout,
    store_location,
    store_step,
    with_memory,
)
from ucma.cli.erasure import (
    backup_command,
    forget_person_command,
    forget_scope_command,
    restore_command,
)
from ucma.cli.goals import register as register_goal_commands
from ucma.cli.graph import register as register_graph_commands
from ucma.cli.keys import count_keys, keys_app
from ucma.cli.knowledge import register as register_knowledge_commands
from ucma.cli.loop import events_list
from ucma.cli.loop import register as register_loop_commands
from ucma.cli.migrate import migrate_command
from ucma.cli.opinions import register as register_opinion_commands
from ucma.cli.predictive import register as register_predictive_commands
from ucma.cli.privacy import register as register_privacy_commands
from ucma.cli.records import register as register_record_commands
from ucma.cli.review import register as register_review_commands
from ucma.cli.strategies import register as register_strategy_commands
from ucma.cli.synthesis import register as register_synthesis_commands
from ucma.cli.transfer import export_command, import_command
from ucma.cli.worker import worker_command
from ucma.config import ServiceConfig

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory
    from ucma.types import Fact, Hit

__all__ = ["app"]

app = typer.Typer(
    name="ucma",
    help="UCMA: offline long-term memory for LLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
app.add_typer(keys_app)
app.command("export")(export_command)
app.command("worker")(worker_command)
app.command("import")(import_command)
app.command("forget-person")(forget_person_command)
app.command("forget-scope")(forget_scope_command)
app.command("backup")(backup_command)
app.command("restore")(restore_command)
app.command("migrate")(migrate_command)
register_record_commands(app)
register_review_commands(app)
register_knowledge_commands(app)
register_graph_commands(app)
register_loop_commands(app)
register_privacy_commands(app)
register_opinion_commands(app)
register_strategy_commands(app)
register_predictive_commands(app)
register_synthesis_commands(app)
register_goal_commands(app)


def _print_version(value: bool) -> None:
    if value:
        import ucma

        typer.echo(f"ucma {ucma.__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Options of ucma itself (the help text is the Typer app's)."""


#: Benchmarks ``ucma bench`` can run, in the source checkout's bench/ folder.
BENCHMARKS = {"core": "core.py", "import": "import_throughput.py", "startup": "startup.py"}


# ------------------------------------------------------------------------------ helpers


def _hits_table(hits: list[Hit], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("kind")
    table.add_column("score", justify="right")
    table.add_column("confidence", justify="right")
    table.add_column("content", overflow="fold")
    for rank, hit in enumerate(hits, 1):
        confidence = f"{hit.confidence.overall:.2f}" if hit.confidence is not None else "-"
        table.add_row(str(rank), str(hit.kind), f"{hit.score:.3f}", confidence, Text(hit.content))
    return table


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        rows: list[tuple[str, Any]] = []
        for key, item in value.items():
            rows.extend(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return rows
    return [(prefix, value)]


def _hits_json(hits: list[Hit]) -> list[dict[str, Any]]:
    from ucma.serialization import hit_to_dict

    return [hit_to_dict(hit) for hit in hits]


def _shown(value: Any) -> str:
    """A value for people: floats to 3 decimals (no 0.8732000000000001)."""
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: The service's default limits, for the defaults of ``ucma serve``'s options.
_SERVICE = ServiceConfig()
#: Most items in one batch observe over the service: a batch is embedded in one request,
#: and 256 texts of 256 tokens take about 45 s of two shared cores.
DEFAULT_SERVICE_BATCH = 256


# ----------------------------------------------------------------------------- commands


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = LOCAL_HOST,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8765,
    home: HomeOption = None,
    database: DatabaseOption = None,
    no_auth: Annotated[
        bool,
        typer.Option("--no-auth", help="Ignore API keys (local mode: loopback hosts only)."),
    ] = False,
    sources: Annotated[
        Path | None,
        typer.Option(
            "--sources",
            envvar="UCMA_SOURCES",
            metavar="<file>",
            help="A TOML file of databases that answer for some facts (sources of truth): "
            "their values win over memory, and a disagreement is reported as a conflict.",
        ),
    ] = None,
    max_body_bytes: Annotated[
        int, typer.Option(min=1024, help="Largest request body; larger ones get 413.")
    ] = _SERVICE.max_body_bytes,
    max_import_bytes: Annotated[
        int, typer.Option(min=1024, help="Largest import body (JSON Lines, streamed).")
    ] = _SERVICE.max_import_bytes,
    max_header_bytes: Annotated[
        int, typer.Option(min=1024, help="Largest request headers; larger ones get 431.")
    ] = _SERVICE.max_header_bytes,
    body_timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds a client may take to send a body (a pause within any body: a "
            "third of that); a stalled body gets 408 and its connection closed.",
        ),
    ] = _SERVICE.body_timeout,
    max_concurrent_requests: Annotated[
        int,
        typer.Option(min=1, help="Requests in progress at once; one more gets 503 (Retry-After)."),
    ] = _SERVICE.max_concurrent_requests,
    max_batch_items: Annotated[
        int,
        typer.Option(min=1, help="Most items in one batch observe (each is embedded)."),
    ] = DEFAULT_SERVICE_BATCH,
    maintenance: Annotated[
        bool,
        typer.Option(
            "--maintenance/--no-maintenance",
            envvar="UCMA_MAINTENANCE",
            help="Run the scheduled maintenance (sleep cycles for every scope, the "
            "gardener's jobs) in this process; --no-maintenance leaves it to ucma worker "
            "processes on the same database.",
        ),
    ] = True,
) -> None:
    """Run the memory service: REST under /v1 (docs at /docs), MCP at /mcp.

    On 127.0.0.1 the service runs in local mode (no authentication) until an API key
    exists; a key created while it runs (ucma keys create) is required from the next
    request. Any other address needs keys from the start. --no-auth ignores keys (local
    mode, loopback addresses only). The --max-* and --body-timeout options bound what
    one request may cost (docs/isolation.md, "Input limits").
    """
    try:
        import uvicorn

        from ucma.server import create_app
        from ucma.server.protocol import header_deadline_protocol
        from ucma.server.trim import limit_arenas
    except ImportError as exc:
        fail(
            f"the server needs the server extra ({exc.name} is missing): pip install 'ucma[server]'"
        )
    path = store_location(home, database)
    with reported_errors():
        from ucma.conflicts.source_file import load_sources
        from ucma.storage import parse_location

        location = parse_location(path)
        truths = load_sources(sources) if sources is not None else []
    keys = 0 if no_auth else count_keys(path)
    loopback = _is_loopback(host)
    if not keys and not loopback:
        fail(
            f"refusing to bind {host} without API keys: anyone who can reach it could read "
            "every memory. Create a key (ucma keys create --user <user_id>) or bind 127.0.0.1."
        )
    # Loopback: keys are required while one exists (asked per request); elsewhere always.
    require_keys = False if no_auth else (None if loopback else True)
    out = stdout()
    out.print("[bold]UCMA memory service[/bold]")
    out.print(f"  database  {location}", markup=False)
    out.print(f"  listening http://{host}:{port}  (API docs at /docs, MCP at /mcp)", markup=False)
    if keys:
        out.print(f"  API keys required ({keys} active; manage with: ucma keys)", markup=False)
    elif no_auth:
        out.print(
            f"  local mode: bound to {host} only, no authentication (--no-auth)", markup=False
        )
    else:
        out.print(
            f"  local mode ({host} only): no authentication until an API key exists",
            markup=False,
        )
    for truth in truths:
        out.print(f"  source of truth  {truth.name}", markup=False)
    if not maintenance:
        out.print("  maintenance left to ucma worker processes (--no-maintenance)", markup=False)
    with reported_errors():
        config = engine_config()
        limits = ServiceConfig(
            max_body_bytes=max_body_bytes,
            max_import_bytes=max_import_bytes,
            max_header_bytes=max_header_bytes,
            body_timeout=body_timeout,
            body_idle_timeout=body_timeout / 3,
            max_concurrent_requests=max_concurrent_requests,
        )
        if limits.trim_memory_when_idle:
            limit_arenas()  # before any thread of the service allocates (ucma.server.trim)
        app_ = create_app(
            database=path,
            require_keys=require_keys,
            host=host,
            config=dataclasses.replace(
                config, limits=dataclasses.replace(config.limits, max_batch_size=max_batch_items)
            ),
            sources=truths,
            limits=limits,
            maintenance=maintenance,
        )
        uvicorn.run(
            app_,
            host=host,
            port=port,
            http=header_deadline_protocol(body_timeout),
            h11_max_incomplete_event_size=max_header_bytes,
        )


@app.command()
def mcp(
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
) -> None:
    """Serve the MCP tools over stdio for one user (for MCP clients such as Claude Desktop).

    stdout carries the MCP protocol; logs go to stderr.
    """
    try:
        from ucma.mcp import create_mcp_server, fixed_scope
    except ImportError as exc:
        fail(f"MCP needs the mcp extra ({exc.name} is missing): pip install 'ucma[mcp]'")
    import asyncio

    import anyio

    from ucma.embeddings.base import preload
    from ucma.engine import AsyncMemory
    from ucma.validation import check_scope

    with reported_errors():
        check_scope(user, agent)
    path = store_location(home, database)

    async def main() -> None:
        async with AsyncMemory(
            path, user_id=user, agent_id=agent, config=engine_config()
        ) as memory:
            # The model loads while the client connects: the first tool call does not wait.
            loading = asyncio.create_task(preload(memory.embedder))
            try:
                await create_mcp_server(memory, fixed_scope(user, agent)).run_stdio_async()
            finally:
                loading.cancel()
                await asyncio.gather(loading, return_exceptions=True)

    with reported_errors():
        anyio.run(main)


@app.command()
def demo(
    home: Annotated[
        Path | None,
        typer.Option("--home", file_okay=False, help="Write the demo into <home>/ucma.db."),
    ] = None,
    db: Annotated[Path | None, typer.Option("--db", dir_okay=False, help="Database file.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Run a two-session example (a JWT bug, then a question about it) and show what
    session 2 remembers.

    Without --home or --db the demo uses a throwaway database.
    """
    from ucma.demo import DEMO_AGENT, DEMO_QUERY, DEMO_USER, SESSION_1, run_demo

    if home is not None and db is not None:
        raise typer.BadParameter("use either --home or --db, not both", param_hint="--db")
    with tempfile.TemporaryDirectory(prefix="ucma-demo-") as scratch:
        if db is not None:
            target, keep = db.expanduser(), True
            with reported_errors():
                target.parent.mkdir(parents=True, exist_ok=True)
        elif home is not None:
            target, keep = Path(store_location(home, None)), True
        else:
            target, keep = Path(scratch) / DATABASE_NAME, False
        hits = with_memory(target, run_demo)

    if as_json:
        print_json(
            {
                "database": str(target) if keep else None,
                "user_id": DEMO_USER,
                "agent_id": DEMO_AGENT,
                "query": DEMO_QUERY,
                "results": _hits_json(hits),
            }
        )
        return
    out = stdout()
    out.print("[bold]Session 1[/bold]: observed", len(SESSION_1), "inputs and stored a learning")
    for content, source in SESSION_1:
        out.print(Text(f"  {source:>11}  {content}"))
    out.print("  learning: JWT tokens expiring early? check clock skew, add a leeway")
    out.print(f"[bold]Session 2[/bold]: remember({DEMO_QUERY!r})", markup=True)
    out.print(_hits_table(hits, f"What session 2 remembers (user {DEMO_USER})"))
    where = f"database: {target}" if keep else "database: throwaway (use --home or --db to keep)"
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
    content_type: ContentTypeOption = None,
    temporal_level: TemporalLevelOption = None,
    salience: SalienceOption = None,
    bank: BankOption = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Observe one input: it is stored, merged into a near-duplicate memory, or skipped
    as chit-chat (not important enough to keep); the answer says which. The options
    after --session steer the store step where you know better than its heuristics."""
    path = store_location(home, database)
    observation = with_memory(
        path,
        lambda memory: memory.observe(
            text,
            source=source,
            session_id=session,
            **store_step(content_type, temporal_level, salience, bank),
        ),
        user=user,
        agent=agent,
    )
    if as_json:
        print_json(dataclasses.asdict(observation))
        return
    out = stdout()
    if observation.merged_into is not None:
        out.print(
            f"merged into existing memory {observation.merged_into}: a near-duplicate, so "
            "that memory was reinforced instead of storing a second copy",
            markup=False,
            soft_wrap=True,
        )
    elif observation.stored:
        out.print(
            f"stored {observation.id} (importance {observation.importance:.2f}, "
            f"level {observation.temporal_level})",
            markup=False,
            soft_wrap=True,
        )
    else:
        threshold = engine_config().episodic.min_importance_to_store
        out.print(
            f"skipped as chit-chat: importance {observation.importance:.2f} is not above "
            f"the storage threshold {threshold:.2f}, so nothing was written",
            markup=False,
            soft_wrap=True,
        )


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to remember.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    limit: Annotated[int, typer.Option(min=1, help="Most results to return.")] = 10,
    cascade: Annotated[
        bool, typer.Option(help="Search further memory layers when confidence is low.")
    ] = True,
    explain: Annotated[
        bool, typer.Option(help="With --json: add the plan and per-hit channel scores.")
    ] = False,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Retrieve the memories most relevant to QUERY, best first, with their confidence."""
    from ucma.serialization import recall_result_to_dict

    path = store_location(home, database)
    result = with_memory(
        path,
        lambda memory: memory.recall(query, limit=limit, cascade=cascade, explain=explain),
        user=user,
        agent=agent,
    )
    if as_json:
        print_json(recall_result_to_dict(result))
        return
    out = stdout()
    if not result.hits:
        out.print("no memories match", markup=False)
    else:
        out.print(_hits_table(result.hits, f"recall: {query}"))
    layers = " -> ".join([result.cascade_path.primary_layer, *result.cascade_path.cascaded_to])
    summary = f"confidence {result.confidence:.2f} ({result.query_class}; layers {layers})"
    if result.low_confidence:
        out.print(
            Text(f"low confidence: {summary}; these may not answer the query", style="yellow")
        )
    else:
        out.print(summary, markup=False)


@app.command()
def stats(
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Counts and sizes of one user's memory."""
    path = store_location(home, database)
    numbers = with_memory(path, lambda memory: memory.stats(), user=user, agent=agent)
    if as_json:
        print_json(numbers)
        return
    table = Table(title=f"UCMA stats: {user} / {agent}", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in _flatten(numbers):
        table.add_row(Text(key), Text(_shown(value)))
    stdout().print(table)


@app.command()
def facts(
    entity: Annotated[str, typer.Argument(help="A subject or object, e.g. Alice.")],
    user: UserOption,
    agent: AgentOption = "default",
    hops: Annotated[
        int,
        typer.Option(min=0, max=10, help="Also follow subject -> object links this far."),
    ] = 0,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Facts about ENTITY (as subject or object); --hops walks further along the links."""

    async def work(memory: Any) -> list[Fact]:
        if hops:
            return await memory.traverse(entity, max_hops=hops)
        return await memory.facts_about(entity)

    found: list[Fact] = with_memory(store_location(home, database), work, user=user, agent=agent)
    if as_json:
        from ucma.serialization import record_to_api_dict

        print_json({"facts": [record_to_api_dict(f) for f in found]})
        return
    if not found:
        stdout().print(
            f"no facts about {entity!r} yet. Facts come from observed statements that name "
            "it, and more are drawn from the episodes by a sleep cycle, which runs when a new "
            f"session starts or now with: ucma sleep --user {user}",
            markup=False,
            soft_wrap=True,
        )
        return
    table = Table(title=f"facts: {entity}", title_justify="left")
    for column in ("subject", "predicate", "object", "confidence"):
        table.add_column(column)
    for fact in found:
        table.add_row(
            Text(fact.subject), Text(fact.predicate), Text(fact.object), f"{fact.confidence:.2f}"
        )
    stdout().print(table)


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def bench(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(help=f"Which benchmark: {', '.join(BENCHMARKS)}.")
    ] = "core",
) -> None:
    """Run a benchmark from the source checkout's bench/ folder; extra options are passed
    on (e.g. ucma bench core --sizes 1000, ucma bench import --records 100000)."""
    if name not in BENCHMARKS:
        fail(f"unknown benchmark {name!r}; choose one of: {', '.join(BENCHMARKS)}")
    script = Path(__file__).resolve().parents[3] / "bench" / BENCHMARKS[name]
    if not script.is_file():
        fail(f"{script} not found: benchmarks run from a source checkout of ucma")
    result = subprocess.run([sys.executable, str(script), *ctx.args], check=False)
    if result.returncode:
        raise typer.Exit(result.returncode)


events_app = typer.Typer(help="The event log (event sourcing).", no_args_is_help=True)
app.add_typer(events_app, name="events")
events_app.command("list")(events_list)


@events_app.command("publish")
def events_publish(
    nats_url: Annotated[
        str, typer.Option("--nats", help="NATS server, e.g. nats://127.0.0.1:4222.")
    ],
    once: Annotated[bool, typer.Option("--once", help="Publish the backlog, then exit.")] = False,
    poll: Annotated[float, typer.Option(min=0.05, help="Seconds between polls.")] = 1.0,
    stream: Annotated[str, typer.Option(help="JetStream stream name.")] = "UCMA_EVENTS",
    home: HomeOption = None,
    database: DatabaseOption = None,
) -> None:
    """Forward every scope's events to NATS JetStream, at least once; a durable
    cursor in the database makes a restart resume where it stopped. One process of the
    database forwards at a time (a lease): another one waits and takes over when it
    stops (with --once it returns at once)."""

    async def work(memory: AsyncMemory) -> int:
        return await memory.publish_events(nats_url, stream=stream, once=once, poll_seconds=poll)

    count = with_memory(store_location(home, database), work)
    stdout().print(f"published {plural(count, 'event')} to {nats_url}", markup=False)


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
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run a sleep cycle: compress, abstract facts, reinforce, forget, clean up."""
    from rich.progress import BarColumn, Progress, TextColumn

    db_path = store_location(home, database)
    quiet = as_json
    with Progress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[phase]}"),
        console=stderr(), disable=quiet, transient=True,
    ) as bar:  # fmt: skip
        task = bar.add_task("sleep", total=5, phase="")

        def progress(phase: str, number: int, total: int) -> None:
            bar.update(task, completed=number - 1, total=total, phase=phase)

        async def work(memory: AsyncMemory) -> list[Any]:
            if user is None:
                return await memory.sleep_all(progress=progress)
            return [await memory.sleep(progress=progress)]

        reports = with_memory(db_path, work, user=user, agent=agent)
        bar.update(task, completed=5, phase="done")
    failed = "; ".join(f"{r.user_id}/{r.agent_id}: {r.error}" for r in reports if r.error)
    if as_json:
        print_json([r.to_dict() for r in reports])
        if failed:
            fail(f"sleep failed for {failed}")
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
    out = stdout()
    out.print(table)
    if not reports:
        out.print("nothing to consolidate: the database holds no memories", markup=False)
    elif any(r.interrupted for r in reports):
        out.print("interrupted: the next sleep resumes where this one stopped", markup=False)
    if failed:
        fail(f"sleep failed for {failed} (the other scopes were consolidated)")


@gardener_app.command("run")
def gardener_run(
    job: Annotated[
        str | None,
        typer.Option(help="Run only this job now: decay, consolidate, prune or identity."),
    ] = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run the gardener's due jobs (or one job) over every scope."""
    db_path = store_location(home, database)
    report = with_memory(db_path, lambda memory: memory.run_gardener(job))
    if as_json:
        print_json(report.to_dict())
    else:
        out = stdout()
        for name, summary in report.ran.items():
            details = ", ".join(f"{k} {_shown(v)}" for k, v in summary.items())
            out.print(f"ran {name}: {details}", markup=False)
        for name, why in report.skipped.items():
            out.print(f"skipped {name}: {why}", markup=False)
    if report.failed:
        fail("; ".join(f"{name}: {error}" for name, error in report.failed.items()))


@gardener_app.command("schedule")
def gardener_schedule(
    home: HomeOption = None, database: DatabaseOption = None, as_json: JsonOption = False
) -> None:
    """The gardener's jobs: period, last run, next due, and what the last run did."""
    from ucma.serialization import iso_time

    jobs = with_memory(store_location(home, database), lambda memory: memory.gardener_schedule())
    if as_json:
        print_json({"jobs": jobs})
        return
    table = Table(title="gardener", title_justify="left")
    for column in ("job", "every", "last run", "next due", "last run did"):
        table.add_column(column, overflow="fold")
    for job in jobs:
        table.add_row(
            job["job"],
            f"{job['period_days']:g} d",
            iso_time(job["last_run_at"]) or "never",
            "running now" if job["running"] else iso_time(job["next_due_at"]) or "next tick",
            ", ".join(f"{k} {_shown(v)}" for k, v in job["last_summary"].items()),
        )
    stdout().print(table)


@app.command()
def forget(
    user: UserOption,
    agent: AgentOption = "default",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List, change nothing.")] = False,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Archive what the forgetting engine forgets; purge old archives."""
    db_path = store_location(home, database)
    report = with_memory(
        db_path, lambda memory: memory.forget(dry_run=dry_run), user=user, agent=agent
    )
    if as_json:
        print_json(report.to_dict())
        return
    out = stdout()
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
