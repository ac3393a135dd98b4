"""``ucma migrate SOURCE TARGET``: copy a whole store into another database, with a
progress bar on stderr (``ucma.storage.migrate``). Run it again after an interruption:
it carries on from the last batch written."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ucma.cli.context import (
    JsonOption,
    fail,
    plural,
    print_json,
    reported_errors,
    stderr,
    stdout,
)

__all__ = ["migrate_command"]


def migrate_command(
    source: Annotated[
        str, typer.Argument(help="The store to copy: a file path, sqlite:///<path> or a URL.")
    ],
    target: Annotated[
        str,
        typer.Argument(
            help="An empty store to copy into (or the target of an interrupted run of the "
            "same migration): a file path, sqlite:///<path> or postgresql://..."
        ),
    ],
    dimension: Annotated[
        int | None,
        typer.Option(help="Width of the stores' vectors [default: the packaged model's]", min=1),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Copy every scope, the event log, API keys and cursors of SOURCE into TARGET.

    Ids, facts, the graph, salience, vectors and events arrive unchanged. Stop the
    processes writing to SOURCE first. An interrupted migration (Ctrl-C, a crash) keeps
    every batch it wrote: run the same command again to finish it. The vault's originals
    travel sealed: open TARGET with SOURCE's vault key (its key file, or $UCMA_VAULT_KEY).
    """
    from ucma.embeddings.local import DIMENSION
    from ucma.storage.migrate import migrate

    columns = (BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    with (
        Progress(
            TextColumn("[progress.description]{task.description}"),
            *columns,
            console=stderr(),
            disable=quiet or as_json,
        ) as bar,
        reported_errors(),
    ):
        task = bar.add_task("migrate", total=None)

        def show(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        try:
            report = migrate(source, target, dimension=dimension or DIMENSION, progress=show)
        except KeyboardInterrupt:
            fail("migration interrupted; the batches written are kept: run it again to resume")
    if as_json:
        print_json(dataclasses.asdict(report))
        return
    stdout().print(
        f"migrated {plural(report.scopes, 'scope')}, {report.memories} "
        f"{'memory' if report.memories == 1 else 'memories'} "
        f"and {plural(report.events, 'event')} from {report.source} to {report.target}"
        + (" (resumed)" if report.resumed else ""),
        markup=False,
        soft_wrap=True,
    )
    if report.vault_key_file is not None:
        stdout().print(
            f"the vault is sealed with the key in {report.vault_key_file}: start the "
            "target's processes with that key in $UCMA_VAULT_KEY",
            markup=False,
            soft_wrap=True,
        )
