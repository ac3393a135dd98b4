"""``ucma export`` and ``ucma import``: JSON Lines with progress bars on stderr.

Both stream: export writes a page of records at a time to ``<file>.partial`` and renames
it when complete; import reads and writes a chunk at a time, so a 100,000-record file
never sits in memory whole. An interrupted import (Ctrl-C, a crash) keeps every chunk it
wrote; running the same command again skips those records and carries on.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ucma.cli.context import (
    AgentOption,
    DatabaseOption,
    HomeOption,
    JsonOption,
    UserOption,
    fail,
    plural,
    print_json,
    stderr,
    stdout,
    store_location,
    with_memory,
)

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory
    from ucma.types import ImportReport

__all__ = ["export_command", "import_command"]


def _progress(*columns: object, quiet: bool) -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        *columns,  # type: ignore[arg-type]
        TimeElapsedColumn(),
        console=stderr(),
        disable=quiet,
        transient=False,
    )


TransferKeyOption = Annotated[
    Path | None,
    typer.Option(
        "--transfer-key",
        dir_okay=False,
        help="A file holding a Fernet key: the vault's originals travel sealed with it "
        "(export creates the file, mode 0600, when it does not exist; import needs it).",
    ),
]


def export_command(
    path: Annotated[Path, typer.Argument(dir_okay=False, help="JSONL file to write.")],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    transfer_key: TransferKeyOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Write one scope's memories (with vectors, retention and edges) to a JSONL file.

    The originals behind the content guard's tokens are left out unless --transfer-key
    names a key file: then they go too, each encrypted with that key. Hand the key over
    apart from the export; ``ucma import --transfer-key`` needs it.
    """
    partial = path.with_name(path.name + ".partial")
    key = _transfer_key(transfer_key, create=True)

    async def work(memory: AsyncMemory) -> int:
        stats = await memory.stats()
        total = sum(stats["memories"].values())
        records = 0
        try:
            handle = partial.open("w", encoding="utf-8")
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        with (
            handle as out,
            _progress(BarColumn(), MofNCompleteColumn(), quiet=quiet or as_json) as progress,
        ):
            task = progress.add_task("export", total=total)
            async for line in memory.export_lines(transfer_key=key):
                out.write(line)
                if line.startswith('{"type": "memory"'):
                    records += 1
                    progress.advance(task)
        partial.replace(path)
        return records

    count = with_memory(store_location(home, database), work, user=user, agent=agent)
    if as_json:
        print_json({"path": str(path), "records": count})
    else:
        stdout().print(f"exported {plural(count, 'record')} to {path}", markup=False)
        if transfer_key is not None:
            stdout().print(
                f"the vault's originals are sealed with the key in {transfer_key}: "
                "hand it over apart from the export",
                markup=False,
            )


def _transfer_key(path: Path | None, *, create: bool) -> str | None:
    """The transfer key in ``path`` (a new one written there on export)."""
    if path is None:
        return None
    from ucma.privacy.vault import load_or_create_key

    if not create and not path.is_file():
        fail(f"no transfer key file at {path}")
    try:
        return load_or_create_key(path).decode("ascii", "replace")
    except OSError as exc:
        fail(f"cannot use the transfer key file {path}: {exc.strerror}")


def _read(path: Path, progress: Progress, task: int) -> Iterator[bytes]:
    with path.open("rb") as handle:
        for line in handle:
            progress.advance(task, len(line))  # type: ignore[arg-type]
            yield line


def import_command(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSONL file to read.")],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    transfer_key: TransferKeyOption = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Load a JSONL export into one scope, keeping ids; re-run it to resume.

    Records already present are skipped, so an interrupted import is finished by running
    the same command again. Vectors from another embedding model are recomputed. An
    export made with --transfer-key needs the same key file here; its originals are
    re-encrypted with this store's vault key.
    """
    size = os.path.getsize(path)
    key = _transfer_key(transfer_key, create=False)

    async def work(memory: AsyncMemory) -> ImportReport:
        columns = (BarColumn(), TaskProgressColumn(), DownloadColumn(), TimeRemainingColumn())
        with _progress(*columns, TextColumn("{task.fields[note]}"), quiet=quiet or as_json) as bar:
            task = bar.add_task("import", total=size, note="")

            def show(report: ImportReport) -> None:
                bar.update(task, note=f"{report.imported} new, {report.skipped} already present")

            return await memory.import_lines(
                _read(path, bar, task), source=str(path), progress=show, transfer_key=key
            )

    try:
        report = with_memory(store_location(home, database), work, user=user, agent=agent)
    except KeyboardInterrupt:
        fail("import interrupted; the chunks written are kept: run the same command to resume")
    if as_json:
        print_json(dataclasses.asdict(report))
    else:
        stdout().print(
            f"imported {plural(report.imported, 'record')} from {path} "
            f"({report.skipped} already present, {plural(report.edges, 'edge')}, "
            f"vault entries: {report.vault_entries})",
            markup=False,
        )
