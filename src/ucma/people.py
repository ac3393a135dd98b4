"""People a text names, recognised without a model.

A memory's text names people in a few common shapes: after a relation word
("my landlord Greta", "our neighbour Omar"), as a full name opening a sentence
("Chris Tanaka runs ..."), as a possessive opening a sentence ("Aisha's cat"),
or as a first name opening a sentence and doing something people do ("Bruno
uses ..."). Whom a statement is about (``subjects_in``) is then each known
person it names, or that person's named relation ("Yara Shah's brother"), or
the speaker's own unnamed relation ("my sister"): the subjects the statement
comparison in ``ucma.conflicts.statements`` matches. ``without_relations``
reads a named relation as the name, for rules that read a subject ("My sister
Priya is a nurse" -> "Priya is a nurse"); ``without_people`` puts a pronoun in
the place of given people, so that what two texts say about someone can be
compared without the name they share; ``speaks_to_listener`` tells a line
said about its listener ("Congrats on the deal, you're killing it!") from one
its speaker says about themself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ucma.sentences import sentences

__all__ = [
    "WORD_NAME",
    "about_someone_else",
    "asks_about_speaker",
    "asks_what_listener_said",
    "first_name_regex",
    "known_people",
    "named_relations",
    "related_name",
    "speaker_relations",
    "speaks_to_listener",
    "spoken_name",
    "subjects_in",
    "without_people",
    "without_relations",
]

_RELATION = (
    r"(?:sister|brother|sibling|mother|mom|mum|father|dad|parent|wife|husband|partner|fianc[ée]e?|"
    r"boyfriend|girlfriend|son|daughter|kid|child|aunt|uncle|cousin|niece|nephew|grand\w+|"
    r"in-law|friend|pal|buddy|colleague|co-?worker|teammate|boss|manager|mentor|mentee|"
    r"landlord|landlady|tenant|neighbou?r|flatmate|roommate|housemate|classmate|\w+mate|"
    r"doctor|dentist|therapist|trainer|coach|tutor|teacher|student|client|assistant|"
    r"intern|lead|supervisor|report|ex)"
)
_MODIFIERS = r"(?:(?:old|new|best|former|close|younger|older|little|big|elder|ex-)\s*)*"
_PERSON = r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?"
_AFTER_RELATION = re.compile(
    rf"\b(?:[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir)\s+{_MODIFIERS}{_RELATION}\s+(?P<name>{_PERSON})"
)
_LABEL = re.compile(r"^[\w ,]{1,24}:\s+")
# A capitalised word of Latin letters ("Tomás", "Zoë", "Émile"), as names are written.
WORD_NAME = r"[A-ZÀ-ÖØ-Þ][a-zß-öø-ÿ]+"
_FULL_NAME = re.compile(rf"^(?P<name>{WORD_NAME}\s+{WORD_NAME})(?=\s+[a-z]|['’]s\b)")
_POSSESSIVE_NAME = re.compile(r"\b(?P<name>[A-Z][\w’-]+\s+[A-Z][\w-]+)['’]s\b")
_POSSESSIVE_START = re.compile(rf"^(?P<name>{WORD_NAME})['’]s\s+[a-z]")
# A first name at the start, doing what people do ("Bruno uses ...", "Yusuf runs ...").
_NAME_START = re.compile(
    rf"^(?P<name>{WORD_NAME})\s+(?:uses|has|runs|works|lives|likes|loves|listens|plays|studies|"
    r"speaks|goes|got|switched|went|moved|relocated|joined|left|quit|prefers|hates|enjoys|"
    r"drives|owns|wants|needs|said|told|started|stopped|took|gave|renamed|sold|bought|gets|"
    r"no\s+longer)\b"
)
_FIRST_PERSON = re.compile(r"\b(?:i|i['’](?:m|ve|d|ll)|me|my|mine|myself)\b", re.IGNORECASE)
# The speaker as the one something holds of ("my" also introduces other people).
_SPEAKER = re.compile(r"\b(?:i|i['’](?:m|ve|d|ll)|me|myself)\b", re.IGNORECASE)
# A request to keep something in mind: its "me" is whom it is asked for, not whom it is
# about ("Don't let me forget my sister Priya's birthday", "Remind me about Omar's move").
_KEEP_IN_MIND = re.compile(
    r"\b(?:(?:don['’]?t|do\s+not)\s+let\s+me\s+forget|remind\s+me\s+(?:of|about)|"
    r"help\s+me\s+remember)\b",
    re.IGNORECASE,
)
# A name the line calls its listener by: at its start or after a greeting or an
# exclamation, before a comma or an exclamation mark ("Wow, John!", "Maria, since
# we talked"), or at the end of a clause after a comma ("Glad to hear it, Jon.").
_VOCATIVE = re.compile(
    r"(?:^|[.!?]\s+|\b(?:[Hh]ey|[Hh]i|[Hh]ello|[Ww]ow|[Tt]hanks|[Cc]ongrats|[Oo]h|[Aa]ww|[Yy]eah|"
    r"[Ss]orry|[Nn]ice one|[Gg]reat job|[Gg]ood job|[Ww]ell done)[,!]?\s+)[A-Z][a-z]+(?:\s*[,!])"
    r"|,\s+[A-Z][a-z]+[.!?]"
)
_LISTENER_FIRST = 1
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|you['’](?:re|ve|d|ll))\b", re.IGNORECASE)
# "you" as the one who did it, in the past ("did you", "you recommended", "your
# advice"), or the conversation as a whole, which both sides said ("a summary of
# ...", "what we discussed", "throughout our conversations").
_LISTENER_SAID = re.compile(
    r"\bsummar(?:y|ies|ise|ize|ising|izing)\b|\brecap\b|"
    r"\bwe(?:['’]ve|\s+have)?\s+(?:discussed|covered|talked|went\s+over)\b|"
    r"\bour\s+(?:conversations?|discussions?|chats?|talks?)\b|"
    r"\b(?:did|have|had|were)\s+you\b|"
    r"\byou(?:['’]ve)?\s+(?:\w+ed|said|told|gave|wrote|showed|shown|taught|meant|thought|"
    r"brought|found|made|put|sent|went)\b|"
    r"\byour\s+(?:\w+\s+)?(?:advice|suggestions?|recommendations?|answers?|replies|reply|"
    r"responses?|explanations?|tips|ideas?|words)\b",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    str.split(
        """
    monday tuesday wednesday thursday friday saturday sunday january february march april
    may june july august september october november december i i'm i've i'll i'd the a an my
    our this that these those it it's quick big just okay ok got had lately nothing please
    update fyi btw as also what who where when why how that there here let he she
    everyone someone nobody today tomorrow yesterday which whose whom is are was were am
    be been do does did has have can could will would shall should might must if so
    """
    )
)


def known_people(texts: Iterable[str]) -> set[str]:
    """Names these texts use for people: after a relation word ("my landlord Greta"),
    full names ("Chris Tanaka runs"), a possessive at the start ("Aisha's cat")."""
    found: set[str] = set()
    for text in texts:
        found |= _people_in(text)
    return found


@lru_cache(maxsize=16384)
def _people_in(text: str) -> frozenset[str]:
    """``known_people`` of one text; kept per text, as recall reads the same
    memories' texts query after query."""
    found: set[str] = set()
    for sentence in sentences(text):
        sentence = _LABEL.sub("", sentence)
        for pattern in (
            _AFTER_RELATION,
            _FULL_NAME,
            _POSSESSIVE_NAME,
            _POSSESSIVE_START,
            _NAME_START,
        ):
            for match in pattern.finditer(sentence):
                name = re.sub(r"['’]s$", "", match.group("name"))
                if name.split()[0].lower() not in _NOT_NAMES:
                    found.add(name)
    return frozenset(found)


