"""``ucma forget-person``, ``ucma forget-scope``, ``ucma backup`` and ``ucma restore``.

Erasure is for good: the records go and the database's files are scrubbed; the command
prints what was erased per kind. ``backup`` copies the whole store while the service
may be writing to it; ``restore`` writes a backup into a new database file. Neither
overwrites a file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ucma.cli.context import (
    AgentOption,
    DatabaseOption,
    HomeOption,
    JsonOption,
    UserOption,
    fail,
    plural,
    print_json,
    reported_errors,
    stdout,
    store_location,
    with_memory,
)

if TYPE_CHECKING:
    from ucma.privacy.erasure import ErasureReport

__all__ = ["backup_command", "forget_person_command", "forget_scope_command", "restore_command"]


def _print_erasure(report: ErasureReport, as_json: bool) -> None:
    if as_json:
        print_json(report.to_dict())
        return
    out = stdout()
    for kind, count in sorted(report.counts.items()):
        out.print(f"  {kind}: {count}", markup=False)
    out.print(f"erased {plural(report.total, 'record')}", markup=False)
    if not (report.checkpointed and report.vacuumed):
        fail(
            "another process kept the database busy, so its files were not fully scrubbed; "
            "run the command again when it is idle"
        )


def forget_person_command(
    identifiers: Annotated[
        list[str],
        typer.Argument(
            help="Every identifier of the person: name, emails, phone numbers ...",
            show_default=False,
        ),
    ],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Erase for good everything one user's memory holds about a person."""
    report = with_memory(
        store_location(home, database),
        lambda memory: memory.forget_person(identifiers),
        user=user,
        agent=agent,
    )
    _print_erasure(report, as_json)


def forget_scope_command(
    user: UserOption,
    agent: AgentOption = "default",
    yes: Annotated[
        bool, typer.Option("--yes", help="Confirm: erase every record of the scope.")
    ] = False,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Erase for good every memory, fact, decision and event of one user (and agent)."""
    if not yes:
        fail(f"this erases everything of user {user!r}, agent {agent!r} for good; add --yes")
    report = with_memory(
        store_location(home, database), lambda memory: memory.forget_scope(), user=user, agent=agent
    )
    _print_erasure(report, as_json)


def backup_command(
    path: Annotated[Path, typer.Argument(dir_okay=False, help="New file to write the backup to.")],
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Back up the whole store (every user) online, while the service may be writing."""
    store = store_location(home, database)
    report = with_memory(store, lambda memory: memory.backup(path))
    from ucma.privacy.vault import default_key_path
    from ucma.storage import parse_location

    local = parse_location(store).path
    key = None if local is None else default_key_path(local)
    if as_json:
        print_json({"path": report.path, "bytes": report.bytes})
        return
    out = stdout()
    out.print(f"backed up {report.bytes} bytes to {report.path}", markup=False)
    if key is not None and key.exists():
        out.print(f"keep the vault key with it: {key} (or $UCMA_VAULT_KEY)", markup=False)


def restore_command(
    backup: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="A backup file (ucma backup).")
    ],
    target: Annotated[Path, typer.Argument(dir_okay=False, help="New database file to write.")],
    as_json: JsonOption = False,
) -> None:
    """Restore a backup into a new database file (checked before and after).

    Point the service at it with --database <file> (or --home, the file named ucma.db
    there).
    """
    from ucma.backup import restore_backup

    with reported_errors():
        report = restore_backup(backup, target)
    if as_json:
        print_json({"path": report.path, "bytes": report.bytes})
    else:
        stdout().print(f"restored {report.bytes} bytes into {os.fspath(report.path)}", markup=False)
