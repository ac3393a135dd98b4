"""Query router: a rule-based plan for each query, well under a millisecond.

One router returns one plan (DESIGN.md "Routing"): seed 004's query class and
the memory layer it reads first, seed 001's retrieval mode, a time range
parsed from the query against a reference time, the known people or entities
the query names, keyword terms and tags. Explicit arguments from the caller
(a mode, an entity, tags, a time range) always win over guesses.

Query classes (seed 004), checked in this order, first match wins:

- META: about the memory itself ("what do you know about me", "how sure are you");
- PROCEDURAL: how to do something ("how do I", "steps to", "workflow for");
- PLANNING: deciding what to do ("should I", "plan for", "next steps", "best way to");
- PROSPECTIVE: the future ("remind me", "upcoming", "tomorrow", "next week", "when will");
- TEMPORAL: when things happened ("when did", "last week", a parsed time range);
- RELATIONAL: how entities relate ("related to", "relationship", "between X and Y");
- FACTUAL: everything else.

Beside the class, the plan carries seed 000's paradigms (``ucma.retrieval.paradigms``):
which kinds of memory an answer draws on. They describe the query for the caller
(``synthesize``-style composition, explanations); they do not change the channels
recall searches, which the class and the other fields decide.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ucma.people import without_relations
from ucma.retrieval.names import NameIndex, find_names, name_pattern, remove_names
from ucma.retrieval.paradigms import Paradigm, paradigms_of
from ucma.retrieval.terms import keyword_terms
from ucma.retrieval.timeparse import CALENDAR_NAMES, TimeAnchor, TimeRange, find_time_expressions
from ucma.types import Bank, MemoryKind, QueryMode

__all__ = [
    "PRIMARY_LAYER",
    "Layer",
    "QueryClass",
    "QueryPlan",
    "classify",
    "route",
    "without_names",
]


class QueryClass(StrEnum):
    TEMPORAL = "temporal"
    RELATIONAL = "relational"
    PLANNING = "planning"
    PROCEDURAL = "procedural"
    PROSPECTIVE = "prospective"
    META = "meta"
    FACTUAL = "factual"


class Layer(StrEnum):
    """Seed 004's memory layers, each a way of searching the one index."""

    SEMANTIC = "semantic"
    EPISODIC = "episodic"
    PROCEDURAL = "procedural"
    PROSPECTIVE = "prospective"
    GRAPH = "graph"
    META = "meta"
    PLANNING = "planning"


PRIMARY_LAYER: dict[QueryClass, Layer] = {
    QueryClass.TEMPORAL: Layer.EPISODIC,
    QueryClass.RELATIONAL: Layer.GRAPH,
    QueryClass.PLANNING: Layer.PLANNING,
    QueryClass.PROCEDURAL: Layer.PROCEDURAL,
    QueryClass.PROSPECTIVE: Layer.PROSPECTIVE,
    QueryClass.META: Layer.META,
    QueryClass.FACTUAL: Layer.SEMANTIC,
}


def _phrases(*phrases: str) -> re.Pattern[str]:
    body = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in phrases)
    return re.compile(rf"(?<![\w'])(?:{body})(?![\w'])", re.IGNORECASE)


_CLASS_PATTERNS: tuple[tuple[QueryClass, re.Pattern[str]], ...] = (
    (
        QueryClass.META,
        _phrases(
            "what do you know about me",
            "what do you remember about me",
            "what have you learned",
            "what have you learnt",
            "how confident",
            "how sure are you",
            "how sure",
            "do you remember",
            "what don't you know",
            "what do you not know",
            "your memory",
            "about yourself",
            "what are you good at",
            "what are you bad at",
        ),
    ),
    (
        QueryClass.PROCEDURAL,
        _phrases(
            "how to",
            "how do i",
            "how do you",
            "how can i",
            "how should i do",
            "steps to",
            "procedure for",
            "workflow for",
            "process for",
            "guide to",
            "tutorial",
            "instructions for",
            "walk me through",
        ),
    ),
    (
        QueryClass.PLANNING,
        _phrases(
            "should i",
            "should we",
            "plan for",
            "plan to",
            "planning",
            "next steps",
            "next step",
            "strategy for",
            "best way to",
            "what's the best way",
            "roadmap",
            "how should we",
            "what should",
        ),
    ),
    (
        QueryClass.PROSPECTIVE,
        _phrases(
            "remind me",
            "reminder",
            "upcoming",
            "tomorrow",
            "next week",
            "next month",
            "next year",
            "later today",
            "scheduled",
            "due date",
            "deadline",
            "to-do",
            "todo",
            "when will",
            "what will",
            "going to happen",
            "in the future",
        ),
    ),
    (
        QueryClass.TEMPORAL,
        _phrases(
            "when did",
            "when was",
            "when were",
            "when is",
            "what time",
            "what date",
            "which day",
            "which year",
            "which month",
            "how long ago",
            "yesterday",
            "last week",
            "last month",
            "last year",
            "last time",
            "recently",
            "ago",
            "earlier today",
            "previously",
            "the other day",
            "first time",
            "since when",
        ),
    ),
    (
        QueryClass.RELATIONAL,
        _phrases(
            "related to",
            "relationship",
            "relation between",
            "connected to",
            "connection between",
            "between",
            "how do they know",
            "who knows",
            "linked to",
            "depends on",
            "associated with",
        ),
    ),
)

