"""Generates the paraphrase benchmark: facts, questions in other words, close distractors.

Each pair is one fact about a named person or one of their relatives
("Priya Raman's sister lives in Lyon.") and one question about it in other
words ("Which French city does Priya Raman's sibling reside in?"). The question
names the person, paraphrases the relation and the relative, and at most hints
at the kind of answer; among the question forms the vocabulary offers, one
sharing the fewest content words with the fact is chosen (names and stop words
aside), and that overlap is reported, not hidden.

Every fact comes with close distractors, also ordinary statements:

- ``same_person``: the same person and relation, another relative (or the person
  themself), another value, preferably of the same kind ("Priya Raman lives in
  Toulouse.");
- ``sibling_relation``: the same subject, a neighbouring relation of the same
  domain, sometimes the same value ("Priya Raman's sister works in Lyon.");
- ``namesake``: someone with the same first name and another surname, the same
  relative and relation, another value ("Priya Shah's sister lives in Lille.").

Questions are unambiguous by construction: no two statements in the whole set
share (person, relative group, relation), where relatives that a question
paraphrases alike (sister, brother: "sibling") form one group. Everything
follows one seeded ``random.Random``, so a seed gives the same set every time.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass, field

from paraphrase_vocabulary import (
    FIRST_NAMES,
    KIN,
    POOLS,
    RELATIONS,
    SPOUSES,
    SURNAMES,
    Relation,
    Value,
)

__all__ = ["Pair", "Person", "Statement", "content_overlap", "generate", "split"]

N_PEOPLE = 150
STATEMENT_OPENERS = ("FYI: ", "Good to know: ", "Noting for later: ", "Just learned that ")
QUESTION_OPENERS = ("Remind me, ", "Do you remember: ", "Quick question: ")
_QUESTION_WORDS = {"which", "what", "where", "when", "how", "who", "in", "on", "does", "is", "at"}

_STOP_TEXT = """a an the and or but if of to in on at by for with from into about as is are
    was were be
    been being am do does did doing have has had having i me my we our you your he him his she
    her it its they them their this that these those there here what which who whom whose when
    where why how all any each every some no not only own same so than too very can will just
    should would could may might must shall s t up down out over under again once also still
    now then one get got"""
STOP_WORDS = frozenset(_STOP_TEXT.split())


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    spouse: str
    """Which of wife / husband / partner statements about this person use."""

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


@dataclass(frozen=True)
class Statement:
    """One memory to observe. ``role`` is "fact" or the kind of distractor."""

    text: str
    person: str
    kin: str
    relation: str
    answer: tuple[str, ...]
    """The value's words as the statement gives them (slot text, then any extra slots)."""
    role: str
    pair: int


@dataclass
class Pair:
    index: int
    domain: str
    relation: str
    question: str
    fact: Statement
    distractors: list[Statement] = field(default_factory=list)
    overlap: float = 0.0
    """Share of the question's content words found in the fact (names and stop words aside)."""
    shared_words: list[str] = field(default_factory=list)

    @property
    def statements(self) -> list[Statement]:
        return [self.fact, *self.distractors]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "ly", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _words(text: str, ignore: set[str]) -> list[str]:
    tokens = re.findall(r"\w+", text.lower())
    return [t for t in tokens if t not in STOP_WORDS and t not in ignore and not t.isdigit()]


def _same_word(a: str, b: str) -> bool:
    return _stem(a) == _stem(b) or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5])


def content_overlap(question: str, fact: str, names: set[str]) -> tuple[float, list[str]]:
    """Share of the question's content words that the fact also uses (a crude
    stemmer and a shared five-letter prefix count as the same word), and those words."""
    asked = _words(question, names)
    stated = _words(fact, names)
    shared = [w for w in asked if any(_same_word(w, s) for s in stated)]
    return (len(shared) / len(asked) if asked else 0.0), shared


def _people(rng: random.Random) -> list[Person]:
    people: list[Person] = []
    seen: set[tuple[str, str]] = set()
    while len(people) < N_PEOPLE:
        first = FIRST_NAMES[len(people) % len(FIRST_NAMES)]
        last = rng.choice(SURNAMES)
        if (first, last) not in seen:
            seen.add((first, last))
            people.append(Person(first, last, rng.choice(SPOUSES)))
    return people


def _kin_options(relation: Relation, person: Person) -> list[str]:
    allowed = relation.subjects or tuple(KIN)
    return [k for k in allowed if k not in SPOUSES or k == person.spouse]


def _subject(person: Person, kin: str) -> str:
    return person.name if kin == "self" else f"{person.name}'s {kin}"


def _fill(template: str, subject: str, value: Value, hint: str = "") -> str:
    text = template.format(s=subject, v=value.text, h=hint, **dict(value.extra))
    return text[0].upper() + text[1:]


def _answer(value: Value) -> tuple[str, ...]:
    return (value.text, *(v for _, v in value.extra))


