"""Whether what memory knows contradicts a goal (seed 000's conflict matrix: a goal
that conflicts with facts is flagged to the user and suspended).

Read from memory as the everyday path builds it (observed statements and the facts
read from them), without a model, by three kinds of evidence:

- ``ended``: a statement says what the goal is about ended: "The Japan trip got
  cancelled", "We scrapped the mobile app", "the launch is on hold". What ended
  is read from the words around the cue (up to four content words before and after
  it, within the clause) and must be what the goal is about: two of the goal's
  words, or at least half of those words. A later statement that brings it back
  ("the Japan trip is back on", "rescheduled", "not cancelled after all") ends the
  conflict. A goal that is itself about ending something ("Cancel the gym
  membership") is not contradicted by it ending.
- ``retired``: a statement says a value the goal relies on is over ("I left Acme",
  "Dana moved from Berlin to Munich", "we gave up on Rust"; the retiring shapes of
  ``ucma.conflicts.statements``), about the goal's people (a statement naming
  someone the goal does not name is about someone else). A later statement that
  states the value again with a change cue ("Dana moved back to Berlin") ends it.
- ``changed``: a fact whose subject the goal names (or the user) and whose object is
  in the goal stopped being a current belief (superseded by another value, or its
  valid time ended) and no current fact restates it: "Visit Dana in Berlin" after
  "Dana lives in Munich now".

Memories the user accepted (``Goal.accepted``: they resumed the goal knowing them)
never count. Everything here is pure: same texts, same answer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from ucma.conflicts.statements import marks_change, retired_words
from ucma.paradigms.goal_records import GoalConflict
from ucma.paradigms.goals import GENERIC, content_words, goal_names, goal_words, stem
from ucma.people import known_people
from ucma.providers.rule_facts import GENERIC_SPEAKERS
from ucma.types import Fact

__all__ = ["Statement", "goal_conflicts"]

WINDOW = 4
"""Content words read on each side of an ending cue for what ended."""

_ENDED = re.compile(
    r"\b(?:cancel(?:l?ed)|called\s+off|scrapped|abandoned|shelved|axed|discontinued|"
    r"shut\s+down|closed\s+down|put\s+on\s+hold|on\s+hold|postponed\s+indefinitely|"
    r"no\s+longer\s+(?:happening|needed|going\s+ahead|on)|not\s+happening|"
    r"won'?t\s+happen|(?:is|are|was|were)\s+off\b|sold\s+out|fully\s+booked|"
    r"fell\s+through|dropped)\b",
    re.IGNORECASE,
)
_NOT_BEFORE = re.compile(r"\b(?:not|n't|never|wasn't|isn't|hasn't|weren't)\s*$", re.IGNORECASE)
_REVIVED = re.compile(
    r"\b(?:back\s+on|on\s+again|going\s+ahead|goes\s+ahead|rescheduled|"
    r"reinstated|resumed|revived|restarted|reopened|un-?cancell?ed|after\s+all|"
    r"happening\s+(?:again|after\s+all|now)|moved\s+back|back\s+to)\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(
    r"[,;:]|\b(?:because|since|due\s+to|so|but|and|as|after|before|while|although)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# Any cue a sentence needs to end, revive or retire something: the cheap first test.
_CUED = re.compile(
    rf"{_ENDED.pattern}|{_REVIVED.pattern}|\b(?:from|goodbye|bye|farewell|no\s+longer|gave\s+up|"
    r"left|quit|ditched|dropped|not|instead|rather|more\s+than|replac(?:ed|ing))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Statement:
    """An observed statement: its memory id, text and when it was said."""

    id: str
    text: str
    timestamp: float


def _about(sentence: str, start: int, end: int) -> set[str]:
    """The content words around a cue at [start, end): up to ``WINDOW`` before it
    and after it, within its clause."""
    before = sentence[:start]
    cut = list(_CLAUSE_END.finditer(before))
    if cut:
        before = before[cut[-1].end() :]
    after = sentence[end:]
    stop = _CLAUSE_END.search(after)
    if stop:
        after = after[: stop.start()]
    return {
        w
        for w in content_words(before)[-WINDOW:] + content_words(after)[:WINDOW]
        if w not in GENERIC
    }


def _matches(about: set[str], words: frozenset[str]) -> bool:
    shared = about & words
    return bool(shared) and (len(shared) >= 2 or 2 * len(shared) >= len(about))


@functools.lru_cache(maxsize=8192)
def _cued_sentences(text: str) -> tuple[tuple[str, bool], ...]:
    """The sentences of ``text``, each with whether it has any cue the rules read
    (kept: every goal of a scope reads the same statements)."""
    sentences = (s.strip() for s in _SENTENCE.split(text))
    return tuple((s, _CUED.search(s) is not None) for s in sentences if s)


def _ended_or_revived(sentence: str, words: frozenset[str]) -> str | None:
    """``ended`` or ``revived`` when the sentence says so of what ``words`` are about."""
    for match in _REVIVED.finditer(sentence):
        if _matches(_about(sentence, match.start(), match.end()), words):
            return "revived"
    for match in _ENDED.finditer(sentence):
        about = _about(sentence, match.start(), match.end())
        if not _matches(about, words):
            continue
        return "revived" if _NOT_BEFORE.search(sentence[: match.start()]) else "ended"
    return None


def _subject_agrees(sentence: str, values: Collection[str], names: frozenset[str]) -> bool:
    """Whether the people a statement names are the goal's (the retired values, which
    may look like names, aside); a statement naming nobody is the speaker's own."""
    for person in known_people([sentence]):
        parts = {stem(p.lower()) for p in person.split()}
        if parts & set(values):
            continue
        if not parts <= names:
            return False
    return True