_MAX_GUESSED_WORDS = 4  # a subject guessed from "what is ..." longer than this is a clause
_TRAILING = re.compile(r"[\s?.!,;:]+$")
_ENTITY_PREFIXES = ("what do you know about", "tell me about", "what is", "who is", "facts about")
_SEED001_TEMPORAL = _phrases(
    "yesterday",
    "last week",
    "last session",
    "earlier today",
    "before",
    "after",
    "when did",
    "recently",
    "today",
    "ago",
    "previously",
    "last time",
    "a while ago",
    "the other day",
)


@dataclass(frozen=True, slots=True)
class QueryPlan:
    """What to search for one query, and how."""

    text: str
    query_class: QueryClass
    mode: QueryMode
    terms: list[str]
    reference_time: float
    entities: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    time_range: tuple[float, float] | None = None
    # True when the caller gave the range: a constraint. A range parsed from the
    # text is only a hint ("recently" in a question may mean recently before the
    # event asked about, not before now), so it boosts rather than filters.
    time_filter: bool = False
    time_anchor: TimeAnchor | None = None
    kinds: tuple[MemoryKind, ...] | None = None
    # The banks (seed 000) the caller asked for; None: every bank.
    banks: tuple[Bank, ...] | None = None
    # The query without the names the entity channel already matches (a name
    # dominates a short sentence's embedding and pulls in greetings that address
    # the person rather than what was said); empty: the text itself.
    semantic_text: str = ""
    # The names left in the embedded text: the scope's names when they stay in
    # it, and any other capitalised word after a sentence's first ("Alice").
    names: tuple[str, ...] = ()
    # The words that say what is asked, without the names and the relation
    # that introduces one ("What is my landlord Bruno's middle name?": middle,
    # name): how much of the question a memory answers, for its confidence.
    answer_terms: list[str] = field(default_factory=list)
    # The capitalised words after a sentence's first that name no one the scope
    # knows ("Kofi" in "When is Kofi's pottery?" when no participant is called
    # so): the retriever asks the keyword index whether any memory holds them.
    unknown_names: tuple[str, ...] = ()
    # Seed 000's paradigms the query needs (declarative, procedural, predictive).
    paradigms: tuple[Paradigm, ...] = ()

    @property
    def layer(self) -> Layer:
        return PRIMARY_LAYER[self.query_class]

    @property
    def embedded_text(self) -> str:
        """The text embedded for dense search."""
        return self.semantic_text or self.text


def classify(text: str, *, has_time: bool = False) -> QueryClass:
    """Seed 004's class of ``text``; a parsed time expression makes it TEMPORAL
    unless an earlier class matched."""
    for query_class, pattern in _CLASS_PATTERNS:
        if query_class is QueryClass.TEMPORAL and has_time:
            return query_class
        if pattern.search(text):
            return query_class
    return QueryClass.TEMPORAL if has_time else QueryClass.FACTUAL


def seed001_mode(text: str, query_class: QueryClass) -> QueryMode:
    """Seed 001's mode: temporal keywords, then how-to and entity questions
    (structured), else hybrid."""
    lower = text.lower().strip()
    if _SEED001_TEMPORAL.search(lower):
        return QueryMode.TEMPORAL
    if query_class is QueryClass.PROCEDURAL or lower.startswith(_ENTITY_PREFIXES):
        return QueryMode.STRUCTURED
    return QueryMode.HYBRID


def _entity_after_prefix(text: str) -> str | None:
    lower = text.lower().strip()
    for prefix in _ENTITY_PREFIXES:
        if lower.startswith(prefix):
            rest = _TRAILING.sub("", text.strip()[len(prefix) :]).strip()
            for article in ("the ", "a ", "an "):
                if rest.lower().startswith(article):
                    rest = rest[len(article) :]
            return rest or None
    return None


def named_entities(text: str, known: Sequence[str] | NameIndex) -> list[str]:
    """The known names that ``text`` mentions as whole words (case-insensitive),
    longest first so "Mary Ann" wins over "Mary"; possessives count ("Mel's").

    ``known`` is indexed once per list (see ``names.name_index``), so the cost
    depends on the query, not on how many names are known."""
    return find_names(text, known)


