"""How memories are put into words for answers and LLM context, without an LLM.

Three rules keep an answer honest when no model writes it:

- a fact is rendered only as a clean sentence: its predicate has a
  natural-language template (``fact_sentence``) and its subject and object
  are real words, not the leftovers of a bad extraction ("My", "is",
  "Acme as a"); otherwise the caller quotes the fact's source episode or
  skips the fact;
- any other memory is quoted whole and verbatim (``quote``), so no sentence
  is ever assembled from fragments;
- content-free memories ("ok thanks", "lol") and stale ones (a superseded or
  expired fact, a memory marked superseded or retracted, or past its
  ``valid_until``) are never presented as current (``is_content_free``,
  ``is_stale``).

Pure functions over records; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ucma.conflicts.predicates import FUNCTIONAL_SUFFIXES, normalise_predicate
from ucma.conflicts.reports import predicate_words
from ucma.types import Episode, Fact, FactStatus, Learning, MemoryRecord, Procedure

__all__ = [
    "fact_sentence",
    "is_content_free",
    "is_stale",
    "quote",
    "sentence",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Predicates read as a verb phrase: "{subject} {phrase} {object}".
_VERBS: Mapping[str, str] = {
    "lives_in": "lives in",
    "resides_in": "lives in",
    "located_in": "is located in",
    "lived_in": "lived in",
    "works_at": "works at",
    "works_for": "works for",
    "worked_at": "worked at",
    "reports_to": "reports to",
    "married_to": "is married to",
    "born_in": "was born in",
    "born_on": "was born on",
    "assigned_to": "is assigned to",
    "is": "is",
    "is_a": "is a",
    "likes": "likes",
    "dislikes": "dislikes",
    "loves": "loves",
    "hates": "hates",
    "enjoys": "enjoys",
    "prefers": "prefers",
    "visited": "visited",
    "knows": "knows",
    "friend_of": "is a friend of",
    "friends_with": "is friends with",
    "has": "has",
    "owns": "owns",
    "speaks": "speaks",
    "uses": "uses",
    "used": "used",
    "member_of": "is a member of",
    "belongs_to": "belongs to",
    "interested_in": "is interested in",
    "plays": "plays",
    "reads": "reads",
    "watched": "watched",
    "watches": "watches",
    "attended": "attended",
    "studied": "studied",
    "studied_at": "studied at",
    "allergic_to": "is allergic to",
    "child_of": "is a child of",
    "parent_of": "is a parent of",
    "sibling_of": "is a sibling of",
    "wrote": "wrote",
    "authored": "authored",
    "collaborated_with": "collaborated with",
    "met": "met",
    "ordered": "ordered",
    "bought": "bought",
    "purchased": "purchased",
}

# Predicates read as an attribute: "{subject}'s {noun} is {object}".
_NOUNS: frozenset[str] = _words(
    """
    status state stage phase delivery_pref delivery_preference delivery_day delivery_date
    employer job_title title role position manager city home_city hometown location address
    country current_city current_employer current_role email phone phone_number timezone age
    birthday birth_date date_of_birth spouse partner name full_name nickname capital ceo
    president owner price cost balance amount total due_date deadline priority severity
    assignee plan tier subscription preferred_language language payment_method
    shipping_method currency version height weight favorite_color favourite_color
    favorite_food favourite_food blood_type gender pronouns marital_status nationality
    salary rank score allergy hobby
    """
)
# Attribute-like names outside the list still read as nouns ("order_status",
# "meeting_time"): the suffixes that make a predicate functional (one value at a time).
_NOUN_SUFFIXES = FUNCTIONAL_SUFFIXES

# Words that cannot be a subject of their own (a pronoun left by an extractor).
_PRONOUNS = _words(
    "i me my mine you your yours he him his she her hers it its we us our ours they them "
    "their theirs this that these those there here who what which someone something"
)
# Words a clean object or subject never ends on: the object was cut mid-phrase.
_DANGLING = _words(
    "a an the to of in on at and or but is was are were be been being as for with by from "
    "my your his her our their its that this not"
)
# Words of chit-chat and acknowledgement: a text of only these says nothing to remember.
_FILLER = _words(
    """
    ok okay k kk okey alright right sure yes yeah yep yup no nope nah thanks thank thx ty
    you u much so very lol lmao rofl haha hahaha hehe heh hmm hm um uh oh ah wow cool nice
    great good fine awesome perfect sounds got it cheers bye goodbye hi hello hey yo welcome
    np problem please pls the a an and is that this me i will do see later soon gotcha
    """
)
# Sources that are not a person's name: first-person text from them is quoted as is.
_GENERIC_SOURCES = frozenset(
    {"user", "assistant", "system", "tool", "tool_result", "agent", "ai", "bot", "human"}
)
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def is_content_free(text: str) -> bool:
    """True when ``text`` holds no word beyond greetings, thanks and acknowledgement
    ("ok thanks", "lol", "sounds good!"): nothing in it can answer a question."""
    words = _WORD.findall(text.lower())
    return not any(w not in _FILLER for w in words)


def is_stale(record: MemoryRecord, now: float | None) -> bool:
    """True when ``record`` must not be presented as current at ``now`` (None:
    superseded or retracted only, no expiry check).

    A fact that is superseded (``is_current`` False), lost a conflict, or whose
    ``valid_until`` has passed; any memory whose metadata marks it superseded or
    retracted (``status``, ``superseded_by``, ``superseded_at``, ``retracted``),
    or whose metadata ``valid_until`` has passed.
    """
    if isinstance(record, Fact):
        if not record.is_current or record.status in (
            FactStatus.SUPERSEDED,
            FactStatus.CONFLICTED,
        ):
            return True
        if now is not None and record.valid_until is not None and record.valid_until <= now:
            return True
    meta = record.metadata or {}
    if str(meta.get("status", "")).lower() in ("superseded", "retracted"):
        return True
    if meta.get("superseded_by") or meta.get("retracted"):
        return True
    if meta.get("superseded_at") is not None:
        return True
    until = meta.get("valid_until")
    return (
        now is not None
        and isinstance(until, int | float)
        and not isinstance(until, bool)
        and until <= now
    )


def _clean_phrase(text: str, *, subject: bool) -> bool:
    words = _WORD.findall(text.lower())
    if not words or len(words) > 12:
        return False
    if words[-1] in _DANGLING or (len(words) == 1 and words[0] in _DANGLING):
        return False
    possessive = text.rstrip().endswith(("'s", "\u2019s"))
    return not subject or (len(words) <= 6 and words[0] not in _PRONOUNS and not possessive)


def _possessive(subject: str) -> str:
    return f"{subject}'" if subject.endswith("s") else f"{subject}'s"


def sentence(text: str) -> str:
    """``text`` stripped, with a capital first letter and a closing full stop."""
    body = " ".join(text.split())
    if not body:
        return body
    body = body[0].upper() + body[1:]
    return body if body.endswith((".", "?", "!", '"')) else f"{body}."


def fact_sentence(fact: Fact) -> str | None:
    """The fact as one clean sentence without the final stop, or None when it is
    not clean: an unknown predicate, or a subject or object that is not a phrase
    of its own (see the module docstring)."""
    subject, obj = " ".join(fact.subject.split()), " ".join(fact.object.split())
    if not _clean_phrase(subject, subject=True) or not _clean_phrase(obj, subject=False):
        return None
    name = normalise_predicate(fact.predicate)
    if name in _VERBS:
        return f"{subject} {_VERBS[name]} {obj}"
    if name in _NOUNS or name.endswith(_NOUN_SUFFIXES):
        return f"{_possessive(subject)} {predicate_words(name)} is {obj}"
    return None


def quote(record: MemoryRecord) -> str:
    """A memory's own text, whole, as a sentence. First-person text said by a named
    speaker is attributed (``Dana said: "My birthday is on March 14."``) so that
    "my" keeps its meaning; a lesson is its title and content, a procedure its
    name and description."""
    if isinstance(record, Learning):
        return sentence(f"{record.title}: {record.content}")
    if isinstance(record, Procedure):
        return sentence(f"{record.name}: {record.description}")
    text = sentence(record.content)
    if (
        isinstance(record, Episode)
        and record.source.strip().lower() not in _GENERIC_SOURCES
        and _FIRST_PERSON.search(record.content)
    ):
        return f'{record.source.strip()} said: "{text}"'
    return text
