"""Comparing what is said about a person without the person's name.

A name two short texts share lifts their cosine whatever else they say: with
the packaged MiniLM, "What gives my landlord Sofia a bad reaction?" scores 0.61
against "Had lunch with my landlord Sofia near the harbour wall." and 0.38
against "Sofia can't be near bee stings, severe allergy." With the person
replaced by a pronoun on both sides ("What gives they a bad reaction?", "they
can't be near bee stings ...") the allergy leads, 0.24 against 0.10.

So for a query that names people, the memories naming them are compared twice,
and their dense score mixes in ``RetrievalConfig.name_free_weight`` of the
name-free cosine (``blend``); the name still narrows through the keyword and
entity channels. ``naming`` finds those people and memories on the storage
thread while the query is embedded (none of it depends on the query's
vector; measured on LoCoMo dev, one query at a time, interleaved: p95 0.8 ms
lower than reading first and embedding both in one call, though the query
without the names then takes a model call of its own when someone is named);
``Naming.closest`` then picks the memories to compare by the
query's vector, and the engine reads their name-free vectors from the embedding
caches (``observe`` put them there: ``name_free_texts``) or embeds them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ucma.people import first_name_regex, known_people, without_people
from ucma.retrieval.names import name_pattern
from ucma.retrieval.terms import keyword_terms
from ucma.retrieval.timeparse import CALENDAR_NAMES
from ucma.storage.base import Storage
from ucma.types import Scope

__all__ = ["Naming", "blend", "name_free_texts", "naming"]


@dataclass(frozen=True, slots=True)
class Naming:
    """The people a query names (``persons``; ``first_names``: the first names
    standing for them), and the live memories naming them with their vectors."""

    persons: list[str]
    first_names: list[str]
    vectors: dict[str, np.ndarray]
    contents: dict[str, str]

    def without_people(self, text: str) -> str:
        """``text`` with these people put as a pronoun."""
        return without_people(text, self.persons, self.first_names)

    def closest(self, vector: np.ndarray, limit: int) -> dict[str, str]:
        """The contents of the (at most ``limit``) memories closest to ``vector``."""
        vectors = self.vectors
        closest = sorted(vectors, key=lambda i: (-float(np.dot(vectors[i], vector)), i))[:limit]
        return {memory_id: self.contents[memory_id] for memory_id in closest}


def naming(
    storage: Storage, scope: Scope, names: Sequence[str], query: str, *, limit: int
) -> Naming | None:
    """The people among ``names``, their first names, and the live memories naming
    them among the best ``4 * limit`` keyword matches of the names (None when
    ``names`` holds no person's name or no memory names them).

    A first name stands for the person the full name names ("my roommate Chris"
    beside "Chris Tanaka" lifts the cosine the same way); it counts only as
    written, capitalised ("Will Smith" is not in "I will"), and not where it starts
    another full name ("Chris Okafor").

    A name counts as a person's when the query or one of those memories uses it
    as people's names are used (``ucma.people.known_people``: "my landlord
    Sofia", "Mei Lopez's colleague", "Bruno runs ..."): a place the query names
    ("Which city in Portugal ...") is what is asked, not who. A month or a day of
    the week ("on May 3") is no one's name here."""
    names = [n for n in names if not CALENDAR_NAMES.issuperset(keyword_terms(n))]
    terms = [term for name in names for term in keyword_terms(name)]
    if not terms:
        return None
    found = storage.memories.keyword_search(scope, terms, limit * 4)
    records = storage.memories.get_many(scope, [memory_id for memory_id, _ in found])
    patterns = {name: name_pattern(name) for name in names}
    firsts = {name: _first_name(name) for name in names}
    patterns |= {first: _cased(first) for first in firsts.values() if first not in patterns}
    contents = {
        memory_id: record.content
        for memory_id, record in records.items()
        if record.archived_at is None and any(p.search(record.content) for p in patterns.values())
    }
    people = {p.lower() for p in known_people([query, *contents.values()])}
    persons = [name for name in names if name.lower() in people]
    if not persons:
        return None
    cased = [firsts[n] for n in persons if firsts[n] not in persons]
    contents = {
        memory_id: content
        for memory_id, content in contents.items()
        if any(patterns[name].search(content) for name in [*persons, *cased])
    }
    vectors = storage.memories.vectors(scope, list(contents))
    if not vectors:
        return None
    return Naming(persons, cased, vectors, {i: contents[i] for i in vectors})


def name_free_texts(text: str, people: Iterable[str]) -> set[str]:
    """The texts ``Naming.without_people`` makes of ``text`` for a query naming one
    of ``people`` as ``text`` does: that person put as a pronoun (a full name's first
    name standing for it too). ``observe`` embeds them so that recall finds them
    cached; a query naming the person otherwise ("Sofia" for "Sofia Marsh", several
    people at once) embeds its own once, and it is kept too."""
    texts = set()
    for name in {n.strip() for n in people if n.strip()}:
        first = _first_name(name)
        texts.add(without_people(text, [name], [first] if first != name else []))
    texts.discard(text)
    return texts


def _first_name(name: str) -> str:
    return name.split()[0]


def _cased(name: str) -> re.Pattern[str]:
    """``name_pattern`` as written: a first name only where it is capitalised and
    does not start another full name ("Chris Okafor" is not "Chris Tanaka")."""
    return re.compile(rf"(?<!\w){first_name_regex(name)}(?:'s|’s)?(?!\w)")


def blend(cosine: float, name_free: float | None, weight: float) -> float:
    """A memory's dense score: its cosine, mixed with its name-free cosine when
    it names whom the query names."""
    if name_free is None:
        return cosine
    return (1.0 - weight) * cosine + weight * name_free
