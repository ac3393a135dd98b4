"""Small everyday memory stores, as an agent that only calls ``observe`` would build them.

Each scenario is one user talking to an assistant over days, weeks or months: the user's
own facts and preferences, those of the people around them (a sister, a coworker, a
neighbour ...), later changes to some of them (a new employer, a move, a new diet, a
renamed pet, a longer run), the assistant's confirmations, everyday requests and
chit-chat ("ok thanks", "lol"). Several stores hold two different people with the same
first name (``my sister Dana`` and ``Dana Whitfield``). Then the user asks questions in
other words than the statements, each with the substrings a right answer must contain
(``required``) and must not (``forbidden``: the superseded values, and the other same-named
person's value), and some questions nothing in the store answers.

Question kinds: ``fact`` and ``preference`` (a value stated once), ``change`` (a value
that changed; ``stale`` holds the superseded ones), ``people`` (about one of two people
who share a first name), ``unanswerable`` (never said, said only of someone else, or
world knowledge).

The generator is deterministic for a seed, uses only ``everyday_vocabulary``, and checks
every store it builds (``check``): each answerable question has a statement that
contains all its required substrings and none of its forbidden ones, and every value
appears only in statements about its own person and attribute.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from everyday_vocabulary import (
    ACTIVITIES,
    ASSISTANT_CHIT_CHAT,
    ATTRIBUTES,
    CHIT_CHAT,
    FILLER,
    FILLER_WORDS,
    FIRST_NAMES,
    NEVER_SAID,
    NEVER_SAID_ME,
    RELATIONS,
    SHARED_NAMES,
    SURNAMES,
    WORLD_QUESTIONS,
    Attribute,
)

__all__ = ["KINDS", "Question", "Scenario", "Turn", "check", "generate"]

KINDS = ("fact", "preference", "change", "people", "unanswerable")
BASE_TIME = datetime(2025, 1, 6, 9, 0, tzinfo=UTC).timestamp()
DAY = 86_400.0
# Plain restatements of a new value get one of these in front (or nothing): the change
# is then implied only by the newer statement.
RESTATE_PREFIXES = ("", "", "Update: ", "Quick update. ", "FYI: ", "As of {month}: ")


@dataclass(frozen=True)
class Turn:
    """One observed message. ``about`` names the slots (person/attribute) whose values
    it states; it is the generator's bookkeeping and never shown to the engine."""

    text: str
    source: str
    timestamp: float
    about: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    """A question and what a right answer must (``required``) and must not
    (``forbidden``) contain, case-insensitively. ``stale`` lists a change question's
    superseded values (each also forbidden unless every statement of the current value
    repeats it, as "I quit Acme and joined Globex" does)."""

    text: str
    kind: str
    required: tuple[str, ...]
    forbidden: tuple[str, ...]
    stale: tuple[str, ...] = ()
    subject: str = ""
    attribute: str = ""


@dataclass(frozen=True)
class Scenario:
    name: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def end(self) -> float:
        return self.turns[-1].timestamp


@dataclass
class Person:
    """Someone the user talks about, or the user ("me")."""

    first: str
    surname: str | None = None
    relation: str | None = None
    shared: bool = False
    pet: str = "dog"
    activity: str = "pottery"
    introduced: bool = False

    @property
    def me(self) -> bool:
        return self.first == "me"

    @property
    def key(self) -> str:
        if self.me:
            return "me"
        return f"{self.first} {self.surname}" if self.surname else f"{self.first} ({self.relation})"

    def statement_ref(self, rng: random.Random) -> str:
        """How the user names this person in a statement: always unambiguously for a
        shared first name; a unique name is introduced with the relation first."""
        if self.surname:
            return f"{self.first} {self.surname}"
        if self.shared or not self.introduced:
            self.introduced = True
            return f"my {self.relation} {self.first}"
        return rng.choice((self.first, self.first, f"my {self.relation} {self.first}"))

    def question_ref(self, rng: random.Random) -> str:
        if self.surname:
            return f"{self.first} {self.surname}"
        if self.shared:
            return f"my {self.relation} {self.first}"
        return rng.choice((self.first, f"my {self.relation} {self.first}"))


