"""``ucma add | search | get | get-all | update | delete | delete-all | archive | unarchive |
history``: the
calls users know from other memory libraries, one command each, named like the Python
methods (``AsyncMemory.add`` ...) they call."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ucma.cli.context import (
    AgentOption,
    BankOption,
    ContentTypeOption,
    DatabaseOption,
    HomeOption,
    JsonOption,
    SalienceOption,
    TemporalLevelOption,
    UserOption,
    fail,
    print_json,
    stdout,
    store_location,
    store_step,
    with_memory,
)

if TYPE_CHECKING:
    from ucma.types import MemoryRecord

__all__ = ["register"]

RunOption = Annotated[
    str | None, typer.Option("--run", help="run_id: tags what is added, narrows what is read.")
]
FilterOption = Annotated[
    list[str] | None,
    typer.Option(
        "--filter",
        help="KEY=VALUE on metadata (repeatable); VALUE is read as JSON when it parses "
        "(2, true), else as text.",
    ),
]


def _filters(pairs: list[str] | None) -> dict[str, Any] | None:
    if not pairs:
        return None
    found: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            fail(f"--filter takes KEY=VALUE, got {pair!r}")
        try:
            found[key] = json.loads(raw)
        except json.JSONDecodeError:
            found[key] = raw
    return found


def _memories(count: int) -> str:
    return "1 memory" if count == 1 else f"{count} memories"


def _record_row(table: Table, record: MemoryRecord) -> None:
    from ucma.serialization import iso_time

    table.add_row(
        Text(record.id), str(record.kind), iso_time(record.created_at) or "", Text(record.content)
    )


def _records_table(title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column in ("id", "kind", "created", "content"):
        table.add_column(column, overflow="fold")
    return table


def add(
    text: Annotated[
        list[str],
        typer.Argument(
            help="What to remember; several texts are messages of one conversation.",
            show_default=False,
        ),
    ],
    user: UserOption,
    agent: AgentOption = "default",
    role: Annotated[str, typer.Option(help="Role of every message: user, assistant ...")] = "user",
    run: RunOption = None,
    metadata: Annotated[
        str | None, typer.Option(help="A JSON object stored with each memory, e.g. '{\"a\": 1}'.")
    ] = None,
    content_type: ContentTypeOption = None,
    temporal_level: TemporalLevelOption = None,
    salience: SalienceOption = None,
    bank: BankOption = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Add one text, or several as the messages of one conversation, in order; the
    options after --metadata steer the store step of each."""
    extra = None
    if metadata is not None:
        try:
            extra = json.loads(metadata)
        except json.JSONDecodeError as exc:
            fail(f"--metadata is not JSON: {exc}")
    messages = [{"role": role, "content": t} for t in text]
    found = with_memory(
        store_location(home, database),
        lambda memory: memory.add(
            messages,
            run_id=run,
            metadata=extra,
            **store_step(content_type, temporal_level, salience, bank),
        ),
        user=user,
        agent=agent,
    )
    if as_json:
        print_json({"results": [dataclasses.asdict(o) for o in found]})
        return
    out = stdout()
    for o in found:
        if o.merged_into is not None:
            line = f"merged into existing memory {o.merged_into} (a near-duplicate)"
        elif o.stored:
            line = f"stored {o.id}"
        else:
            line = "skipped as chit-chat: not important enough to keep"
        out.print(line, markup=False, soft_wrap=True)


