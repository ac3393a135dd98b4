"""Answers written by a language model from memory's own material, with citations.

Without a model, ``ucma.conflicts.answer`` builds the response from whole
memories and clean facts. With one, the same material is handed to the model:
the statements the offline answer stands on, numbered, and the notes that must
reach the user (questions about conflicting values). The model answers from
that material alone and cites what it uses as [1], [2] ...; it never sees the
rest of the store, so it cannot bring back a superseded value or an unrelated
conflict the offline answer left out.

``AnswerWriter`` is the protocol (structural: any object with the method
plugs in). ``ChatAnswerWriter`` implements it over an OpenAI-compatible chat
endpoint; being an ``OpenAIChatProvider`` it also serves summaries, fact
extraction and importance, so ``Providers(writer, writer)`` configures one
model for all of them. Pass it to ``AsyncMemory(providers=...)``: ``answer``
and ``POST /v1/chat`` then use it.

Contract: ``write_answer`` returns a non-empty text that cites only numbers
of the given statements, or raises ``ProviderError`` (the engine then keeps
the offline answer and says so in a caveat).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ucma.errors import ProviderError
from ucma.providers.openai import OpenAIChatProvider

__all__ = ["AnswerWriter", "ChatAnswerWriter", "answer_prompt", "check_citations"]

_SYSTEM = (
    "You answer a user's question for an assistant, using only the numbered memories "
    "given. Cite every memory you use by its number in square brackets, like [1] or "
    "[1][2]. Do not add facts that are not in the memories. Where a memory notes an "
    "earlier value, give the current one. Include every note verbatim or in close "
    "paraphrase: notes are questions the user must answer. If the memories do not "
    "answer the question, say that you don't know. Reply with the answer only, in at "
    "most three sentences."
)
_CITATION = re.compile(r"\[(\d+)\]")


@runtime_checkable
class AnswerWriter(Protocol):
    """Writes the response to ``question`` from ``sources`` (cited as [1], [2] ...)
    and ``notes`` (to pass on to the user)."""

    async def write_answer(
        self, question: str, sources: Sequence[str], notes: Sequence[str]
    ) -> str: ...


def answer_prompt(question: str, sources: Sequence[str], notes: Sequence[str]) -> str:
    """The user message the model receives: question, numbered memories, notes."""
    lines = [f"Question: {question.strip()}", "", "Memories:"]
    lines += [f"[{n}] {text}" for n, text in enumerate(sources, start=1)] or ["(none)"]
    if notes:
        lines += ["", "Notes:"] + [f"- {note}" for note in notes]
    return "\n".join(lines)


def check_citations(text: str, count: int) -> str:
    """``text`` stripped, if non-empty and every [n] it cites is in 1..``count``;
    ``ProviderError`` otherwise."""
    reply = text.strip()
    if not reply:
        raise ProviderError("the answer is empty")
    unknown = sorted({int(n) for n in _CITATION.findall(reply) if not 1 <= int(n) <= count})
    if unknown:
        raise ProviderError(f"the answer cites memories that were not given: {unknown}")
    return reply


class ChatAnswerWriter(OpenAIChatProvider):
    """An ``OpenAIChatProvider`` that also writes answers (see the module docstring).
    Constructed exactly like ``OpenAIChatProvider``; a reply that fails
    ``check_citations`` is retried like any malformed reply."""

    async def write_answer(
        self, question: str, sources: Sequence[str], notes: Sequence[str]
    ) -> str:
        count = len(sources)
        reply: str = await self._ask(
            _SYSTEM,
            answer_prompt(question, sources, notes),
            lambda text: check_citations(text, count),
            json_mode=False,
        )
        return reply
