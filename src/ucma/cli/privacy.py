"""``ucma reveal | detokenise``: the originals of the content guard's tokens
(``[email_3f2a9c1b]``) for their owner, on the machine that holds the database and its
vault key. Agents never get these (docs/privacy.md); a local operator may, as the REST
routes of the same names allow the key's owner. A token of another user is answered like
one that never existed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import scoped_command

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]


async def reveal(
    memory: AsyncMemory,
    token: Annotated[
        str, typer.Argument(help="A token, e.g. [email_3f2a9c1b].", show_default=False)
    ],
) -> dict[str, Any]:
    """The original value of one token of this user's memory."""
    return {"token": token, "value": await memory.reveal(token)}


async def detokenise(
    memory: AsyncMemory,
    text: Annotated[
        str,
        typer.Argument(help="Text holding tokens, e.g. a memory's content.", show_default=False),
    ],
) -> dict[str, Any]:
    """TEXT with every token of this user's memory replaced by its original (other
    tokens stay as they are)."""
    return {"text": await memory.detokenise(text)}


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    for work in (reveal, detokenise):
        app.command(work.__name__)(scoped_command(work))
