"""``ucma reveal | detokenise``: the originals of the content guard's tokens
(``[email_3f2a9c1b]``) for their owner, on the machine that holds the database and its
vault key. Agents never get these (docs/privacy.md); a local operator may, as the REST
routes of the same names allow the key's owner. A token of another user is answered like
one that never existed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ucma.cli.context import AgentOption, HomeOption, JsonOption, UserOption, show_work

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory

__all__ = ["register"]


def reveal(
    token: Annotated[
        str, typer.Argument(help="A token, e.g. [email_3f2a9c1b].", show_default=False)
    ],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """The original value of one token of this user's memory."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return {"token": token, "value": await memory.reveal(token)}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def detokenise(
    text: Annotated[
        str,
        typer.Argument(help="Text holding tokens, e.g. a memory's content.", show_default=False),
    ],
    user: UserOption,
    agent: AgentOption = "default",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """TEXT with every token of this user's memory replaced by its original (other
    tokens stay as they are)."""

    async def work(memory: AsyncMemory) -> dict[str, Any]:
        return {"text": await memory.detokenise(text)}

    show_work(work, user=user, agent=agent, home=home, as_json=as_json)


def register(app: typer.Typer) -> None:
    """Add the commands to ``app``."""
    app.command("reveal")(reveal)
    app.command("detokenise")(detokenise)