class _Builder:
    """Draws pairs one at a time, keeping the set unambiguous and free of duplicates."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.people = _people(self.rng)
        self.namesakes: dict[str, list[Person]] = defaultdict(list)
        for p in self.people:
            self.namesakes[p.first].append(p)
        self.used: set[tuple[str, str, str]] = set()
        self.texts: set[str] = set()

    def key(self, person: Person, kin: str, relation: Relation) -> tuple[str, str, str]:
        return (person.name, KIN[kin].group, relation.key)

    def statement(
        self, person: Person, kin: str, relation: Relation, value: Value, role: str, pair: int
    ) -> Statement | None:
        """A statement for this slot, or None when the slot or its text is taken."""
        if self.key(person, kin, relation) in self.used:
            return None
        text = _fill(self.rng.choice(relation.statements), _subject(person, kin), value)
        if self.rng.random() < 0.2:
            text = self.rng.choice(STATEMENT_OPENERS) + text
        if text in self.texts:
            return None
        return Statement(text, person.name, kin, relation.key, _answer(value), role, pair)

    def commit(self, statements: list[Statement]) -> None:
        for s in statements:
            self.used.add((s.person, KIN[s.kin].group, s.relation))
            self.texts.add(s.text)

    def other_value(self, pool: str, value: Value) -> Value:
        """Another value, of the same kind as ``value`` when the pool has one (70%)."""
        others = [v for v in POOLS[pool] if v != value]
        alike = [v for v in others if set(v.hints) & set(value.hints) or (
            value.extra and v.text == value.text)]  # fmt: skip
        if alike and self.rng.random() < 0.7:
            return self.rng.choice(alike)
        return self.rng.choice(others)

    def question(self, person: Person, kin: str, relation: Relation, value: Value, fact: str):
        """The question form sharing the fewest content words with the fact
        (ties broken at random); returns (question, overlap, shared words)."""
        names = set(_words(person.name, set()))
        hints = value.hints or ("",)
        templates = [t for t in relation.questions if value.hints or "{h}" not in t]
        candidates = []
        for template in templates:
            for hint in hints:
                if kin == "self":
                    subjects = [person.name]
                else:
                    subjects = [f"{person.name}'s {p}" for p in KIN[kin].paraphrases]
                    if "{s}'s" not in template:
                        subjects += [f"the {p} of {person.name}" for p in KIN[kin].paraphrases]
                for subject in subjects:
                    text = _fill(template, subject, value, hint)
                    share, shared = content_overlap(text, fact, names)
                    candidates.append((share, text, shared))
        best = min(c[0] for c in candidates)
        share, text, shared = self.rng.choice([c for c in candidates if c[0] == best])
        if self.rng.random() < 0.15:
            opener = self.rng.choice(QUESTION_OPENERS)
            first = text.split()[0].lower()
            text = opener + (text[0].lower() + text[1:] if first in _QUESTION_WORDS else text)
        return text, share, shared

    def pair(self, index: int, relation: Relation) -> Pair | None:
        rng = self.rng
        person = rng.choice(self.people)
        kin = rng.choice(_kin_options(relation, person))
        value = rng.choice(POOLS[relation.pool])
        fact = self.statement(person, kin, relation, value, "fact", index)
        if fact is None:
            return None
        taken = {self.key(person, kin, relation)}
        distractors: dict[str, Statement] = {}

        others = [k for k in _kin_options(relation, person) if KIN[k].group != KIN[kin].group]
        rng.shuffle(others)
        for other in others:
            if self.key(person, other, relation) not in taken:
                d = self.statement(
                    person, other, relation, self.other_value(relation.pool, value),
                    "same_person", index,
                )  # fmt: skip
                if d is not None:
                    distractors["same_person"] = d
                    taken.add(self.key(person, other, relation))
                    break

        siblings = [r for r in RELATIONS if r.domain == relation.domain and r.key != relation.key]
        rng.shuffle(siblings)
        for sibling in siblings:
            if kin not in _kin_options(sibling, person):
                continue
            if sibling.pool == relation.pool and rng.random() < 0.5:
                sibling_value = value
            else:
                sibling_value = rng.choice(POOLS[sibling.pool])
            d = self.statement(person, kin, sibling, sibling_value, "sibling_relation", index)
            if d is not None:
                distractors["sibling_relation"] = d
                break

        namesakes = [p for p in self.namesakes[person.first] if p != person]
        rng.shuffle(namesakes)
        want_namesake = len(distractors) < 2 or rng.random() < 0.75
        for namesake in namesakes if want_namesake else []:
            their_kin = namesake.spouse if kin in SPOUSES else kin
            if their_kin not in _kin_options(relation, namesake):
                continue
            d = self.statement(
                namesake, their_kin, relation, self.other_value(relation.pool, value),
                "namesake", index,
            )  # fmt: skip
            if d is not None:
                distractors["namesake"] = d
                break

        chosen = list(distractors.values())
        if len(chosen) < 2 or len({s.text for s in [fact, *chosen]}) != len(chosen) + 1:
            return None
        question, share, shared = self.question(person, kin, relation, value, fact.text)
        self.commit([fact, *chosen])
        return Pair(index, relation.domain, relation.key, question, fact, chosen, share, shared)


def generate(n_pairs: int = 360, seed: int = 12) -> list[Pair]:
    """``n_pairs`` pairs drawn evenly over the relations (seeded, reproducible)."""
    builder = _Builder(seed)
    order: list[Relation] = []
    while len(order) < n_pairs:
        batch = list(RELATIONS)
        builder.rng.shuffle(batch)
        order.extend(batch)
    pairs: list[Pair] = []
    for relation in order[:n_pairs]:
        for _attempt in range(200):
            pair = builder.pair(len(pairs), relation)
            if pair is not None:
                pairs.append(pair)
                break
        else:
            raise RuntimeError(f"could not draw a pair for {relation.key}")
    return pairs


def split(pairs: list[Pair], stores: int) -> list[list[Pair]]:
    """Pairs dealt round-robin into ``stores`` groups; a pair's distractors go with it."""
    return [pairs[i::stores] for i in range(stores)]
