"""Time expressions in English queries, resolved against a reference time.

Rule-based and dependency-free: each rule is a regular expression plus a pure
resolver, run case-insensitively on whole (ASCII) words. All calendar
arithmetic happens in the caller's time zone ``tz``; boundaries are epoch
seconds. Where several expressions overlap, the longest wins ("the day before
yesterday" over "before yesterday").

Conventions, chosen here and relied on by callers:

* Ranges are inclusive at both ends. A calendar period ends one microsecond
  before the next period starts (June ends at ``July 1 00:00 - 1e-6``);
  windows that run "up to now" end exactly at ``reference``.
* Weeks start on Monday (ISO 8601); a weekend is that week's Saturday and
  Sunday. "this/last/next week|month|year|weekend" are whole calendar periods,
  so "this year" also covers the months after the reference.
* Parts of the day: morning 06-12, afternoon 12-18, evening 18-24, night
  18-06 of the following day ("tonight", "last night").
* "N days|weeks|months|years ago" is the whole calendar unit containing the
  reference shifted back N units ("2 weeks ago" is that Monday-Sunday week).
  Fuzzy amounts span units: "a couple of" = 1-3, "a few" = 2-4, "several" =
  3-7 units ago. "the other day" = 1-7 days ago.
* Rolling windows ("the past 3 days", "in the last 2 weeks", "over the past
  month", "the last 24 hours") run from the start of the day N units before
  the reference day (hours: exactly N hours) up to the reference; a fuzzy
  amount takes its upper bound. "recently"/"lately" = the past 14 days.
* A month, day or season without a year is past-oriented: "in May" and "May
  8" are the most recent such month/day starting on or before the reference;
  "last May"/"last summer" the most recent one that has already ended; "next
  May" the first one starting after the reference; "this May" the current
  one, else the one in the reference year.
* Seasons are northern-hemisphere meteorological: spring Mar-May, summer
  Jun-Aug, autumn/fall Sep-Nov, winter Dec-Feb; "winter 2022" starts in
  December 2022. "early/mid/late May" are days 1-10, 11-20 and 21-end.
* Weekdays: "on Monday" = the most recent Monday on or before the reference
  day, "last Monday" strictly before it, "next Friday" strictly after it,
  "this Friday" the one in the current week.
* Open ranges: "before X" = ``[0.0, start(X) - 1e-6]``; "until X" = ``[0.0,
  end(X)]``; "since X" = ``[start(X), reference]``; "after X" = ``[end(X) +
  1e-6, reference]``. Ends are clamped so ``start <= end`` always holds: the
  open start drops below 0.0 for pre-1970 dates, the open end is raised to
  the start when X lies after the reference.
* Dates: "2023-05-08", "2023-05", "May 8, 2023", "8 May 2023", "the 8th of
  May", "May 2023", "in 2023". Slashed numeric dates (05/08/2023) are not
  parsed: the US and European readings disagree.
* To avoid false positives ("may I ask", "March on", "the 2023 budget"), a
  bare month, bare year, bare weekday, bare season, "the weekend" and a
  day-month like "8 May" need context: a preceding in/on/during/over/before/
  prior to/after/since/until/till, or a qualifier that is part of the rule
  (last/next/this, early/mid/late, a year, an ordinal suffix, "of"). A month
  followed by a day number ("May 8") needs none.
* "before/after/during/since/until <determiner> <words>" that is not a date
  ("before my surgery") becomes a ``TimeAnchor``; the caller locates the
  event in memory. "since"/"following" count as "after", "until" as "before".
"""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Literal, NamedTuple

from ucma.errors import ValidationError

__all__ = [
    "CALENDAR_NAMES",
    "TimeAnchor",
    "TimeRange",
    "find_time_expressions",
    "parse_time",
    "strip_time_expressions",
]


@dataclass(frozen=True)
class TimeRange:
    """An absolute range in epoch seconds, both ends inclusive; ``expression`` is the match."""

    start: float
    end: float
    expression: str


@dataclass(frozen=True)
class TimeAnchor:
    """A time relative to an event the caller must find in memory ("before the trip")."""

    relation: Literal["before", "after", "during"]
    event: str
    expression: str


def _words(text: str) -> list[str]:
    return text.split()


_MICROSECOND = 1e-6
_RECENT_DAYS = 14
_FLAGS = re.IGNORECASE | re.ASCII
_DAY = timedelta(days=1)

