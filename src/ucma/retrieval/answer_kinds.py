"""What kind of answer a question asks for, and whether a text could hold one. Pure.

Question answering's oldest check: "When should I wish Omar many happy returns?"
wants a time, "How far does Greta run?" a quantity. A memory that holds no time at
all ("Had lunch with Omar near the river") cannot be the answer to the first however
close its words are, while "Omar's birthday is on July 2" can, whatever words the
question chose. Only two kinds are read, the ones a text shows by its form alone:

- ``TIME``: "when", "what day / date / month / year / time"; offered by a month or
  weekday name, a clock time, a year, a numeric date, a part of the day ("in the
  morning") or a relative day ("tomorrow", "at the weekend");
- ``WEEKDAY``: "in the week", "what day of the week", "which weekday"; offered by a
  weekday's name, the weekend or every day ("Rafael has pottery every Wednesday",
  not "Mateo's birthday, October 23");
- ``QUANTITY``: "how many / much / far / tall / old / long ...", "what size / age /
  height / weight / distance / number / price"; offered by a digit or a number word
  outside a date or a clock time ("How tall is Dana?" is not answered by "Dana's
  birthday, January 9");
- ``FREQUENCY``: "how often"; offered by those or a frequency ("twice", "daily",
  "every Friday", "usually").

The cue must be the question's first question word: in "Who supports Caroline when
she is down?" the "when" asks nothing. A count of what happened ("How many hikes has
Joanna been on?", "How many times ...") is counted over episodes, not read in one, so
it asks for no quantity here. Other questions ("What does Alex drink?", "Where is
Dana's home?") want a kind no pattern tells reliably (a drink, a place: "in our new
place in Krakow", "based in Auckland"), so they get ``None`` and nothing is checked.
The retriever applies this only to questions about how things are: an event's time is
the episode's own timestamp ("When did Caroline go to the support group?"), not words
in its text.
"""

from __future__ import annotations

import enum
import re
from functools import lru_cache

__all__ = ["AnswerKind", "asked_kind", "offers"]


class AnswerKind(enum.Enum):
    TIME = "time"
    WEEKDAY = "weekday"
    QUANTITY = "quantity"
    FREQUENCY = "frequency"


_FLAGS = re.IGNORECASE
_QUESTION_WORD = re.compile(r"\b(?:when|what|which|how|who|whom|whose|where|why)\b", _FLAGS)
_WH_TIME = re.compile(
    r"\bwhen\b|\b(?:what|which)\s+(?:day|days|date|dates|month|year|time|times|weekday|"
    r"weekdays|evening|evenings|night|nights|morning|mornings|season)\b|\bin\s+the\s+week\b|"
    r"\bhow\s+soon\b",
    _FLAGS,
)
_WH_WEEKDAY = re.compile(
    r"\b(?:when|what|which)\s+(?:\w+\s+){0,4}?in\s+the\s+week\b|"
    r"\b(?:what|which)\s+(?:day\s+of\s+the\s+week|weekdays?)\b",
    _FLAGS,
)
_WH_FREQUENCY = re.compile(r"\bhow\s+often\b", _FLAGS)
_WH_QUANTITY = re.compile(
    r"\bhow\s+(?:many|much|far|tall|old|long|big|heavy|high|fast|deep|wide|short)\b|"
    r"\b(?:what|which)\s+(?:size|age|height|weight|distance|number|percentage|price|amount|"
    r"score|temperature)\b",
    _FLAGS,
)
_COUNTED = re.compile(
    r"\bhow\s+many\s+times\b|\b(?:has|have|had)\s+(?:\w+\s+){0,3}?(?:been|\w+ed|\w+en)\b",
    _FLAGS,
)
# "what time" and "how long" could be either: a clock time is a time, "two hours" a
# quantity; the question's first cue decides, and both kinds accept numbers below.
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|"
    "december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_TIME = re.compile(
    rf"\b(?:{_WEEKDAYS})s?\b|\b(?:{_MONTHS})\b\.?\s*[0-9]{{1,2}}\b|"
    rf"\b[0-9]{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b|"
    r"\b(?:january|february|march|april|june|july|august|september|october|november|"
    r"december)\b|"
    r"\b(?:19|20)[0-9]{2}\b|\b[0-9]{1,2}[:.][0-9]{2}\b|\b[0-9]{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)|"
    r"\b[0-9]{1,4}[-/][0-9]{1,2}[-/][0-9]{1,4}\b|"
    r"\b(?:morning|mornings|afternoon|afternoons|evening|evenings|night|nights|noon|"
    r"midnight|dawn|dusk|today|tonight|tomorrow|yesterday|weekend|weekends|weekday|"
    r"weekdays|daily|weekly|monthly|yearly|annually|spring|summer|autumn|fall|winter|"
    r"christmas|easter|holidays?)\b|\b(?:next|last|this)\s+(?:week|month|year)\b|"
    r"\bevery\s+(?:day|week|month|year)\b",
    _FLAGS,
)
_NUMBER = (
    r"[0-9]|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
    r"fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety|hundred|hundreds|thousand|thousands|million|dozen|"
    r"dozens|half|couple|few|several|single|double|triple|none|lots?|many|much)\b"
)
_QUANTITY = re.compile(_NUMBER, _FLAGS)
# Numbers that are part of a date or a clock time, not amounts.
_DATE = re.compile(
    rf"\b(?:{_MONTHS})\b\.?\s*[0-9]{{1,2}}(?:st|nd|rd|th)?\b|"
    rf"\b[0-9]{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b|"
    r"\b[0-9]{1,4}[-/][0-9]{1,2}[-/][0-9]{1,4}\b|\b[0-9]{1,2}:[0-9]{2}\b|"
    r"\b[0-9]{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)",
    _FLAGS,
)
_WEEKDAY = re.compile(
    rf"\b(?:{_WEEKDAYS})s?\b|\b(?:weekends?|weekdays|daily|every\s+day)\b", _FLAGS
)
_FREQUENCY = re.compile(
    _NUMBER + r"|\b(?:once|twice|daily|nightly|weekly|fortnightly|monthly|yearly|annually|"
    r"every|each|always|usually|often|sometimes|rarely|seldom|never|occasionally|regularly|"
    r"weekdays|weekends|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)\b",
    _FLAGS,
)
_OFFERS = {
    AnswerKind.TIME: _TIME,
    AnswerKind.WEEKDAY: _WEEKDAY,
    AnswerKind.QUANTITY: _QUANTITY,
    AnswerKind.FREQUENCY: _FREQUENCY,
}


@lru_cache(maxsize=4096)
def asked_kind(question: str) -> AnswerKind | None:
    """The kind of answer ``question`` asks for, or None when its form does not say
    (see the module docstring)."""
    first = _QUESTION_WORD.search(question)
    if first is None:
        return None
    if _WH_WEEKDAY.match(question, first.start()):
        return AnswerKind.WEEKDAY
    if _WH_TIME.match(question, first.start()):
        return AnswerKind.TIME
    if _WH_FREQUENCY.match(question, first.start()):
        return AnswerKind.FREQUENCY
    if _WH_QUANTITY.match(question, first.start()) and not _COUNTED.search(question):
        return AnswerKind.QUANTITY
    return None


@lru_cache(maxsize=16_384)
def offers(text: str, kind: AnswerKind) -> bool:
    """Whether ``text`` holds something of ``kind`` (a time, a quantity) at all."""
    if kind is AnswerKind.QUANTITY:
        text = _DATE.sub(" ", text)
    return _OFFERS[kind].search(text) is not None