def _statement_conflicts(
    goal: str, statements: Sequence[Statement], accepted: Collection[str]
) -> list[GoalConflict]:
    words = goal_words(goal)
    names = goal_names(goal)
    if not words:
        return []
    ends_itself = _ENDED.search(goal) is not None or re.search(
        r"\b(?:cancel|quit|stop|end|close|drop|leave)\b", goal, re.IGNORECASE
    )
    ended: GoalConflict | None = None
    retired: dict[str, GoalConflict] = {}
    for statement in sorted(statements, key=lambda s: (s.timestamp, s.id)):
        if statement.id in accepted:
            continue
        for sentence, cued in _cued_sentences(statement.text):
            if not cued and not (retired and marks_change(sentence)):
                continue  # says nothing ends, returns, is over or changed
            verdict = None if ends_itself or not cued else _ended_or_revived(sentence, words)
            if verdict == "ended":
                ended = GoalConflict(
                    statement.id, sentence, "ended", f"memory says this ended: {sentence!r}"
                )
            elif verdict == "revived":
                ended = None
            values = [v for v in (stem(v) for v in retired_words(sentence)) if v in words]
            if values and _subject_agrees(sentence, values, names):
                for value in values:
                    retired[value] = GoalConflict(
                        statement.id,
                        sentence,
                        "retired",
                        f"memory says {value!r} no longer holds: {sentence!r}",
                    )
                continue
            restated = set(content_words(sentence)) & retired.keys() if retired else set()
            if (
                restated
                and (marks_change(sentence) or _REVIVED.search(sentence))
                and _subject_agrees(sentence, restated, names)
            ):
                for value in restated:
                    retired.pop(value)
    found = [ended] if ended is not None else []
    return found + list(retired.values())


def _fact_conflicts(
    goal: str,
    facts: Iterable[Fact],
    now: float,
    speakers: Collection[str],
    accepted: Collection[str],
) -> list[GoalConflict]:
    words = goal_words(goal) | goal_names(goal)
    facts = list(facts)

    def key(f: Fact) -> tuple[str, str, str]:
        return (f.subject.lower(), f.predicate.lower(), f.object.lower())

    def current(f: Fact) -> bool:
        return f.is_current and (f.valid_until is None or f.valid_until > now)

    held = {key(f) for f in facts if current(f)}
    found: list[GoalConflict] = []
    for fact in facts:
        if current(fact) or key(fact) in held:
            continue
        subject = fact.subject.lower()
        about_user = subject in speakers or subject in GENERIC_SPEAKERS
        if not about_user and not set(content_words(fact.subject)) <= words:
            continue
        values = set(content_words(fact.object)) - GENERIC
        if not values or 2 * len(values & words) < len(values) or not values & words:
            continue
        now_held = [
            f
            for f in facts
            if current(f) and (f.subject.lower(), f.predicate.lower()) == key(fact)[:2]
        ]
        evidence = now_held[0] if now_held else fact
        if evidence.id in accepted or fact.id in accepted:
            continue
        detail = (
            f"memory says {fact.subject} {fact.predicate} {now_held[0].object} now, "
            f"not {fact.object}"
            if now_held
            else f"memory says {fact.subject} {fact.predicate} {fact.object} no longer holds"
        )
        found.append(GoalConflict(evidence.id, evidence.content, "changed", detail))
    return found


def goal_conflicts(
    goal: str,
    statements: Sequence[Statement],
    facts: Iterable[Fact],
    *,
    now: float,
    speakers: Collection[str] = ("user",),
    accepted: Collection[str] = (),
) -> list[GoalConflict]:
    """The memories that contradict ``goal`` (its description, with its parents'),
    each once, by the rules of the module docstring. ``statements`` are observed
    statements that share words with it, ``facts`` the facts about the people and
    things it names and about the user (``speakers``: the names the user's facts
    take), every version; ``now`` decides which facts' valid time ended."""
    found = _statement_conflicts(goal, statements, accepted)
    found += _fact_conflicts(goal, facts, now, {s.lower() for s in speakers}, accepted)
    unique: dict[str, GoalConflict] = {}
    for conflict in found:
        unique.setdefault(conflict.memory_id, conflict)
    return list(unique.values())