_MONTH_NAMES = _words(
    "january february march april may june july august september october november december"
)
_MONTHS = {name[:length]: index for index, name in enumerate(_MONTH_NAMES, 1) for length in (3, 99)}
_MONTHS["sept"] = 9
_WEEKDAYS = {
    name: index
    for index, name in enumerate(_words("monday tuesday wednesday thursday friday saturday sunday"))
}
#: Month and weekday names, plurals included (lower case): time, not a subject.
CALENDAR_NAMES: frozenset[str] = frozenset(
    form for name in (*_MONTH_NAMES, *_WEEKDAYS) for form in (name, f"{name}s")
)
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_PARTS = {"morning": (6, 12), "afternoon": (12, 18), "evening": (18, 24), "night": (18, 30)}
_DAY_OFFSETS = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}
_NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        _words("zero one two three four five six seven eight nine ten eleven twelve")
    )
} | {"a": 1, "an": 1}
_FUZZY = {"couple": (1, 3), "few": (2, 4), "several": (3, 7)}
_THIRDS = {"early": 0, "beginning": 0, "start": 0, "mid": 1, "middle": 1, "late": 2, "end": 2}

_MONTH = rf"(?P<month>{'|'.join(sorted(_MONTHS, key=len, reverse=True))})\b\.?"
_YEAR = r"(?P<year>(?:19|20)[0-9]{2})\b(?![-.:/][0-9])"
_NUMBER = (
    r"(?P<n>[0-9]{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|an?"
    r"|(?:a\s+)?(?:couple(?:\s+of)?|few)|several)"
)
_WEEKDAY = rf"(?P<weekday>{'|'.join(_WEEKDAYS)})\b"
_PREFIX = re.compile(
    r"\b(?P<prep>in|on|during|over|before|prior\s+to|after|since|until|till)\s+\Z", _FLAGS
)
_ANCHOR = re.compile(
    r"\b(?P<rel>before|after|during|since|until|till|following|prior\s+to)\s+"
    r"(?P<det>the|my|our|his|her|their|your|a|an)\s+",
    _FLAGS,
)
_EVENT_WORD = re.compile(r"[^\W_][\w'’-]*")
_EVENT_GAP = re.compile(r"[ \t]+")
_EVENT_STOP = frozenset(
    _words(
        """and or but when where while what who whom which why how that did do does was were is are
    am be been has have had will would could should can i we you he she they it me us them
    because so then if than tell remind before after during since until till following prior"""
    )
)
_EVENT_TRAILING = frozenset(
    _words("to of in on at with for from about by the a an my our his her their your")
)
_EVENT_WORDS_MAX = 5


