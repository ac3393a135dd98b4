"""Standing instructions and the requests they apply to.

People tell an assistant how to answer a kind of request once and expect it to
hold from then on: "Always include error status codes when I ask about API error
handling.", "Whenever we talk about travel, give prices in euros.", "If I ask for
a recipe, keep it vegetarian." The request that should bring such an instruction
back rarely repeats its words ("What typical errors should I handle when my app
calls a REST API?"), and the instruction's own text is mostly about what to do
(status codes), not when (API error handling), so it matches the request worse
than the long answers that discussed the topic.

``condition`` reads the "when" part of an instruction: the kind of request it
applies to. Retrieval compares a query with it as well as with the whole text
(``ucma.engine.retrieval``), so an instruction comes back for the requests it
governs. Pure and rule-based: a sentence counts when it tells the assistant to do
or avoid something (the rest of it is an instruction: "Always include ...",
"please keep ...") and names the requests it applies to, said by the one who asks
("I", "we"); "I'll use these when I talk to the filmmakers" is a plan, "When we
discuss money my sister always gets nervous" a story.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ucma.storage.base import Storage
from ucma.types import MemoryKind, Scope

__all__ = ["MAX_CONDITION_CHARS", "Instructions", "condition", "conditions_in", "conditions_of"]

_PAGE = 2_000

MAX_CONDITION_CHARS = 200
"""A longer "when" part is a story, not a kind of request."""

_ASKING = (
    r"(?:ask|asking|inquire|inquiring|talk|talking|discuss|discussing|request|requesting|"
    r"bring\s+up|bringing\s+up|mention|mentioning|need\s+help|want\s+help|chat|chatting)"
)
# "when I ask about X", "whenever we discuss X", "if I ask you for X", "any time I mention X".
_WHEN = re.compile(
    rf"\b(?:when(?:ever)?|if|any\s*time|each\s+time|every\s+time)\s+(?:I|we)\s+"
    rf"(?:am\s+|are\s+)?{_ASKING}\s+(?:you\s+)?(?:about|for|regarding|on|with|over)?\s*"
    r"(?P<condition>[^.?!;:,\n]+)",
    re.IGNORECASE,
)
# The rest of the sentence tells the assistant what to do or avoid: it starts with
# an instruction ("Always include ...", "please keep ...", "list every price ...").
_IMPERATIVE = re.compile(
    r"^(?:(?:and|so|also|then|thanks|ok|okay)\W+)*(?:please\s+)?(?:always|never|make\s+sure|"
    r"be\s+sure|remember\s+to|don['’]?t|do\s+not|avoid|use|include|keep|give|format|provide|"
    r"stick\s+to|only|list|show|add|mention|answer|reply|respond|explain|suggest|recommend|"
    r"remind|tell|check|confirm|verify|highlight|quote|cite|convert|round|focus|"
    r"prioriti[sz]e|skip|omit|leave\s+out|summari[sz]e|write|put|mark|start|end)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_TRAILING = re.compile(r"[\s\-–—>]+$")


def condition(text: str) -> str | None:
    """The kind of request a standing instruction in ``text`` applies to ("API
    error handling"), or None when ``text`` holds no such instruction. The first
    instructing sentence that names its requests counts; a question does not."""
    for sentence in _SENTENCE.split(text):
        sentence = sentence.strip()
        if not sentence or sentence.endswith("?"):
            continue
        match = _WHEN.search(sentence)
        if match is None:
            continue
        rest = f"{sentence[: match.start()]} {sentence[match.end() :]}".strip(" ,;:-")
        if not _IMPERATIVE.match(rest):
            continue
        found = _TRAILING.sub("", match.group("condition")).strip()
        if found and len(found) <= MAX_CONDITION_CHARS and re.search(r"[^\W\d_]", found):
            return found
    return None


def conditions_of(texts: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The conditions of the ``(id, text)`` pairs that hold a standing instruction."""
    found = ((memory_id, condition(text)) for memory_id, text in texts)
    return {memory_id: applies for memory_id, applies in found if applies is not None}


def conditions_in(storage: Storage, scope: Scope) -> dict[str, str]:
    """The conditions of the scope's live episodes that hold a standing
    instruction, by episode id (one pass over the scope; storage thread)."""
    found: dict[str, str] = {}
    offset = 0
    while True:
        page = storage.memories.list(scope, kind=MemoryKind.EPISODIC, limit=_PAGE, offset=offset)
        found |= conditions_of((record.id, record.content) for record in page)
        if len(page) < _PAGE:
            return found
        offset += _PAGE


@dataclass(slots=True)
class Instructions:
    """A scope's standing instructions: episode ids and their conditions' vectors."""

    ids: list[str] = field(default_factory=list)
    vectors: list[np.ndarray] = field(default_factory=list)

    def add(self, ids: Sequence[str], vectors: Sequence[np.ndarray]) -> None:
        known = set(self.ids)
        for memory_id, vector in zip(ids, vectors, strict=True):
            if memory_id not in known:
                self.ids.append(memory_id)
                self.vectors.append(vector)

    def cosines(self, query: np.ndarray) -> dict[str, float]:
        """Each instruction's cosine between ``query`` and its condition."""
        if not self.ids:
            return {}
        scores = np.stack(self.vectors) @ query
        return {memory_id: float(score) for memory_id, score in zip(self.ids, scores, strict=True)}
