"""Seed 000's query routing: which memory paradigms a query needs.

The router's plan carries them beside seed 004's query class (``ucma.retrieval.router``).
The query class picks where recall searches first; the paradigms say which kinds of
memory an answer draws on: **declarative** (facts, beliefs, experiences), **procedural**
(strategies, how to do things), **predictive** (outcomes, competence, goals). They do not
change which channels recall searches.

Indicators, each a rule over the words of the query (several may hold at once):

- declarative: a question about what is or was (a wh-question that is not about the
  future or a hypothetical), a preference or belief, something said or done before, a
  known name, or evidence;
- procedural: how to do something, doing it again, the steps or method of a task;
- predictive: what will or would happen, planning and deciding, capabilities ("am I
  good at", "can I handle"), goals and progress;
- a capability question asks for the self-model and its evidence: predictive and
  declarative;
- a request for help with a task ("help me", "let's", "I need to") needs facts about
  it, strategies for it and the goal it serves: all three;
- nothing recognisable: all three (seed 000's default).

Rule-based and pure: a few compiled patterns, microseconds per query.
"""

from __future__ import annotations

import re
from enum import StrEnum

__all__ = ["Paradigm", "paradigms_of"]


class Paradigm(StrEnum):
    """Seed 000's three memory paradigms."""

    DECLARATIVE = "declarative"
    PROCEDURAL = "procedural"
    PREDICTIVE = "predictive"


ALL = (Paradigm.DECLARATIVE, Paradigm.PROCEDURAL, Paradigm.PREDICTIVE)


def _words(*phrases: str) -> re.Pattern[str]:
    body = "|".join(p.replace(" ", r"\s+") for p in phrases)
    return re.compile(rf"(?<![\w'])(?:{body})(?![\w'])", re.IGNORECASE)


# A question about what will or would happen, or what to do: not about what is.
_FUTURE_QUESTION = _words(
    r"(?:what|who|which|where|when|how)(?:'s|\s+is)?\s+(?:will|would|could|might|is\s+going\s+to"
    r"|are\s+going\s+to|happens?\s+(?:if|when)|should)",
    r"what\s+if",
)
_WH_QUESTION = re.compile(
    r"^\W*(?:(?:and|so|but|ok(?:ay)?|hey)\W+)?(?:what|who|whom|whose|which|where|when|"
    r"tell\s+me\s+about|remind\s+me\s+what|do\s+you\s+know|is|are|was|were|does|did|has|have)"
    r"(?![\w'])",
    re.IGNORECASE,
)
_DECLARATIVE = _words(
    r"prefer(?:s|red|ence|ences)?",
    r"favou?rite",
    r"(?:do|does|did)\s+(?:i|we|you|they|he|she)\s+(?:like|love|hate|think|believe|say|said|"
    r"tell|mention|discuss|talk|decide|agree)",
    r"opinions?",
    r"believes?",
    r"discuss(?:ed)?",
    r"talk(?:ed)?\s+about",
    r"mentioned",
    r"told\s+(?:me|you|us)",
    r"yesterday",
    r"last\s+(?:time|week|month|year|session)",
    r"earlier",
    r"evidence",
    r"track\s+record",
    r"history\s+of",
    r"facts?\s+about",
)
_PROCEDURAL = _words(
    r"how\s+(?:do|can|should|would|could)\s+(?:i|we|you|one)",
    r"how\s+to",
    r"steps?\s+(?:to|for)",
    r"procedure",
    r"workflow",
    r"process\s+for",
    r"instructions?\s+for",
    r"guide\s+(?:to|for)",
    r"walk\s+me\s+through",
    r"(?:best|right|fastest|easiest)\s+way\s+to",
    r"best\s+practices?",
    r"(?:do|did|make|run|try)\s+(?:it|this|that)\s+again",
    r"like\s+last\s+time",
    r"same\s+as\s+before",
    r"as\s+usual",
)
_PREDICTIVE = _words(
    r"what\s+(?:will|would|could|might)\s+happen",
    r"what\s+happens\s+(?:if|when)",
    r"what\s+if",
    r"(?:will|would)\s+(?:it|this|that|they|i|we)\s+(?:work|fail|succeed|pass|break|happen)",
    r"going\s+to\s+(?:happen|work|fail)",
    r"predict(?:ion|ions|ed)?",
    r"likely",
    r"chances?\s+(?:of|that)",
    r"outcomes?",
    r"consequences?",
    r"expect(?:ed)?",
    r"should\s+(?:i|we)",
    r"plan(?:s|ning)?",
    r"next\s+steps?",
    r"roadmap",
    r"prioriti[sz]e",
    r"goals?",
    r"progress",
    r"on\s+track",
    r"deadlines?",
    r"milestones?",
    r"(?:finish|complete|achieve)\s+(?:my|our|the)",
    r"how\s+far\s+along",
)
_FUTURE_START = re.compile(
    r"^\W*(?:will|won't|would|is\s+it\s+going\s+to|are\s+(?:we|they)\s+going\s+to)(?![\w'])",
    re.IGNORECASE,
)
# "Am I good at SQL?", "Can I handle ...", "What are my weaknesses?"
_CAPABILITY = _words(
    r"(?:am\s+i|are\s+you|are\s+we|is\s+(?:the\s+)?agent)\s+(?:any\s+|really\s+)?"
    r"(?:good|bad|competent|capable|able|skilled|reliable|better|worse)",
    r"how\s+good\s+(?:am\s+i|are\s+you|are\s+we)",
    r"(?:can|could)\s+(?:i|you|we)\s+(?:handle|manage|do\s+this|pull\s+(?:this|it)\s+off)",
    r"what\s+(?:am\s+i|are\s+you)\s+(?:good|bad)\s+at",
    r"(?:my|your|our)\s+(?:strengths?|weakness(?:es)?|skills?|competence)",
)
# A request to get a task done with the user: facts, strategies and the goal.
_TASK_REQUEST = re.compile(
    r"^\W*(?:please\s+)?(?:help\s+(?:me|us)|can\s+you\s+help|could\s+you\s+help|let'?s|"
    r"i\s+(?:need|want|have)\s+to|we\s+(?:need|want|have)\s+to|assist\s+me)(?![\w'])",
    re.IGNORECASE,
)


def paradigms_of(text: str, *, names_entities: bool = False) -> tuple[Paradigm, ...]:
    """The paradigms ``text`` needs, in the order declarative, procedural,
    predictive; ``names_entities`` says the query names someone or something memory
    knows (a fact lookup's cue)."""
    if _TASK_REQUEST.search(text):
        return ALL
    found: set[Paradigm] = set()
    if _CAPABILITY.search(text):
        found.update((Paradigm.PREDICTIVE, Paradigm.DECLARATIVE))
    if _PREDICTIVE.search(text) or _FUTURE_START.search(text):
        found.add(Paradigm.PREDICTIVE)
    if _PROCEDURAL.search(text):
        found.add(Paradigm.PROCEDURAL)
    future = _FUTURE_QUESTION.search(text) is not None or _FUTURE_START.search(text) is not None
    if (
        _DECLARATIVE.search(text)
        or names_entities
        or (_WH_QUESTION.search(text) and not future and not found)
    ):
        found.add(Paradigm.DECLARATIVE)
    return tuple(p for p in ALL if p in found) or ALL