class _Clock(NamedTuple):
    """The reference instant, its calendar day in ``tz``, and ``tz`` itself."""

    reference: float
    today: date
    tz: tzinfo

    def at(self, day: date, hour: int = 0) -> float:
        """Epoch seconds of ``hour`` o'clock on ``day`` in ``tz``; hours past 23 roll over."""
        day += timedelta(days=hour // 24)
        return datetime(day.year, day.month, day.day, hour % 24, tzinfo=self.tz).timestamp()


class _Period(NamedTuple):
    """``[start, stop)``, or ``[start, stop]`` when ``closed`` (windows ending at the reference)."""

    start: float
    stop: float
    closed: bool = False

    @property
    def end(self) -> float:
        return self.stop if self.closed else self.stop - _MICROSECOND


class _Rule(NamedTuple):
    pattern: re.Pattern[str]
    resolve: Callable[[re.Match[str], _Clock], _Period | None]
    contextual: bool = False
    qualifiers: tuple[str, ...] = ()  # any of these groups matching removes the need for context

    def needs_context(self, match: re.Match[str]) -> bool:
        return self.contextual and not any(match.group(name) for name in self.qualifiers)


# Calendar arithmetic -----------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _add_months(day: date, months: int) -> date:
    """``day`` moved by whole months, clamped to the target month's length (Jan 31 + 1 = Feb 28)."""
    year, month0 = divmod(day.year * 12 + day.month - 1 + months, 12)
    return date(year, month0 + 1, min(day.day, calendar.monthrange(year, month0 + 1)[1]))


def _shift(day: date, unit: str, count: int) -> date:
    if unit == "day":
        return day + timedelta(days=count)
    if unit in ("week", "weekend"):
        return day + timedelta(weeks=count)
    return _add_months(day, count if unit == "month" else 12 * count)


def _unit(day: date, unit: str) -> tuple[date, date]:
    """The calendar day, Monday-first week, weekend, month or year containing ``day``."""
    if unit == "day":
        return day, day + _DAY
    if unit in ("week", "weekend"):
        monday = day - timedelta(days=day.weekday())
        first = monday if unit == "week" else monday + 5 * _DAY
        return first, monday + 7 * _DAY
    if unit == "month":
        first = day.replace(day=1)
        return first, _add_months(first, 1)
    return date(day.year, 1, 1), date(day.year + 1, 1, 1)


def _occurrence(today: date, first_month: int, months: int, rel: str | None) -> tuple[date, date]:
    """The occurrence of a yearly month or season that ``rel`` selects (see the module doc)."""
    spans = []
    for year in range(today.year - 2, today.year + 3):
        start = date(year, first_month, 1)
        spans.append((start, _add_months(start, months)))
    if rel == "next":
        return next(span for span in spans if span[0] > today)
    if rel == "last":
        return [span for span in spans if span[1] <= today][-1]
    if rel == "this":
        current = [span for span in spans if span[0] <= today < span[1]]
        return current[0] if current else next(s for s in spans if s[0].year == today.year)
    return [span for span in spans if span[0] <= today][-1]


def _amount(text: str) -> tuple[int, int]:
    """(fewest, most) units an amount phrase means: "3" = (3, 3), "a few" = (2, 4)."""
    words = [word for word in _norm(text).split() if word != "of"]
    key = words[-1]
    if key in _FUZZY:
        return _FUZZY[key]
    value = int(key) if key.isdigit() else _NUMBER_WORDS[key]
    return value, value


def _days(clock: _Clock, first: date, stop: date) -> _Period:
    return _Period(clock.at(first), clock.at(stop))


def _rel(match: re.Match[str]) -> str | None:
    text = match.group("rel")
    if text is None:
        return None
    word = text.lower()
    return {"past": "last", "previous": "last", "coming": "next"}.get(word, word)


# Resolvers ---------------------------------------------------------------------------------------


def _resolve_day_word(match: re.Match[str], clock: _Clock) -> _Period:
    text = _norm(match.group(0))
    part: str | None
    if text.startswith("the day"):
        offset, part = (-2 if "before" in text else 2), None
    elif text == "last night":
        offset, part = -1, "night"
    elif text.startswith("this "):
        offset, part = 0, text.split()[1]
    else:
        word, _, rest = text.partition(" ")
        offset, part = _DAY_OFFSETS[word], rest or ("night" if word == "tonight" else None)
    day = clock.today + timedelta(days=offset)
    if part is None:
        return _days(clock, day, day + _DAY)
    first, last = _PARTS[part]
    return _Period(clock.at(day, first), clock.at(day, last))


def _resolve_earlier(match: re.Match[str], clock: _Clock) -> _Period:
    first, _ = _unit(clock.today, match.group("unit").lower() if match.group("unit") else "day")
    return _Period(clock.at(first), clock.reference, closed=True)


def _resolve_calendar(match: re.Match[str], clock: _Clock) -> _Period:
    unit = match.group("unit").lower()
    count = {"last": -1, "this": 0, "next": 1}[match.group("rel").lower()]
    return _days(clock, *_unit(_shift(clock.today, unit, count), unit))


def _resolve_weekend(match: re.Match[str], clock: _Clock) -> _Period:
    saturday, stop = _unit(clock.today, "weekend")
    if saturday > clock.today:
        saturday, stop = saturday - 7 * _DAY, stop - 7 * _DAY
    return _days(clock, saturday, stop)


def _resolve_ago(match: re.Match[str], clock: _Clock) -> _Period:
    unit = match.group("unit").lower()
    fewest, most = _amount(match.group("n"))
    first, _ = _unit(_shift(clock.today, unit, -most), unit)
    _, stop = _unit(_shift(clock.today, unit, -fewest), unit)
    return _days(clock, first, stop)


def _resolve_rolling(match: re.Match[str], clock: _Clock) -> _Period:
    unit = match.group("unit").lower()
    _, count = _amount(match.group("n")) if match.group("n") else (1, 1)
    if unit == "hour":
        return _Period(clock.reference - 3600.0 * count, clock.reference, closed=True)
    return _Period(clock.at(_shift(clock.today, unit, -count)), clock.reference, closed=True)


def _resolve_recent(match: re.Match[str], clock: _Clock) -> _Period:
    if _norm(match.group(0)) == "the other day":
        return _days(clock, clock.today - 7 * _DAY, clock.today)
    start = clock.at(clock.today - timedelta(days=_RECENT_DAYS))
    return _Period(start, clock.reference, closed=True)


def _resolve_weekday(match: re.Match[str], clock: _Clock) -> _Period:
    target, today = _WEEKDAYS[match.group("weekday").lower()], clock.today
    rel = _rel(match)
    if rel == "last":
        delta = -((today.weekday() - target - 1) % 7 + 1)
    elif rel == "next":
        delta = (target - today.weekday() - 1) % 7 + 1
    elif rel == "this":
        delta = target - today.weekday()
    else:
        delta = -((today.weekday() - target) % 7)
    day = today + timedelta(days=delta)
    return _days(clock, day, day + _DAY)


def _resolve_iso(match: re.Match[str], clock: _Clock) -> _Period:
    first = date(int(match.group("year")), int(match.group("month")), 1)
    if match.group("day") is None:
        return _days(clock, first, _add_months(first, 1))
    day = first.replace(day=int(match.group("day")))
    return _days(clock, day, day + _DAY)


def _resolve_date(match: re.Match[str], clock: _Clock) -> _Period | None:
    month, number = _MONTHS[match.group("month").lower()], int(match.group("day"))
    if match.group("year"):
        day: date | None = date(int(match.group("year")), month, number)
    else:  # the most recent such day on or before the reference (Feb 29 looks back 8 years)
        years = range(clock.today.year, clock.today.year - 9, -1)
        valid = (
            date(y, month, number) for y in years if number <= calendar.monthrange(y, month)[1]
        )
        day = next((d for d in valid if d <= clock.today), None)
    return None if day is None else _days(clock, day, day + _DAY)


def _resolve_month(match: re.Match[str], clock: _Clock) -> _Period:
    month = _MONTHS[match.group("month").lower()]
    if match.group("year"):
        first = date(int(match.group("year")), month, 1)
        stop = _add_months(first, 1)
    else:
        first, stop = _occurrence(clock.today, month, 1, _rel(match))
    if match.group("part"):
        third = next(_THIRDS[w] for w in _norm(match.group("part")).split() if w in _THIRDS)
        if third < 2:
            stop = first.replace(day=11 + 10 * third)
        first = first.replace(day=1 + 10 * third)
    return _days(clock, first, stop)


def _resolve_season(match: re.Match[str], clock: _Clock) -> _Period:
    first_month = _SEASONS[match.group("season").lower()]
    if match.group("year"):
        first = date(int(match.group("year")), first_month, 1)
        return _days(clock, first, _add_months(first, 3))
    return _days(clock, *_occurrence(clock.today, first_month, 3, _rel(match)))


def _resolve_year(match: re.Match[str], clock: _Clock) -> _Period:
    year = int(match.group("year"))
    return _days(clock, date(year, 1, 1), date(year + 1, 1, 1))


def _rule(
    pattern: str,
    resolve: Callable[[re.Match[str], _Clock], _Period | None],
    context: tuple[str, ...] | None = None,
) -> _Rule:
    """A whole-word rule; with ``context`` it needs a preposition unless one of those groups
    matched (an empty tuple: it always needs one)."""
    compiled = re.compile(rf"\b{pattern}", _FLAGS)
    return _Rule(compiled, resolve, context is not None, context or ())


_ROLLING_LEAD = r"(?:(?:in|over|during|within|for)\s+)?"
_RULES = (
    _rule(
        r"(?:the\s+day\s+(?:before\s+yesterday|after\s+tomorrow)|last\s+night"
        r"|this\s+(?:morning|afternoon|evening)|tonight"
        r"|(?:yesterday|today|tomorrow)(?:\s+(?:morning|afternoon|evening|night))?)\b",
        _resolve_day_word,
    ),
    _rule(r"earlier\s+(?:today|this\s+(?P<unit>week|month|year))\b", _resolve_earlier),
    _rule(r"(?P<rel>last|this|next)\s+(?P<unit>weekend|week|month|year)\b", _resolve_calendar),
    _rule(r"(?:the\s+)?weekend\b", _resolve_weekend, ()),
    _rule(rf"{_NUMBER}\s+(?P<unit>day|week|month|year)s?\s+ago\b", _resolve_ago),
    _rule(
        rf"{_ROLLING_LEAD}(?:the\s+)?(?:past|last|previous)\s+{_NUMBER}\s+"
        r"(?P<unit>hour|day|week|month|year)s?\b",
        _resolve_rolling,
    ),
    _rule(
        rf"{_ROLLING_LEAD}the\s+(?:past|last|previous)\s+(?P<n>)?(?P<unit>week|month|year)\b",
        _resolve_rolling,
    ),
    _rule(r"(?:recently|lately|the\s+other\s+day)\b", _resolve_recent),
    _rule(
        rf"(?:(?P<rel>last|next|this|past|previous|coming)\s+)?{_WEEKDAY}",
        _resolve_weekday,
        ("rel",),
    ),
    _rule(
        r"(?<![0-9-])(?P<year>(?:19|20)[0-9]{2})-(?P<month>0[1-9]|1[0-2])"
        r"(?:-(?P<day>[0-3][0-9]))?(?![0-9]|-[0-9])",
        _resolve_iso,
    ),
    _rule(rf"{_MONTH}\s+(?P<day>[0-9]{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+{_YEAR})?", _resolve_date),
    _rule(
        rf"(?P<the>the\s+)?(?P<day>[0-9]{{1,2}})(?P<suffix>st|nd|rd|th)?\b(?P<of>\s+of)?\s+"
        rf"{_MONTH}(?:,?\s+{_YEAR})?",
        _resolve_date,
        ("suffix", "of", "year"),
    ),
    _rule(
        r"(?:(?P<rel>last|next|this)\s+|(?P<part>early|mid|late"
        r"|(?:the\s+)?(?:beginning|start|middle|end)\s+of)(?:-|\s+))?"
        rf"{_MONTH}(?:,?\s+(?:of\s+)?{_YEAR})?",
        _resolve_month,
        ("rel", "part", "year"),
    ),
    _rule(
        r"(?:(?P<rel>last|this|next)\s+|the\s+)?(?P<season>spring|summer|autumn|fall|winter)\b"
        rf"(?:\s+(?:of\s+)?{_YEAR})?",
        _resolve_season,
        ("rel", "year"),
    ),
    _rule(rf"(?P<the>the\s+year\s+)?{_YEAR}", _resolve_year, ("the",)),
)


# Assembly ----------------------------------------------------------------------------------------


def _open(preposition: str, period: _Period, clock: _Clock) -> _Period:
    """Apply a leading preposition: in/on/during/over keep the period, others open one end."""
    word = _norm(preposition)
    if word in ("before", "prior to"):
        end = period.start - _MICROSECOND
        return _Period(min(0.0, end), end, closed=True)
    if word in ("until", "till"):
        return _Period(min(0.0, period.end), period.end, closed=True)
    if word == "after":
        start = period.stop + (_MICROSECOND if period.closed else 0.0)
        return _Period(start, max(clock.reference, start), closed=True)
    if word == "since":
        return _Period(period.start, max(clock.reference, period.start), closed=True)
    return period


def _clock(query: object, reference: object, tz: object) -> _Clock:
    if not isinstance(query, str):
        raise ValidationError(f"query must be a str, got {type(query).__name__}")
    if (
        isinstance(reference, bool)
        or not isinstance(reference, int | float)
        or not math.isfinite(reference)
    ):
        raise ValidationError(f"reference must be finite epoch seconds, got {reference!r}")
    if not isinstance(tz, tzinfo):
        raise ValidationError(
            "tz must be a datetime.tzinfo, e.g. datetime.UTC or zoneinfo.ZoneInfo(...)"
        )
    try:
        now = datetime.fromtimestamp(reference, tz)
    except (OverflowError, OSError, ValueError) as exc:
        raise ValidationError(f"reference {reference!r} is outside the supported dates") from exc
    return _Clock(float(reference), now.date(), tz)


def _anchors(query: str, taken: list[tuple[int, int]]) -> list[tuple[int, TimeAnchor]]:
    """Event anchors outside the spans already taken by date expressions."""
    found = []
    for match in _ANCHOR.finditer(query):
        if any(start < match.end() and match.start() < end for start, end in taken):
            continue
        limit = min([start for start, _ in taken if start >= match.end()], default=len(query))
        words: list[tuple[str, int]] = []
        position = match.end()
        while len(words) < _EVENT_WORDS_MAX:
            word = _EVENT_WORD.match(query, position, limit)
            if word is None or word.group(0).lower() in _EVENT_STOP:
                break
            words.append((word.group(0), word.end()))
            gap = _EVENT_GAP.match(query, word.end(), limit)
            if gap is None:
                break
            position = gap.end()
        while words and words[-1][0].lower() in _EVENT_TRAILING:
            words.pop()
        if not words:
            continue
        end = words[-1][1]
        relation = _norm(match.group("rel"))
        kind: Literal["before", "after", "during"] = (
            "during"
            if relation == "during"
            else "after"
            if relation in ("after", "since", "following")
            else "before"
        )
        event = query[match.start("det") : end]
        found.append((match.start(), TimeAnchor(kind, event, query[match.start() : end])))
    return found


def find_time_expressions(
    query: str, reference: float, *, tz: tzinfo = UTC
) -> list[TimeRange | TimeAnchor]:
    """Every time expression in ``query``, in text order, resolved against ``reference``.

    ``reference`` is epoch seconds; calendar days, weeks and months are taken in ``tz``.
    Overlapping candidates are settled in favour of the longest. Raises ``ValidationError``
    for a non-string query, a non-finite reference or a ``tz`` that is not a ``tzinfo``.
    """
    clock = _clock(query, reference, tz)
    candidates: list[tuple[int, int, _Period]] = []
    for rule in _RULES:
        for match in rule.pattern.finditer(query):
            try:
                period = rule.resolve(match, clock)
            except (ValueError, OverflowError, StopIteration, IndexError):
                continue  # an impossible date (February 30) or one outside datetime's range
            if period is None:
                continue
            start = match.start()
            prefix = _PREFIX.search(query, max(0, start - 16), start)
            if prefix is not None:
                start, period = prefix.start(), _open(prefix.group("prep"), period, clock)
            elif rule.needs_context(match):
                continue
            candidates.append((start, match.end(), period))
    chosen: list[tuple[int, int, _Period]] = []
    for start, end, period in sorted(candidates, key=lambda c: (c[0] - c[1], c[0])):
        if all(end <= other_start or start >= other_end for other_start, other_end, _ in chosen):
            chosen.append((start, end, period))
    found: list[tuple[int, TimeRange | TimeAnchor]] = [
        (start, TimeRange(period.start, period.end, query[start:end]))
        for start, end, period in chosen
    ]
    found += _anchors(query, [(start, end) for start, end, _ in chosen])
    return [item for _, item in sorted(found, key=lambda pair: pair[0])]


def parse_time(query: str, reference: float, *, tz: tzinfo = UTC) -> TimeRange | TimeAnchor | None:
    """The most specific time expression in ``query``, or None.

    Most specific means the narrowest ``TimeRange`` (the first one on a tie); a
    ``TimeAnchor`` is returned only when no range was found, since it still needs a search.
    """
    found = find_time_expressions(query, reference, tz=tz)
    ranges = [item for item in found if isinstance(item, TimeRange)]
    if ranges:
        return min(ranges, key=lambda item: item.end - item.start)
    return found[0] if found else None


def strip_time_expressions(query: str, found: Iterable[TimeRange | TimeAnchor]) -> str:
    """``query`` without the given expressions (one occurrence each), whitespace tidied.

    Pass only what should leave the keyword search: usually the ranges, since an anchor's
    event words ("the trip") are themselves worth searching for.
    """
    if not isinstance(query, str):
        raise ValidationError(f"query must be a str, got {type(query).__name__}")
    text = query
    for item in found:
        if not isinstance(item, TimeRange | TimeAnchor):
            raise ValidationError(
                f"found must hold TimeRange or TimeAnchor items, got {type(item).__name__}"
            )
        at = text.find(item.expression) if item.expression else -1
        if at >= 0:
            text = f"{text[:at]} {text[at + len(item.expression) :]}"
    return re.sub(r"\s+([?.!,;:])", r"\1", " ".join(text.split()))
