"""Whether a later statement replaces an older one, read from the two texts alone.

The claims the rule extractor reads cover common shapes ("X works at Y"); people
say changes in many more ("Greta went from 10 km to 5 km on daily runs", "Just
signed a lease in Lisbon, goodbye Valencia", "Aisha's cat goes by Mochi these
days"). This module decides, without a model, whether a new statement revises
an older one of the same speaker about the same subject, by three kinds of
evidence, strongest first:

- ``retired``: the new statement says an old value is over ("from X to Y",
  "goodbye X", "no longer X", "gave up on X", "left Acme", "sold the X", ", not
  X", "more than X", "instead of X"), and X is in the older statement;
- ``reframed``: the two say the same thing word for word except one short value
  ("I'm learning Dutch on my commute" / "I'm learning Portuguese on my commute"),
  the older one describes a state rather than a dated event, and some time
  passed between them (two values stated together are a list, not a change);
- ``cued``: the new statement marks a change ("now", "switched", "these days",
  "update", "got a new" ...), is close in meaning to the older one and repeats
  a good share of its words (``SHARED_SHARE``), or is very close
  (``CLOSE_COSINE``), or, when both name the person they are about, is close
  with that name put as a pronoun on both sides (``UNNAMED_COSINE``: "My
  coworker Greta switched to a Moto Edge 40" / "Greta uses an iPhone 13"); only
  the closest such statement (and those restating its value) is replaced, and
  two different older values about as close make the change ambiguous.

Subjects must agree: the people a statement names (after a relation word, "my
coworker Omar"; as a full name, "Chris Tanaka"; or a known name at the start,
"Bruno uses ...") must be the same set, and a statement that names nobody is
about its speaker (the user's and the assistant's turns both describe the
user). A statement that only adds ("too", "also", "another") replaces nothing.

Only sentences that state something count: questions, exclamations, requests
and plans ("Remind me to ...", "I'll ..."), and greetings that address a
speaker ("Thanks, Gina.") neither replace nor are replaced, and neither do long
explanations (over ``MAX_WORDS`` content words); what a named speaker says in
the second person is about the one they talk to and replaces nothing of theirs.

``states_lasting`` reads the same shapes the other way: whether a statement says
how someone is (a lasting attribute, kept through sleep) rather than what
happened.

Everything here is pure: same texts, same answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from ucma.people import WORD_NAME, known_people, subjects_in, without_relations
from ucma.providers.rule_facts import is_role
from ucma.sentences import sentences

__all__ = [
    "Candidate",
    "Replacement",
    "echoes",
    "is_event",
    "marks_change",
    "names_value",
    "other_values",
    "replacements",
    "says_only",
    "retired_words",
    "same_frame",
    "shared_people",
    "short_statement",
    "stated_sentences",
    "states_lasting",
    "states_one_value",
    "without_value",
]

CUED_COSINE = 0.40
"""How close in meaning a cued change must be to the older statement it replaces."""

SHARED_SHARE = 0.25
"""The share of the older statement's words (beyond the subject's name) a cued change
must repeat to be about the same attribute ("Aisha's cat goes by Mochi" / "Aisha has a
cat called Bramble": cat, of cat, called, Bramble)."""

CLOSE_COSINE = 0.70
"""Close enough that a cued change to a short statement (``CLOSE_WORDS`` content words at
most) needs no shared attribute word ("Leila is divorced" / "Leila is engaged now")."""

CLOSE_WORDS = 8

UNNAMED_COSINE = 0.35
"""Close enough, compared without the name of the person both statements are about,
for a cued change to be about the same attribute whatever words it uses (on the
everyday set's changes: 82% of the statements a change replaces, 4% of the same
person's other statements; 0.40: 75% and 2%)."""

PART_MARGIN = 0.10
"""How much closer one sentence of an older message must be than its others for a
change to be about that sentence alone."""

RETIRED_COSINE = 0.20
"""The floor for a change that names the old value it retires."""

AMBIGUITY_MARGIN = 0.05
"""Two older values whose cosines to a cued change differ by less are equally plausible."""

MAX_WORDS = 40
"""A statement of more content words (on either side) is a document or an explanation,
not a statement of one value: it neither replaces nor is replaced."""

REFRAME_GAP = 6 * 3600.0
"""Seconds between two same-frame statements before the later is a change, not a list."""

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_TOKEN = re.compile(r"[^\W_]+")
_UNLABEL = re.compile(r"^(?:also|and|plus|oh|btw)\b[,:]?\s+", re.IGNORECASE)
# A hedge in front says how sure, not what: "As far as I know Mateo is divorced."
_HEDGE = re.compile(
    r"^(?:as\s+far\s+as\s+i\s+know|i\s+think|i\s+believe|apparently|it\s+seems)\b,?\s+",
    re.IGNORECASE,
)
# A clause joined by "and"/"but" that says something of its own ("... and works at Acme").
_CLAUSE = re.compile(r",?\s+(?:and|but)\s+(?=(?:I|[Hh]e|[Ss]he|[Tt]hey|[Ww]e|[Mm]y|[a-z]{3,}s)\b)")
_ADDITIVE = re.compile(r"\b(?:too|also|as\s+well|in\s+addition|another|both)\b", re.IGNORECASE)
_CUE = re.compile(
    r"\b(?:(?<!right\s)now|no\s+longer|any\s*more|these\s+days|nowadays|as\s+of|switch(?:ed|ing)?|"
    r"moved|moving|relocated|changed|instead|from\s+now\s+on|update[ds]?|not\s+any\s+longer|"
    r"goes\s+by|got\s+an?\s+new|new\s+favou?rite)\b",
    re.IGNORECASE,
)
# An old value the new statement says is over: the value is the words after the cue.
_RETIRING = re.compile(
    r"\b(?:from\s+(?P<from>[^,.;!?]+?)\s+to\b|goodbye|bye(?:\s+bye)?|farewell|"
    r"no\s+longer(?:\s+(?:at|in|with|into|on|doing|using))?|gave\s+up(?:\s+on)?|"
    r"left(?=\s+(?-i:[A-Z]))|quit|ditched|dropped|sold|got\s+rid\s+of|gave\s+away|traded\s+in|"
    r"(?<=,\s)not|instead\s+of|rather\s+than|more\s+than|replac(?:ed|ing))\s+(?P<value>[^,.;!?]+)",
    re.IGNORECASE,
)
_EVENT = re.compile(
    r"\b(?:yesterday|today|tonight|this\s+(?:morning|afternoon|evening|weekend)|ago|"
    r"last\s+(?:night|week|weekend|month|year|time|\w+day)|went|was|were|"
    r"did|had|visited|saw|met|bought|made|took|finished|tried|spent|came|left|got|swam|ran|"
    r"ate|drank|rode|drove|flew|wrote|sat|spoke|won|lost|told|said|found|felt|slept|gave|"
    r"began|broke|chose|caught|fell|forgot|heard|paid|sang|sold|sent|stood|taught|threw|"
    r"woke|wore|"
    r"(?:i|we|he|she|they)\s+(?:just\s+)?\w+(?<!e)ed)\b",
    re.IGNORECASE,
)
_FUNCTION = frozenset(
    str.split(
        """
    a an the i me my mine we us our you your he him his she her they them their it its
    is am are was were be been being do does did have has had will would can could should
    to of in on at for with from by about as into onto than then so and or but not no
    this that these those there here what which who whom when where why how all any some
    now longer anymore more days nowadays lately instead switched switch switching moved
    move changed change started start stopped stop new again just still currently really
    very also too every each today yesterday tomorrow week month year fyi update updated
    quick btw recently got goes by went gave up i'm i've i'll you're it's okay ok s
    best old former close
    """
    )
)

# Words between a retiring cue and its value: "gave up on the", "quit being a".
_LEADING = frozenset(
    str.split(
        """
    the a an my his her their our your on at in with being doing
    """
    )
)
# Words after "more than" / "not" that name no value: "more than anything", "not sure".
_VAGUE = frozenset(
    [
        "anything",
        "everything",
        "anyone",
        "ever",
        "usual",
        "before",
        "sure",
        "much",
        "many",
        "enough",
        "bad",
        "great",
        "good",
        "really",
        "quite",
        "yet",
    ]
)
# Requests and plans say what to do, not how things are: "Remind me to book the
# dentist this weekend" does not replace "Remind me to renew my passport".
_REQUEST = re.compile(
    r"^(?:(?:sure|ok(?:ay)?|noted|yes|great)\b[,.!]?\s*)?(?:please\s+)?"
    r"(?:remind|tell|ask|book|call|add|remember|schedule|set|send|let|don't\s+let|"
    r"i'll|i\s+will|i'm\s+going\s+to|i\s+think\s+i'll|maybe|we'll|can\s+you|could\s+you)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """An older statement: id, text, speaker, when it happened, cosine to the new one."""

    id: str
    text: str
    source: str
    timestamp: float
    cosine: float
    unnamed_cosine: float | None = None
    """The cosine with the person both name put as a pronoun in both (None: not compared);
    for an older message of several sentences, that of its closest sentence."""
    parts: tuple[tuple[str, float], ...] = ()
    """The older message's sentences that state something, each with its cosine to the
    new statement read the same way (empty: not compared sentence by sentence)."""

    @property
    def closeness(self) -> float:
        """How close in meaning: without the shared name when known."""
        return self.cosine if self.unnamed_cosine is None else self.unnamed_cosine

    def closest_part(self) -> str | None:
        """The sentence of a message of several that the new statement is closest to,
        when it is clearly closer than the others (``PART_MARGIN``)."""
        if len(self.parts) < 2:
            return None
        ranked = sorted(self.parts, key=lambda part: -part[1])
        return ranked[0][0] if ranked[0][1] - ranked[1][1] >= PART_MARGIN else None


@dataclass(frozen=True, slots=True)
class Replacement:
    """An older statement the new one replaces, why (``retired``, ``reframed``,
    ``cued``), and the part of it that stays current (its other sentences,
    verbatim; None when the change concerns all of it)."""

    candidate: Candidate
    evidence: str
    rest: str | None = None


def stated_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that state something (no questions, requests,
    plans or greetings)."""
    return _said(text, set())


def states_one_value(text: str) -> bool:
    """Whether ``text`` states how someone is in one short simple sentence (at
    most ``CLOSE_WORDS`` content words; no event, request or question)."""
    return _one_value_stated(_said(text, set()))


def other_values(text: str, other: str, query: str, people: Iterable[str] = ()) -> bool:
    """Whether two statements give different values for what ``query`` asks: beyond
    the query's words, the people named and the relations they are named by
    ("my teammate Bruno"), they share no content word ("My teammate Bruno is really
    into afrobeat" / "Bruno listens to jazz nonstop"; not "Zara's roommate majored in
    statistics" / "Zara's roommate took a night class in statistics")."""
    known = _words(query) | _words(" ".join(people))
    mine = _words(without_relations(text)) - known
    theirs = _words(without_relations(other)) - known
    return bool(mine) and bool(theirs) and not mine & theirs


def without_value(text: str, value: str) -> str | None:
    """``text`` without its sentences that name ``value`` (verbatim, lead-in labels
    such as "Also:" dropped), or None when every sentence or none names it."""
    parts = sentences(text)
    pattern = _value_pattern(value)
    kept = [s for s in parts if not pattern.search(s)]
    if not kept or len(kept) == len(parts):
        return None
    rest = " ".join(_UNLABEL.sub("", s, count=1) for s in kept)
    return rest[:1].upper() + rest[1:]


def says_only(text: str, values: Iterable[str]) -> bool:
    """Whether ``text`` says nothing but ``values``: no sentence of it that says
    something (three content words or more: "Quick update." says nothing) names
    none of them (verbatim, any case), while one does. A text naming none of them
    as written (a value the extractor reworded) is taken to say only them."""
    patterns = [_value_pattern(v) for v in values]
    said = [s for s in sentences(text) if len(_words(s)) >= 3]
    naming = [any(p.search(sentence) for p in patterns) for sentence in said]
    return all(naming) or not any(naming)


def names_value(text: str, value: str) -> bool:
    """Whether ``text`` names ``value`` as written (any case, whole words)."""
    return _value_pattern(value).search(text) is not None


def _value_pattern(value: str) -> re.Pattern[str]:
    """``value`` as written, in any case, as a whole word or words."""
    return re.compile(rf"(?<!\w){re.escape(value)}(?!\w)", re.IGNORECASE)


def marks_change(text: str) -> bool:
    """Whether ``text`` marks something as changed ("now", "switched", "these days" ...)."""
    return _CUE.search(text) is not None


@lru_cache(maxsize=16384)
def short_statement(text: str) -> bool:
    """Whether ``text`` states something in at most ``MAX_WORDS`` content words:
    a statement of one value, not a document or an explanation."""
    said = _said(text, set())
    return bool(said) and len(_words(" ".join(said))) <= MAX_WORDS


def shared_people(text: str, other: str, people: Iterable[str] = ()) -> list[str]:
    """The people both texts name (read from them, or among ``people``)."""
    names = known_people([text, other]) | set(people)
    return sorted(n for n in names if _names(text, n) and _names(other, n))


def _names(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w'’]){re.escape(name)}(?!\w)", text) is not None


@lru_cache(maxsize=16384)
def _words(text: str) -> frozenset[str]:
    """Content words, folded and lightly stemmed (trailing "s" of longer words).
    Kept for the texts seen lately: each new statement is compared with the same
    recent ones, sentence by sentence."""
    return frozenset(_stem(w) for w in _TOKEN.findall(text.lower()) if w not in _FUNCTION)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def retired_words(text: str) -> list[str]:
    """The values ``text`` says are over, each as its first content word."""
    values = []
    for match in _RETIRING.finditer(text):
        value = match.group("from") or match.group("value")
        words = _TOKEN.findall(value.lower())
        if match.group().lower().startswith("no") and len(words) > 1 and words[0] not in _LEADING:
            words.pop(0)  # "no longer likes coffee": the verb, then the value
        while words and words[0] in _LEADING:
            words.pop(0)
        # "would quit and you're ...": no value follows the cue.
        if words and words[0] not in _FUNCTION and words[0] not in _VAGUE:
            values.append(_stem(words[0]))
    return values


def _tokens(text: str) -> list[str]:
    """The words of ``text`` for frame comparison: a named relation reads as the
    name ("my teammate Felix runs" / "Felix runs"), lead-in labels are dropped."""
    text = _HEDGE.sub("", _UNLABEL.sub("", text.strip(), count=1), count=1)
    words = _WORD.findall(without_relations(text).lower())
    return [w for w in words if w not in {"fyi", "update", "quick", "btw"}]


def same_frame(old: str, new: str, subject: AbstractSet[str] = frozenset()) -> bool:
    """Whether two sentences say the same thing but for one short value: one
    differing run of at most four words on each side, after a word that says
    what of the subject (words in ``subject`` do not count: "Olivia's sister
    works in Groningen" / "... rents a flat in Groningen" changes the verb, not
    a value), the rest (at least three words, and most of each sentence)
    shared in order. A value may also come first when at least two words after it
    say what it is of ("Thursday evenings are for climbing" / "Tuesday evenings are
    for climbing")."""
    a, b = _tokens(old), _tokens(new)
    if min(len(a), len(b)) < 4:
        return False
    matcher = SequenceMatcher(a=a, b=b, autojunk=False)
    shared = sum(block.size for block in matcher.get_matching_blocks())
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if len(changed) != 1 or changed[0][0] != "replace":
        return False
    _, i1, i2, j1, j2 = changed[0]
    return (
        shared >= 3
        and i2 - i1 <= 4
        and j2 - j1 <= 4
        and shared / max(len(a), len(b)) >= 0.6
        and bool(_words(" ".join(a[i1:i2])))
        and bool(_words(" ".join(b[j1:j2])))
        and (
            bool(_words(" ".join(a[:i1])) - subject)
            or (i1 == 0 and len(_words(" ".join(a[i2:])) - subject) >= 2)
        )
    )


def _side(source: str) -> str:
    """Whose turns describe the same world: the user's and the assistant's both
    describe the user; a named speaker speaks for themselves."""
    return "user" if is_role(source) else source.strip().lower()


def _split(
    old: str, new_words: AbstractSet[str], retired: Sequence[str], subject: AbstractSet[str]
) -> tuple[str, str | None] | None:
    """The part of ``old`` the new statement is about, and the rest that stays
    current (None: nothing stays). A part the new statement says nothing about
    has two content words beyond the subject's name, none in common with it and
    no retired value. Sentences split apart ("... Also: Sofia can't have
    sesame."), and the rest is kept verbatim; a sentence whose clauses split
    that way ("Dana lives in Boston and works at Acme") cannot be cut: None."""

    def untouched(part: str) -> bool:
        # "my landlord Bruno" in both says who, not what: the relation word is no overlap.
        words = _words(without_relations(part)) - subject
        return len(words) >= 2 and not (words & new_words) and not any(v in words for v in retired)

    parts = sentences(old)
    kept = [s for s in parts if untouched(s)]
    about = [s for s in parts if s not in kept]
    if not about:
        return None
    if any(untouched(c) for s in about for c in _CLAUSE.split(s) if c.strip()):
        return None
    rest = " ".join(_UNLABEL.sub("", s, count=1) for s in kept)
    return " ".join(about), (rest[:1].upper() + rest[1:]) if rest else None


def _with_unsaid(text: str, stated: Sequence[str], rest: str | None) -> str | None:
    """What stays current of an older message: its sentences that state nothing
    a change can replace (requests, questions: "Don't let me forget Mateo's
    birthday, October 23."), verbatim, then ``rest``."""
    unsaid = [s for s in sentences(text) if s not in stated and len(_words(s)) >= 2]
    kept = " ".join([*unsaid, rest] if rest else unsaid)
    return kept or None


def _said(text: str, addressed: AbstractSet[str]) -> list[str]:
    """The sentences of ``text`` that state something: not questions or
    exclamations ("That bowl is gorgeous!"), not requests or plans ("Remind me
    to ...", "I'll ..."), not greetings or thanks that only address someone
    ("Thanks, Gina.")."""
    return [
        s
        for s in sentences(text)
        if not s.rstrip().endswith(("?", "!"))
        and not _REQUEST.search(s)
        and len(_words(s) - addressed) >= 2
    ]


def only_requests(text: str) -> bool:
    """Whether every sentence of ``text`` asks for something to be done or says what
    its speaker will do ("Remind me to pay the electricity bill this weekend.", "Can
    you remind me to call the plumber tomorrow?", "I think I'll book the dentist
    after dinner."): it says nothing of how anyone is."""
    parts = sentences(text)
    return bool(parts) and all(_REQUEST.search(s) for s in parts)


def only_questions(text: str) -> bool:
    """Whether every sentence of ``text`` is a question."""
    parts = sentences(text)
    return bool(parts) and all(s.rstrip().endswith("?") for s in parts)


_SECOND_PERSON = re.compile(r"\b(?:you|you're|you've|your|yours)\b", re.IGNORECASE)
# The speaker as subject or owner, or what something is for them ("Home for me is
# Tucson"); not "thanks for helping me" or "sounds good to me".
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|i've|my|mine|we|we're|our)\b"
    r"|\b(?:for|to) me\b.*\b(?:is|are)\b|\b(?:is|are)\b.*\b(?:for|to) me\b",
    re.IGNORECASE,
)
# Being born is told as an event and is how someone is: a birthday, a birthplace.
_BORN = re.compile(r"\bborn\b", re.IGNORECASE)
# Someone by name, then what holds of them: "Sofia can't be near ...", "Bruno eats ...".
_NAMED_SUBJECT = re.compile(
    rf"^(?:[\w ]{{1,24}}:\s+)?{WORD_NAME}(?:\s+{WORD_NAME})?(?:['’]s\s+[a-z]+)?\s+"
    r"(?:is|isn't|has|hasn't|can|can't|cannot|doesn't|does|won't|always|never|only|[a-z]+s)\b"
)


def states_lasting(text: str, people: Iterable[str] = ()) -> bool:
    """Whether ``text`` says how someone is rather than what happened: a
    sentence that is no question, request or plan and no dated event, about the
    speaker ("My usual run is 5 km", "Home for me is Tucson") or a person it
    names ("Sofia is allergic to bee stings"; ``people`` are names known besides
    those the text shows). A sentence that marks a change states the new value,
    however it tells what happened ("Tariq sold the Volvo, he gets around on an
    e-bike these days"), and being born is a birthday or a birthplace ("I was
    born on August 17")."""
    return _states_lasting(text, frozenset(people))


@lru_cache(maxsize=16384)
def _states_lasting(text: str, people: frozenset[str]) -> bool:
    names = known_people([text]) | people
    return any(
        (marks_change(sentence) or not is_event(sentence) or _BORN.search(sentence) is not None)
        and (
            _FIRST_PERSON.search(sentence) is not None
            or _NAMED_SUBJECT.search(sentence) is not None
            or bool(subjects_in(sentence, names))
        )
        for sentence in _said(text, set())
    )


def is_event(text: str) -> bool:
    """Whether ``text`` tells of something that happened (a dated or past event)."""
    return _EVENT.search(text) is not None


def replacements(
    text: str,
    source: str,
    timestamp: float,
    candidates: Sequence[Candidate],
    people: Iterable[str] = (),
) -> tuple[list[Replacement], list[Candidate]]:
    """What the new statement ``text`` replaces among ``candidates`` (older
    statements), and the older statements it might equally replace when that is
    ambiguous (then nothing cued is replaced and the caller asks the user).

    ``people`` are names known for people besides those the texts show."""
    if _ADDITIVE.search(text):
        return [], []
    names = known_people([text, *(c.text for c in candidates)]) | set(people)
    # Speakers are addressed by name ("Thanks, Gina!"); a person is no value.
    addressed = _words(" ".join({source, *(c.source for c in candidates)}))
    people_words = addressed | _words(" ".join(names))
    new_sentences = _said(text, addressed)
    if _side(source) != "user":
        # A named speaker's "you're helping others now" is about the one they
        # talk to, whose statements are not theirs to replace.
        new_sentences = [s for s in new_sentences if not _SECOND_PERSON.search(s)]
    if not new_sentences:
        return [], []
    said = " ".join(new_sentences)
    if len(_words(said)) > MAX_WORDS:
        return [], []
    subject = subjects_in(said, names)
    name_words = _words(" ".join(subject))
    mine = _words(said)
    retired = [v for v in retired_words(said) if v not in people_words]
    cued_words = _words(without_relations(" ".join(s for s in new_sentences if marks_change(s))))
    strong: list[Replacement] = []
    weak: list[Candidate] = []
    rests: dict[str, str | None] = {}
    for old in candidates:
        if old.timestamp > timestamp or _side(old.source) != _side(source):
            continue
        if subjects_in(old.text, names) != subject:
            continue
        stated = _said(old.text, addressed)
        split = _split(" ".join(stated), mine, retired, name_words)
        # Compared without the people both name; the speaker's statements name no
        # one to leave out, so their cosine is that.
        closeness = old.closeness if old.unnamed_cosine is not None or not subject else None
        if split is None and cued_words and closeness is not None:
            split = _closest_split(old, stated, closeness)
        if split is None:
            continue
        about, rest = split
        rests[old.id] = _with_unsaid(old.text, stated, rest)
        theirs = _words(about)
        if len(theirs) > MAX_WORDS:
            continue
        if old.cosine >= RETIRED_COSINE and any(value in theirs for value in retired):
            strong.append(Replacement(old, "retired", rests[old.id]))
            continue
        if not (theirs - mine) or not (mine - theirs):
            continue  # one says nothing the other does not: a restatement, not a change
        if (
            timestamp - old.timestamp >= REFRAME_GAP
            and not is_event(about)
            and any(same_frame(o, n, name_words) for o in sentences(about) for n in new_sentences)
        ):
            strong.append(Replacement(old, "reframed", rests[old.id]))
            continue
        # The attribute: a good share of what the older statement is about (the
        # relation a person is named by, "my friend Tariq", says who, not what).
        what = _words(without_relations(about)) - name_words
        attribute = bool(what) and len(cued_words & what) >= SHARED_SHARE * len(what)
        close = old.cosine >= CLOSE_COSINE and len(theirs - name_words) <= CLOSE_WORDS
        # Close in meaning without the name; for the speaker (no name to leave
        # out), only between two statements of one short value each.
        # An event told ("Had lunch with Tariq near the pier") stays what happened.
        unnamed = (
            closeness is not None
            and closeness >= UNNAMED_COSINE
            and (marks_change(about) or not is_event(about))
            and (
                bool(subject)
                or len(new_sentences) == 1
                and len(mine) <= CLOSE_WORDS
                and _one_value_stated([about])
            )
        )
        # A change that names the value it ends replaces only what holds that value.
        if (
            cued_words
            and not retired
            and (old.cosine >= CUED_COSINE and (attribute or close) or unnamed)
        ):
            weak.append(old)
    retiring = [r for r in strong if r.evidence == "retired"]
    if retiring:
        return strong, []
    if strong:
        chosen, rivals = _one_value([r.candidate for r in strong], mine, margin=1.0)
        return ([], chosen + rivals) if rivals else (strong, [])
    if not weak:
        return [], []
    chosen, rivals = _one_value(weak, mine, margin=AMBIGUITY_MARGIN)
    if rivals:
        return [], chosen + rivals
    return [Replacement(c, "cued", rests[c.id]) for c in chosen], []


def _one_value_stated(said: Sequence[str]) -> bool:
    """Whether ``said`` is one simple sentence stating how someone is (no event,
    request or question: see ``_said``) in at most ``CLOSE_WORDS`` content words."""
    if len(said) != 1 or len(sentences(said[0])) != 1:
        return False
    return _simple(said) and not is_event(said[0]) and len(_words(said[0])) <= CLOSE_WORDS


def _closest_split(
    old: Candidate, stated: Sequence[str], closeness: float
) -> tuple[str, str | None] | None:
    """The part of an older statement a change is about when no word of it says
    so: its one simple sentence, or the sentence of several that is clearly the
    closest, close enough (``closeness``, read without the people both name, at
    least ``UNNAMED_COSINE``); the other sentences stay current."""
    if closeness < UNNAMED_COSINE:
        return None
    if len(stated) == 1:
        return (stated[0], None) if _simple(stated) else None
    part = old.closest_part()
    if part is None or part not in stated or not _simple([part]):
        return None
    rest = " ".join(_UNLABEL.sub("", s, count=1) for s in stated if s != part)
    return part, (rest[:1].upper() + rest[1:]) if rest else None


def echoes(reply: str, old: str, new: str) -> bool:
    """Whether ``reply``, the assistant's turn right after ``old``, repeats the value
    ``new`` replaced in it: it names a content word of ``old`` that ``new`` does not
    say, none that only ``new`` says, and is no longer than a statement of one value
    ("I'll keep Thursday evenings free for your climbing" after "Thursday evenings
    are for climbing", which "As of January, climbing is on Friday evenings"
    replaced)."""
    said, before = _words(new), _words(old)
    theirs = _words(reply)
    return (
        len(theirs) <= MAX_WORDS and bool(theirs & (before - said)) and not theirs & (said - before)
    )


def _simple(said: Sequence[str]) -> bool:
    """One sentence of one clause ("Dana lives in Boston and works at Acme" is two)."""
    return len(said) == 1 and len(_CLAUSE.split(said[0])) == 1


def _one_value(
    found: Sequence[Candidate], mine: AbstractSet[str], margin: float
) -> tuple[list[Candidate], list[Candidate]]:
    """The closest older statement with those restating its value, and the ones
    holding another value within ``margin`` of its cosine (rivals: ambiguous)."""
    ranked = sorted(found, key=lambda c: -c.closeness)
    best = ranked[0]
    value = _words(best.text) - mine
    same = [c for c in ranked[1:] if (_words(c.text) - mine) & value]
    rivals = [c for c in ranked[1:] if c not in same and best.closeness - c.closeness < margin]
    return [best, *same], rivals
