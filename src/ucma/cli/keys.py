"""``ucma keys``: create, list and revoke the service's API keys (administration).

Keys live in the database (only a sha256 of each token). The token is printed once, at
creation. ``ucma serve`` requires keys as soon as one exists.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ucma.cli.context import (
    DatabaseOption,
    HomeOption,
    JsonOption,
    print_json,
    stderr,
    stdout,
    store_location,
    with_memory,
)
from ucma.serialization import iso_time
from ucma.types import ApiKey

__all__ = ["keys_app"]

keys_app = typer.Typer(
    name="keys",
    help="Create, list and revoke API keys of the service (stored hashed in ucma.db).",
    no_args_is_help=True,
)


def _key_json(key: ApiKey) -> dict[str, object]:
    """A key for --json: its fields, with ISO 8601 times beside the epoch seconds."""
    from ucma.serialization import with_iso_times

    return with_iso_times(dataclasses.asdict(key))


@keys_app.command("create")
def create(
    user: Annotated[
        str, typer.Option("--user", "-u", help="The user the key acts for.", show_default=False)
    ],
    agent: Annotated[
        str | None,
        typer.Option("--agent", "-a", help="Bind the key to one agent [default: any agent]."),
    ] = None,
    label: Annotated[str | None, typer.Option(help="A note: who or what uses the key.")] = None,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Create a key and print its token (shown this once, never stored)."""
    key, token = with_memory(
        store_location(home, database),
        lambda memory: memory.create_key(user, agent_id=agent, label=label),
    )
    if as_json:
        print_json({**_key_json(key), "token": token})
        return
    out = stdout()
    scope = f"user {key.user_id}" + (f", agent {key.agent_id}" if key.agent_id else ", any agent")
    out.print(f"created key {key.id} for {scope}", markup=False)
    out.print(token, markup=False, soft_wrap=True)
    stderr().print(
        "Copy the token now: it is not stored and cannot be shown again. Send it as "
        "'Authorization: Bearer <token>'.",
        markup=False,
    )


@keys_app.command("list")
def list_keys(
    all_keys: Annotated[bool, typer.Option("--all", help="Include revoked keys.")] = False,
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """List keys (never their tokens)."""
    keys: list[ApiKey] = with_memory(
        store_location(home, database), lambda memory: memory.list_keys(include_revoked=all_keys)
    )
    if as_json:
        print_json([_key_json(k) for k in keys])
        return
    if not keys:
        stdout().print("no API keys: the service runs in local mode (127.0.0.1 only)")
        return
    table = Table(title="API keys", title_justify="left")
    for column in ("id", "user", "agent", "label", "created", "revoked"):
        table.add_column(column)
    for k in keys:
        table.add_row(
            k.id,
            Text(k.user_id),
            Text(k.agent_id or "(any)"),
            Text(k.label or ""),
            iso_time(k.created_at) or "",
            iso_time(k.revoked_at) or "",
        )
    stdout().print(table)


@keys_app.command("revoke")
def revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from keys list).")],
    home: HomeOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Revoke a key for good: requests with it get 401 from then on."""
    key = with_memory(store_location(home, database), lambda memory: memory.revoke_key(key_id))
    if as_json:
        print_json(_key_json(key))
    else:
        stdout().print(f"revoked key {key.id} (user {key.user_id})", markup=False)


def count_keys(database: str) -> int:
    """Live keys in the store ``database`` names (used by serve to choose its mode)."""
    return with_memory(database, lambda memory: memory.count_keys())