_MY_RELATION = re.compile(
    rf"\b(?:[Mm]y|[Oo]ur)\s+{_MODIFIERS}(?P<relation>{_RELATION})\b(?!\s+[A-Z])"
)


def subjects_in(text: str, people: Iterable[str]) -> frozenset[str]:
    """Whom ``text`` is about: each known person it names, or that person's
    relation when it names one ("Yara Shah's brother" is not Yara Shah), and the
    speaker's own unnamed relations ("my sister")."""
    found: set[str] = set()
    rest = without_relations(text)
    for name in sorted(people, key=len, reverse=True):
        pattern = re.compile(
            rf"(?<!\w){re.escape(name)}"
            rf"(?:['’]s\s+{_MODIFIERS}(?P<relation>{_RELATION})\b|['’]s)?(?!\w)"
        )
        for match in pattern.finditer(rest):
            relation = match.group("relation")
            found.add(f"{name}'s {relation.lower()}" if relation else name)
        rest = pattern.sub(" ", rest)
    for match in _MY_RELATION.finditer(rest):
        found.add(f"my {match.group('relation').lower()}")
    return frozenset(found)


def named_relations(text: str) -> dict[str, str]:
    """Each person ``text`` names after a relation word, with the words naming
    them: "My coworker Omar's dog ..." -> {"Omar": "my coworker Omar"}."""
    found = {}
    for match in _AFTER_RELATION.finditer(text):
        name = re.sub(r"['’]s$", "", match.group("name"))
        phrase = match.group(0)[: match.start("name") - match.start()] + name
        found[name] = phrase[:1].lower() + phrase[1:]
    return found