@dataclass
class Slot:
    """One person's one attribute and the values it takes, oldest first."""

    person: Person
    attribute: Attribute
    values: list[str]
    times: list[float] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.person.key}/{self.attribute.name}"


def _fill(template: str, person: Person, rng: random.Random, **values: str) -> str:
    ref = "" if person.me else person.statement_ref(rng)
    text = template.format(
        Who=ref[:1].upper() + ref[1:],
        who=ref,
        Whose=(ref[:1].upper() + ref[1:]) + "'s",
        whose=ref + "'s",
        pet=person.pet,
        act=person.activity,
        **values,
    )
    text = re.sub(r"\b([Aa]) (?=[AEIaeio])", r"\1n ", text)
    return text[:1].upper() + text[1:] if text[:1].isalpha() and rng.random() < 0.8 else text


def _month(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%B")


def _statements(slot: Slot, rng: random.Random) -> list[Turn]:
    """The turns stating each of the slot's values at its time, with an occasional
    assistant confirmation of the user's own value."""
    turns = []
    attribute, person = slot.attribute, slot.person
    for index, (value, at) in enumerate(zip(slot.values, slot.times, strict=True)):
        month = _month(at)
        says = attribute.say_me if person.me else attribute.say_other
        changes = attribute.change_me if person.me else attribute.change_other
        if index == 0 or not changes or rng.random() < 0.3:
            prefix = rng.choice(RESTATE_PREFIXES).format(month=month) if index else ""
            text = prefix + _fill(rng.choice(says), person, rng, v=value, month=month)
        else:
            old = slot.values[index - 1]
            text = _fill(rng.choice(changes), person, rng, v=value, old=old, month=month)
        turns.append(Turn(text, "user", at, (slot.key,)))
        if person.me and attribute.echo and rng.random() < 0.3:
            echo = _fill(rng.choice(attribute.echo), person, rng, v=value)
            turns.append(Turn(echo, "assistant", at + 5, (slot.key,)))
    return turns


def _filler(people: list[Person], rng: random.Random, at: float) -> Turn:
    roll = rng.random()
    if roll < 0.35:
        return Turn(rng.choice(CHIT_CHAT), "user", at)
    if roll < 0.45:
        return Turn(rng.choice(ASSISTANT_CHIT_CHAT), "assistant", at)
    template = rng.choice(FILLER)
    others = [p for p in people if not p.me]
    name = rng.choice(others).statement_ref(rng) if others else "a friend"
    words = {key: rng.choice(options) for key, options in FILLER_WORDS.items()}
    text = template.format(name=name, **words)
    source = "assistant" if text.startswith("Sure,") else "user"
    return Turn(text[:1].upper() + text[1:], source, at)


def _people(count: int, shared: bool, rng: random.Random) -> list[Person]:
    people = [Person("me")]
    relations = rng.sample(RELATIONS, k=count + 1)
    if shared and count >= 2:
        first = rng.choice(SHARED_NAMES)
        people.append(Person(first, relation=relations.pop(), shared=True))
        people.append(Person(first, surname=rng.choice(SURNAMES), shared=True))
        count -= 2
    for name in rng.sample(FIRST_NAMES, k=count):
        people.append(Person(name, relation=relations.pop()))
    for person in people:
        person.pet = rng.choice(("dog", "cat"))
        person.activity = rng.choice(ACTIVITIES)
    return people


def _chain(attribute: Attribute, length: int, used: set[str], rng: random.Random) -> list[str]:
    if attribute.chains:
        options = [c for c in attribute.chains if len(c) >= length and not used & set(c)]
        if options:
            return list(rng.choice(options)[:length])
        free = [v for v in attribute.values if v not in used]
        return [rng.choice(free)] if free else []
    free = [v for v in attribute.values if v not in used]
    return rng.sample(free, k=length) if len(free) >= length else []


def _slots(people: list[Person], wanted: int, small: bool, rng: random.Random) -> list[Slot]:
    """Person/attribute pairs with their value chains, values unique in the store. Two
    same-named people always share an attribute (the close distractor)."""
    attributes = rng.sample(ATTRIBUTES, k=min(len(ATTRIBUTES), 4 + wanted // 4))
    used: dict[str, set[str]] = {a.name: set() for a in ATTRIBUTES}
    pairs = [(p, a) for p in people for a in attributes]
    rng.shuffle(pairs)
    shared = [p for p in people if p.shared]
    if shared:
        common = rng.choice(attributes)
        first = [(p, common) for p in shared]
        pairs = first + [pair for pair in pairs if pair not in first]
    slots = []
    for person, attribute in pairs:
        if len(slots) >= wanted:
            break
        changes = attribute.change_me if person.me else attribute.change_other
        length = 1
        if changes and rng.random() < 0.4:
            length = 2 if small or rng.random() < 0.75 else 3
        values = _chain(attribute, length, used[attribute.name], rng)
        if not values:
            continue
        used[attribute.name].update(values)
        slots.append(Slot(person, attribute, values))
    return slots


def _times(slot: Slot, span: float, rng: random.Random) -> None:
    count = len(slot.values)
    start = rng.uniform(0, span * (0.5 if count > 1 else 0.9))
    times = [start]
    for index in range(1, count):
        low = times[-1] + DAY
        high = max(low + DAY, span * (0.6 + 0.4 * index / (count - 1)))
        times.append(rng.uniform(low, high))
    slot.times = [BASE_TIME + t for t in times]


def _distractors(slot: Slot, slots: list[Slot]) -> tuple[str, ...]:
    """Values a right answer about ``slot`` must not give: the same attribute's values
    of other people (the other Dana's first); failing those, the person's other
    attributes (an answer that drifts off the question)."""
    same = [s for s in slots if s is not slot and s.attribute is slot.attribute]
    same.sort(key=lambda s: s.person.first != slot.person.first)
    values = tuple(v for s in same for v in s.values)
    if values:
        return values
    return tuple(v for s in slots if s is not slot and s.person is slot.person for v in s.values)


def _answerable(slot: Slot, slots: list[Slot], rng: random.Random) -> Question:
    person, attribute = slot.person, slot.attribute
    if person.me:
        text = rng.choice(attribute.ask_me)
    else:
        ref = person.question_ref(rng)
        text = rng.choice(attribute.ask_other).format(
            who=ref, whose=ref + "'s", act=person.activity
        )
    text = text.format(act=person.activity)
    stale = tuple(slot.values[:-1])
    others = _distractors(slot, slots)
    if stale:
        kind = "change"
    elif person.shared:
        kind = "people"
    else:
        kind = attribute.kind
    return Question(
        text,
        kind,
        (slot.values[-1],),
        stale + others,
        stale,
        person.key,
        attribute.name,
    )


def _unanswerable(people: list[Person], slots: list[Slot], rng: random.Random) -> Question:
    """Never said of anyone, said only of someone else, or world knowledge."""
    roll = rng.random()
    person = rng.choice(people)
    ref = "" if person.me else person.question_ref(rng)
    own = tuple(v for s in slots if s.person is person for v in s.values)
    if roll < 0.35:
        held = {s.attribute.name for s in slots if s.person is person}
        missing = [s.attribute for s in slots if s.attribute.name not in held]
        if missing:
            attribute = rng.choice(missing)
            template = rng.choice(attribute.ask_me if person.me else attribute.ask_other)
            text = template.format(who=ref, whose=ref + "'s", act=person.activity)
            others = tuple(v for s in slots if s.attribute is attribute for v in s.values)
            return Question(text, "unanswerable", (), others, (), person.key, attribute.name)
    if roll < 0.75:
        if person.me:
            text = rng.choice(NEVER_SAID_ME)
        else:
            text = rng.choice(NEVER_SAID).format(who=ref, whose=ref + "'s")
        return Question(text, "unanswerable", (), own, (), person.key, "never said")
    return Question(rng.choice(WORLD_QUESTIONS), "unanswerable", (), (), (), "", "world")


def _settle(question: Question, turns: tuple[Turn, ...]) -> Question:
    """Drop a forbidden value that every statement of the answer repeats ("I quit
    Acme and joined Globex"): a right answer may quote it."""
    if not question.required:
        return question
    low = [t.text.lower() for t in turns]
    targets = [t for t in low if all(r.lower() in t for r in question.required)]
    forbidden = tuple(f for f in question.forbidden if any(f.lower() not in t for t in targets))
    clean = [t for t in targets if not any(f.lower() in t for f in forbidden)]
    if not clean and targets:
        best = min(targets, key=lambda t: sum(f.lower() in t for f in forbidden))
        forbidden = tuple(f for f in forbidden if f.lower() not in best)
    return Question(
        question.text,
        question.kind,
        question.required,
        forbidden,
        question.stale,
        question.subject,
        question.attribute,
    )


def _scenario(index: int, size: int, rng: random.Random) -> Scenario:
    small = size < 10
    wanted = max(1, (size - 1) // 2) if size < 7 else max(2, round(size / 6.5))
    wanted = min(wanted, 40)
    others = 0 if size < 5 else min(6, 1 + wanted // 3)
    people = _people(others, shared=others >= 2 and (index % 3 != 2), rng=rng)
    slots = _slots(people, wanted, small, rng)
    span = DAY * (rng.uniform(2, 20) if size < 30 else rng.uniform(30, 240))
    for slot in slots:
        _times(slot, span, rng)
    events: list[Turn] = []
    firsts: dict[str, Turn] = {}
    for slot in sorted(slots, key=lambda s: s.times[0]):
        stated = _statements(slot, rng)
        if small:
            stated = [t for t in stated if t.source == "user"]
        first, rest = stated[0], stated[1:]
        # A compound message: a person's first statement joins an earlier one's.
        earlier = firsts.get(slot.person.key)
        if earlier is not None and len(earlier.about) == 1 and rng.random() < 0.3:
            events.remove(earlier)
            joint = earlier.text if earlier.text[-1] in ".!?" else earlier.text + "."
            first = Turn(
                f"{joint} Also: {first.text}",
                "user",
                earlier.timestamp,
                earlier.about + first.about,
            )
        firsts[slot.person.key] = first
        events.append(first)
        events.extend(rest)
    while len(events) < size:
        at = BASE_TIME + rng.uniform(0, span)
        events.append(_filler(people, rng, at))
    events.sort(key=lambda t: t.timestamp)
    turns = tuple(events)
    questions = [_answerable(slot, slots, rng) for slot in slots]
    if size >= 60:
        extra = rng.sample(slots, k=len(slots) // 4)
        questions += [_answerable(slot, slots, rng) for slot in extra]
    questions += [
        _unanswerable(people, slots, rng) for _ in range(max(1, round(len(questions) * 0.18)))
    ]
    questions = [_settle(q, turns) for q in questions]
    unique = list({q.text: q for q in questions}.values())
    return Scenario(f"store_{index:02d}_{len(turns)}", turns, tuple(unique))


def check(scenario: Scenario) -> None:
    """Raise ``ValueError`` when a store cannot be scored fairly: a value that appears
    outside its own statements, or an answerable question with no clean statement."""
    slots_of: dict[str, set[str]] = {}
    for question in scenario.questions:
        if question.required:
            key = f"{question.subject}/{question.attribute}"
            for value in question.required + question.stale:
                slots_of.setdefault(value.lower(), set()).add(key)
    for value, keys in slots_of.items():
        for turn in scenario.turns:
            if value in turn.text.lower() and not keys & set(turn.about):
                raise ValueError(f"{scenario.name}: {value!r} leaks into {turn.text!r}")
    for question in scenario.questions:
        if not question.required:
            continue
        clean = [
            t
            for t in scenario.turns
            if all(r.lower() in t.text.lower() for r in question.required)
            and not any(f.lower() in t.text.lower() for f in question.forbidden)
        ]
        if not clean:
            raise ValueError(f"{scenario.name}: nothing answers {question.text!r}")


def sizes(count: int, rng: random.Random) -> list[int]:
    """Store sizes from 3 to 300 memories, spread geometrically, jittered."""
    out = []
    for index in range(count):
        size = 3 * 100 ** (index / (count - 1))
        if 0 < index < count - 1:
            size *= rng.uniform(0.9, 1.1)
        out.append(max(3, min(300, round(size))))
    return out


def generate(count: int = 44, seed: int = 12) -> list[Scenario]:
    """``count`` checked scenarios for ``seed``; the same arguments give the same stores."""
    rng = random.Random(seed)
    scenarios = []
    for index, size in enumerate(sizes(count, rng)):
        scenario = _scenario(index, size, rng)
        check(scenario)
        scenarios.append(scenario)
    return scenarios