_PROPER_NOUN = re.compile(r"(?<=[\w,;:] )[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")


def _proper_nouns(text: str) -> list[str]:
    """Capitalised words after a sentence's first word ("Bruno", "Chris Okafor"),
    possessives without their "'s"."""
    found = (re.sub(r"['’]s$", "", m.group()) for m in _PROPER_NOUN.finditer(text))
    return [n for n in found if n.split("'")[0].split("’")[0] != "I"]


def without_names(text: str, names: Sequence[str]) -> str:
    """``text`` with every whole-word mention of ``names`` (possessives included)
    removed and the spacing tidied; empty when nothing else is left."""
    text = remove_names(text, names)
    text = re.sub(r"\s+([,.?!;:])", r"\1", re.sub(r"\s+", " ", text)).strip()
    return text if any(ch.isalnum() for ch in text) else ""


def route(
    text: str,
    *,
    reference_time: float,
    known_entities: Sequence[str] | NameIndex = (),
    mode: QueryMode | None = None,
    entity: str | None = None,
    tags: Sequence[str] | None = None,
    time_range: tuple[float, float] | None = None,
    kinds: Sequence[MemoryKind] | None = None,
    banks: Sequence[Bank] | None = None,
    drop_entity_terms: bool = True,
    embed_names: bool = False,
) -> QueryPlan:
    """Build the plan for ``text``; explicit arguments override the heuristics."""
    expressions = find_time_expressions(text, reference_time)
    parsed_range = next((e for e in expressions if isinstance(e, TimeRange)), None)
    anchor = next((e for e in expressions if isinstance(e, TimeAnchor)), None)
    window = time_range or (
        (parsed_range.start, parsed_range.end) if parsed_range is not None else None
    )
    query_class = classify(text, has_time=window is not None or anchor is not None)
    chosen_mode = mode or (
        QueryMode.TEMPORAL if time_range is not None else seed001_mode(text, query_class)
    )
    entities = named_entities(text, known_entities)
    # Names the scope knows, and the caller's entity, leave the query's words; a
    # subject guessed from "what is ..." only feeds the entity channel: taken out
    # of the words, a wrong guess ("Jonas's manager's pet bird called") left
    # nothing of the question to embed.
    dropped = list(entities)
    guessed = _entity_after_prefix(text) if chosen_mode is QueryMode.STRUCTURED else None
    if guessed and len(guessed.split()) > _MAX_GUESSED_WORDS:
        guessed = None
    if entity:
        dropped.insert(0, entity)
    explicit = entity or guessed
    if explicit and explicit.lower() not in {e.lower() for e in entities}:
        entities.insert(0, explicit)
    # The relation that introduces a person ("my old roommate Hana") says who,
    # not what is asked: memories repeating it would match on it alone.
    terms = keyword_terms(without_relations(text))
    semantic_text = ""
    if dropped and drop_entity_terms:
        # Who the query is about is the entity channel's job; left in the keyword
        # query or the embedding, a name would favour greetings that address the person.
        named = {word for name in dropped for word in keyword_terms(name)}
        terms = [t for t in terms if t.split("'")[0] not in named] or terms
        if not embed_names:
            semantic_text = without_names(text, dropped)
    embedded = semantic_text or text
    names = tuple(
        dict.fromkeys(
            n for n in [*dropped, *_proper_nouns(embedded)] if name_pattern(n).search(embedded)
        )
    )
    proper = _proper_nouns(text)
    every_name = [*dropped, *proper]
    known_words = {word for name in entities for word in keyword_terms(name)}
    unknown = tuple(
        n
        for n in proper
        if not known_words.intersection(keyword_terms(n))
        and not CALENDAR_NAMES.issuperset(keyword_terms(n))
    )
    answer_terms = keyword_terms(without_names(without_relations(text), every_name))
    plan_tags = list(tags) if tags else []
    if not plan_tags and query_class in (QueryClass.PROCEDURAL, QueryClass.PLANNING):
        plan_tags = terms  # "how to deploy fastapi" -> procedures tagged deploy / fastapi
    return QueryPlan(
        text=text,
        query_class=query_class,
        mode=chosen_mode,
        terms=terms,
        reference_time=reference_time,
        entities=entities,
        tags=plan_tags,
        time_range=window,
        time_filter=time_range is not None,
        time_anchor=anchor,
        kinds=tuple(kinds) if kinds else None,
        banks=tuple(banks) if banks else None,
        semantic_text=semantic_text,
        names=names,
        answer_terms=answer_terms,
        unknown_names=unknown,
        paradigms=paradigms_of(text, names_entities=bool(entities)),
    )