def speaker_relations(text: str) -> frozenset[str]:
    """The speaker's relations by which ``text`` names people, written as
    ``subjects_in`` writes an unnamed one: "My older sister Ines moved to Lisbon"
    -> {"my sister"}."""
    found = set()
    for name, phrase in named_relations(text).items():
        match = _MY_RELATION.search(phrase[: -len(name)])
        if match:
            found.add(f"my {match.group('relation').lower()}")
    return frozenset(found)


def related_name(name: str, relation: str) -> str:
    """How a person named after a relation is recorded: "Dana (my cousin)". It starts
    with the name, so a bare "Dana" can be taken for her, and keeps the relation,
    so she is not the "Dana Moreau" of another text."""
    return f"{name} ({relation})"


def spoken_name(subject: str) -> str:
    """The name as said of a recorded subject: "Dana" for "Dana (my cousin)"."""
    return subject.split(" (", 1)[0]


def without_relations(text: str) -> str:
    """``text`` with each named relation as the bare name: "My sister Priya is a
    nurse" -> "Priya is a nurse" (who the sentence is about, for rules that read
    a subject)."""
    return _AFTER_RELATION.sub(lambda m: m.group("name"), text)


def without_people(text: str, names: Iterable[str], cased: Iterable[str] = ()) -> str:
    """``text`` with each mention of ``names`` (case-insensitive, whole words;
    ``cased`` ones only as written and not followed by a surname), with the
    relation introducing it, as a pronoun: "My landlord Sofia's dog is called
    Clementine" -> "their dog is called Clementine", "What gives Sofia a rash?"
    -> "What gives they a rash?". ``text`` itself when it names none."""
    spelled = {n.strip(): re.escape(n.strip()) for n in names if n.strip()}
    spelled |= {n.strip(): first_name_regex(n.strip()) for n in cased if n.strip()}
    if not spelled:
        return text
    wanted = sorted(spelled, key=len, reverse=True)
    person = (
        rf"(?<!\w)(?:(?:my|our|his|her|their)\s+{_MODIFIERS}{_RELATION}\s+)?"
        rf"(?:{'|'.join(spelled[n] for n in wanted)})"
    )
    text = re.sub(rf"{person}['’]s(?!\w)", "their", text, flags=re.IGNORECASE)
    return re.sub(rf"{person}(?!\w)", "they", text, flags=re.IGNORECASE)


def first_name_regex(name: str) -> str:
    """The expression of a first name standing for a full one: as written (capitalised
    whatever flags surround it), and not the start of another full name ("Chris" is not
    "Chris Okafor")."""
    return rf"(?-i:{re.escape(name)}(?!\s+[A-Z]))"


@lru_cache(maxsize=16384)
def speaks_to_listener(text: str) -> bool:
    """Whether ``text`` is about the one it is said to rather than its speaker:
    it says "you" at least as often as "I" ("Wow, congrats on the deals! You're
    killing it!"), and at least once; or it calls the listener by name and asks
    them something, saying at most once what holds of the speaker ("The kids look
    so cute, Mel! I bet they bring lots of joy. How did they handle the
    accident?"), where "Maria, since we talked, it's been tough. My old area was
    hit by a flood" tells of its speaker."""
    second = len(_SECOND_PERSON.findall(text))
    first = len(_FIRST_PERSON.findall(text))
    if second > 0 and second >= first:
        return True
    return "?" in text and first <= _LISTENER_FIRST and _VOCATIVE.search(text) is not None


def asks_what_listener_said(text: str) -> bool:
    """Whether ``text`` asks what its listener said or did before ("How did you
    recommend ...", "What was your advice on ...", "Can you summarize how ..."),
    not for something new ("How would you suggest ...", "Can you recommend ...")."""
    return _LISTENER_SAID.search(text) is not None


def asks_about_speaker(text: str) -> bool:
    """Whether a question is about the one asking: it says "I", "me" or "my" and
    names nobody ("What do I usually have at the café?", not "What should I cook
    for my flatmate Sofia?"). A "my" that introduces someone asks about them
    ("Which city is my sister based in?"; but "What should I get my sister?")."""
    return _FIRST_PERSON.search(_MY_RELATION.sub("", text)) is not None and not known_people([text])


def about_someone_else(text: str, people: Iterable[str] = ()) -> bool:
    """Whether ``text`` is about a person it names rather than its speaker: it names
    someone and never speaks of the speaker as "I" or "me" ("My flatmate Sofia
    listens to baroque nonstop", not "I had lunch with Sofia"), but in a request to
    keep it in mind ("Don't let me forget my sister Priya's birthday"). ``people``
    are names known besides those the text shows as people: a sentence that starts
    with one is about them ("Tomás always orders a chai latte" when another line
    says "my teammate Tomás")."""
    named = bool(known_people([text])) or any(
        re.search(rf"(?:^|[.!?:]\s+){re.escape(name)}(?!\w)", text) for name in people
    )
    return named and _SPEAKER.search(_KEEP_IN_MIND.sub("", text)) is None