def search(
    query: Annotated[str, typer.Argument(help="What to look for.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    filters: FilterOption = None,
    run: RunOption = None,
    limit: Annotated[int, typer.Option(min=1, max=100, help="Most results.")] = 10,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Memories relevant to QUERY, best first; --filter narrows by metadata."""
    from ucma.serialization import hit_to_dict

    hits = with_memory(
        store_location(home, database),
        lambda memory: memory.search(query, filters=_filters(filters), run_id=run, limit=limit),
        user=user,
        agent=agent,
    )
    if as_json:
        print_json({"results": [hit_to_dict(h) for h in hits]})
        return
    if not hits:
        stdout().print("no memories match", markup=False)
        return
    table = Table(title=f"search: {query}", title_justify="left")
    for column in ("#", "id", "score", "content"):
        table.add_column(column, overflow="fold")
    for rank, hit in enumerate(hits, 1):
        table.add_row(str(rank), Text(hit.id), f"{hit.score:.3f}", Text(hit.content))
    stdout().print(table)


def get(
    memory_id: Annotated[str, typer.Argument(help="A memory id.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """One memory, every field."""
    from ucma.serialization import record_to_api_dict

    record = with_memory(
        store_location(home, database), lambda memory: memory.get(memory_id), user=user, agent=agent
    )
    data = record_to_api_dict(record)
    if as_json:
        print_json(data)
        return
    table = Table(title=f"memory {memory_id}", title_justify="left", show_header=False)
    table.add_column("field")
    table.add_column("value", overflow="fold")
    for key, value in data.items():
        table.add_row(key, Text(json.dumps(value, ensure_ascii=False)))
    stdout().print(table)


def get_all(
    user: UserOption,
    agent: AgentOption = "default",
    filters: FilterOption = None,
    run: RunOption = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Page size.")] = 100,
    offset: Annotated[int, typer.Option(min=0, help="First record to show.")] = 0,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """The user's memories, oldest first, a page at a time, with the total."""
    from ucma.serialization import record_to_api_dict

    page = with_memory(
        store_location(home, database),
        lambda memory: memory.get_all(
            filters=_filters(filters), run_id=run, limit=limit, offset=offset
        ),
        user=user,
        agent=agent,
    )
    if as_json:
        print_json(
            {
                "items": [record_to_api_dict(r) for r in page.items],
                "total": page.total,
                "offset": page.offset,
                "next_offset": page.next_offset,
            }
        )
        return
    table = _records_table(f"memories of {user} / {agent}")
    for record in page.items:
        _record_row(table, record)
    out = stdout()
    out.print(table)
    shown = f"{offset + 1}-{offset + len(page)}" if len(page) else "none"
    line = f"{shown} of {_memories(page.total)}"
    if page.next_offset is not None:
        line += f"; next page: --offset {page.next_offset}"
    out.print(line, markup=False)


def update(
    memory_id: Annotated[str, typer.Argument(help="A memory id.", show_default=False)],
    text: Annotated[str, typer.Argument(help="The new text.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Replace a memory's text; the old text stays in its history."""
    from ucma.serialization import record_to_api_dict

    record = with_memory(
        store_location(home, database),
        lambda memory: memory.update(memory_id, text),
        user=user,
        agent=agent,
    )
    if as_json:
        print_json(record_to_api_dict(record))
        return
    stdout().print(
        f"updated {memory_id}; see the previous text with: ucma history {memory_id} --user {user}",
        markup=False,
        soft_wrap=True,
    )


def delete(
    memory_id: Annotated[str, typer.Argument(help="A memory id.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete one memory and what hangs off it (its history stays)."""
    with_memory(
        store_location(home, database),
        lambda memory: memory.delete(memory_id),
        user=user,
        agent=agent,
    )
    if as_json:
        print_json({"deleted": memory_id})
        return
    stdout().print(f"deleted {memory_id}", markup=False)


def delete_all(
    user: UserOption,
    agent: AgentOption = "default",
    run: RunOption = None,
    yes: Annotated[bool, typer.Option("--yes", help="Confirm: delete them.")] = False,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Delete every memory of the user (or of one --run) in one transaction; needs --yes.
    History and events stay: to erase for good, use ucma forget-scope."""
    if not yes:
        what = f"every memory of run {run!r}" if run else f"every memory of {user} / {agent}"
        fail(f"delete-all deletes {what}; add --yes to confirm")
    count = with_memory(
        store_location(home, database),
        lambda memory: memory.delete_all(confirm=yes, run_id=run),
        user=user,
        agent=agent,
    )
    if as_json:
        print_json({"deleted": count})
        return
    stdout().print(f"deleted {_memories(count)}", markup=False)


def _archive_command(archived: bool, name: str, summary: str) -> Callable[..., None]:
    """``ucma archive`` or ``ucma unarchive``: one body, the state it sets."""

    def command(
        memory_id: Annotated[str, typer.Argument(help="A memory id.", show_default=False)],
        user: UserOption,
        agent: AgentOption = "default",
        home: HomeOption = None,
        database: DatabaseOption = None,
        as_json: JsonOption = False,
    ) -> None:
        record = with_memory(
            store_location(home, database),
            lambda memory: memory.archive(memory_id) if archived else memory.unarchive(memory_id),
            user=user,
            agent=agent,
        )
        if as_json:
            print_json({"id": record.id, "archived_at": record.archived_at})
            return
        stdout().print(f"{name}d {record.id}", markup=False)

    command.__name__ = name
    command.__doc__ = summary
    return command


archive = _archive_command(
    True,
    "archive",
    "Archive one memory: it leaves search and recall, is kept, and unarchive brings it back.",
)
unarchive = _archive_command(
    False, "unarchive", "Bring an archived memory back into search and recall."
)


def history(
    memory_id: Annotated[str, typer.Argument(help="A memory id.", show_default=False)],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """What happened to a memory, oldest first: updates with previous and new text,
    merges, archiving."""
    from ucma.serialization import iso_time

    entries = with_memory(
        store_location(home, database),
        lambda memory: memory.history(memory_id),
        user=user,
        agent=agent,
    )
    if as_json:
        print_json(
            {"history": [{**dataclasses.asdict(e), "at_iso": iso_time(e.at)} for e in entries]}
        )
        return
    if not entries:
        stdout().print(f"no history for {memory_id}", markup=False)
        return
    table = Table(title=f"history: {memory_id}", title_justify="left")
    for column in ("when", "event", "details"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        details = entry.details
        shown = (
            f"{details['previous']!r} -> {details['new']!r}"
            if entry.event == "updated"
            else json.dumps(details, ensure_ascii=False)
        )
        table.add_row(iso_time(entry.at) or "", entry.event, Text(shown))
    stdout().print(table)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for function in (
        add,
        search,
        get,
        get_all,
        update,
        delete,
        delete_all,
        archive,
        unarchive,
        history,
    ):
        app.command(function.__name__.replace("_", "-"))(function)
