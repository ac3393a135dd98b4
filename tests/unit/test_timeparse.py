"""Time expressions resolved against fixed reference times, with exact boundaries."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ucma.errors import ValidationError
from ucma.retrieval.timeparse import (
    TimeAnchor,
    TimeRange,
    find_time_expressions,
    parse_time,
    strip_time_expressions,
)

# Wednesday 14 June 2023, 15:00 UTC.
REF = datetime(2023, 6, 14, 15, tzinfo=UTC).timestamp()
MICROSECOND = 1e-6


def at(year, month, day, hour=0, tz=UTC):
    return datetime(year, month, day, hour, tzinfo=tz).timestamp()


def only_range(query, reference=REF, **kwargs):
    found = find_time_expressions(query, reference, **kwargs)
    assert len(found) == 1, found
    assert isinstance(found[0], TimeRange)
    return found[0]


def assert_period(query, start, stop, expression=None, reference=REF):
    """``query`` holds exactly one range: ``[start, stop)`` as an inclusive range."""
    found = only_range(query, reference)
    assert found.start == start
    assert found.end == stop - MICROSECOND
    assert found.expression == (expression or query)


# Calendar periods: [start, next start - 1 microsecond].
CALENDAR_CASES = [
    ("today", at(2023, 6, 14), at(2023, 6, 15)),
    ("tonight", at(2023, 6, 14, 18), at(2023, 6, 15, 6)),
    ("this morning", at(2023, 6, 14, 6), at(2023, 6, 14, 12)),
    ("this afternoon", at(2023, 6, 14, 12), at(2023, 6, 14, 18)),
    ("this evening", at(2023, 6, 14, 18), at(2023, 6, 15)),
    ("yesterday", at(2023, 6, 13), at(2023, 6, 14)),
    ("yesterday morning", at(2023, 6, 13, 6), at(2023, 6, 13, 12)),
    ("the day before yesterday", at(2023, 6, 12), at(2023, 6, 13)),
    ("tomorrow", at(2023, 6, 15), at(2023, 6, 16)),
    ("the day after tomorrow", at(2023, 6, 16), at(2023, 6, 17)),
    ("last night", at(2023, 6, 13, 18), at(2023, 6, 14, 6)),
    ("last week", at(2023, 6, 5), at(2023, 6, 12)),
    ("this week", at(2023, 6, 12), at(2023, 6, 19)),
    ("next week", at(2023, 6, 19), at(2023, 6, 26)),
    ("last month", at(2023, 5, 1), at(2023, 6, 1)),
    ("this month", at(2023, 6, 1), at(2023, 7, 1)),
    ("next month", at(2023, 7, 1), at(2023, 8, 1)),
    ("last year", at(2022, 1, 1), at(2023, 1, 1)),
    ("this year", at(2023, 1, 1), at(2024, 1, 1)),
    ("last weekend", at(2023, 6, 10), at(2023, 6, 12)),
    ("this weekend", at(2023, 6, 17), at(2023, 6, 19)),
    ("next weekend", at(2023, 6, 24), at(2023, 6, 26)),
    ("over the weekend", at(2023, 6, 10), at(2023, 6, 12)),
    ("3 days ago", at(2023, 6, 11), at(2023, 6, 12)),
    ("five days ago", at(2023, 6, 9), at(2023, 6, 10)),
    ("a day ago", at(2023, 6, 13), at(2023, 6, 14)),
    ("two weeks ago", at(2023, 5, 29), at(2023, 6, 5)),
    ("a week ago", at(2023, 6, 5), at(2023, 6, 12)),
    ("a month ago", at(2023, 5, 1), at(2023, 6, 1)),
    ("twelve months ago", at(2022, 6, 1), at(2022, 7, 1)),
    ("an year ago", at(2022, 1, 1), at(2023, 1, 1)),
    ("2 years ago", at(2021, 1, 1), at(2022, 1, 1)),
    ("a couple of days ago", at(2023, 6, 11), at(2023, 6, 14)),
    ("a few days ago", at(2023, 6, 10), at(2023, 6, 13)),
    ("several weeks ago", at(2023, 4, 24), at(2023, 5, 29)),
    ("the other day", at(2023, 6, 7), at(2023, 6, 14)),
    ("in May", at(2023, 5, 1), at(2023, 6, 1)),
    ("in June", at(2023, 6, 1), at(2023, 7, 1)),
    ("in July", at(2022, 7, 1), at(2022, 8, 1)),
    ("last May", at(2023, 5, 1), at(2023, 6, 1)),
    ("last June", at(2022, 6, 1), at(2022, 7, 1)),
    ("next May", at(2024, 5, 1), at(2024, 6, 1)),
    ("this May", at(2023, 5, 1), at(2023, 6, 1)),
    ("in May 2021", at(2021, 5, 1), at(2021, 6, 1)),
    ("May 2021", at(2021, 5, 1), at(2021, 6, 1)),
    ("in Sept. 2021", at(2021, 9, 1), at(2021, 10, 1)),
    ("on 8 May, 2023", at(2023, 5, 8), at(2023, 5, 9)),
    ("May 8, 2023", at(2023, 5, 8), at(2023, 5, 9)),
    ("8 May 2023", at(2023, 5, 8), at(2023, 5, 9)),
    ("on May 8th", at(2023, 5, 8), at(2023, 5, 9)),
    ("on June 20", at(2022, 6, 20), at(2022, 6, 21)),
    ("the 8th of May", at(2023, 5, 8), at(2023, 5, 9)),
    ("2023-05-08", at(2023, 5, 8), at(2023, 5, 9)),
    ("2023-05", at(2023, 5, 1), at(2023, 6, 1)),
    ("in 2023", at(2023, 1, 1), at(2024, 1, 1)),
    ("the year 2019", at(2019, 1, 1), at(2020, 1, 1)),
    ("in the summer of 2022", at(2022, 6, 1), at(2022, 9, 1)),
    ("summer 2021", at(2021, 6, 1), at(2021, 9, 1)),
    ("winter 2022", at(2022, 12, 1), at(2023, 3, 1)),
    ("last summer", at(2022, 6, 1), at(2022, 9, 1)),
    ("this summer", at(2023, 6, 1), at(2023, 9, 1)),
    ("next summer", at(2024, 6, 1), at(2024, 9, 1)),
    ("last winter", at(2022, 12, 1), at(2023, 3, 1)),
    ("in the spring", at(2023, 3, 1), at(2023, 6, 1)),
    ("in the fall", at(2022, 9, 1), at(2022, 12, 1)),
    ("early May", at(2023, 5, 1), at(2023, 5, 11)),
    ("mid-May", at(2023, 5, 11), at(2023, 5, 21)),
    ("late May", at(2023, 5, 21), at(2023, 6, 1)),
    ("late February 2024", at(2024, 2, 21), at(2024, 3, 1)),
    ("the end of April", at(2023, 4, 21), at(2023, 5, 1)),
    ("on Monday", at(2023, 6, 12), at(2023, 6, 13)),
    ("on Wednesday", at(2023, 6, 14), at(2023, 6, 15)),
    ("on Thursday", at(2023, 6, 8), at(2023, 6, 9)),
    ("last Monday", at(2023, 6, 12), at(2023, 6, 13)),
    ("last Wednesday", at(2023, 6, 7), at(2023, 6, 8)),
    ("next Friday", at(2023, 6, 16), at(2023, 6, 17)),
    ("next Wednesday", at(2023, 6, 21), at(2023, 6, 22)),
    ("this Friday", at(2023, 6, 16), at(2023, 6, 17)),
]


@pytest.mark.parametrize(("query", "start", "stop"), CALENDAR_CASES)
def test_calendar_expressions_resolve_to_whole_periods(query, start, stop):
    assert_period(query, start, stop)


@pytest.mark.parametrize(
    ("query", "start"),
    [
        ("the past 3 days", at(2023, 6, 11)),
        ("in the last 2 weeks", at(2023, 5, 31)),
        ("over the past month", at(2023, 5, 14)),
        ("the past week", at(2023, 6, 7)),
        ("in the last few days", at(2023, 6, 10)),
        ("the last 24 hours", REF - 24 * 3600),
        ("recently", at(2023, 5, 31)),
        ("lately", at(2023, 5, 31)),
        ("earlier today", at(2023, 6, 14)),
        ("earlier this month", at(2023, 6, 1)),
        ("since March", at(2023, 3, 1)),
        ("since yesterday", at(2023, 6, 13)),
        ("since last week", at(2023, 6, 5)),
        ("after 2023-05-08", at(2023, 5, 9)),
        ("after May 2023", at(2023, 6, 1)),
    ],
)
def test_windows_up_to_now_end_at_the_reference(query, start):
    found = only_range(query)
    assert (found.start, found.end, found.expression) == (start, REF, query)


@pytest.mark.parametrize(
    ("query", "end"),
    [
        ("before May 2023", at(2023, 5, 1) - MICROSECOND),
        ("prior to 2023-05-08", at(2023, 5, 8) - MICROSECOND),
        ("before last week", at(2023, 6, 5) - MICROSECOND),
        ("until yesterday", at(2023, 6, 14) - MICROSECOND),
        ("till June 2022", at(2022, 7, 1) - MICROSECOND),
    ],
)
def test_open_ranges_before_and_until_start_at_the_epoch(query, end):
    found = only_range(query)
    assert (found.start, found.end, found.expression) == (0.0, end, query)


def test_open_ranges_keep_start_before_end_around_the_reference():
    after = only_range("after tomorrow")
    assert after.start == after.end == at(2023, 6, 16)
    before = only_range("before 1960")
    assert before.start == before.end == at(1960, 1, 1) - MICROSECOND


def test_expressions_are_found_inside_sentences_case_insensitively():
    found = only_range("What did I eat LAST WEEK with Anna?")
    assert found.expression == "LAST WEEK"
    assert (found.start, found.end) == (at(2023, 6, 5), at(2023, 6, 12) - MICROSECOND)


def test_year_boundaries():
    reference = datetime(2024, 1, 3, 9, tzinfo=UTC).timestamp()  # a Wednesday
    assert_period("last month", at(2023, 12, 1), at(2024, 1, 1), reference=reference)
    assert_period("last week", at(2023, 12, 25), at(2024, 1, 1), reference=reference)
    assert_period("last year", at(2023, 1, 1), at(2024, 1, 1), reference=reference)
    assert_period("2 months ago", at(2023, 11, 1), at(2023, 12, 1), reference=reference)
    assert_period("in December", at(2023, 12, 1), at(2024, 1, 1), reference=reference)
    assert_period("next May", at(2024, 5, 1), at(2024, 6, 1), reference=reference)
    assert_period("this winter", at(2023, 12, 1), at(2024, 3, 1), reference=reference)
    assert_period("a few days ago", at(2023, 12, 30), at(2024, 1, 2), reference=reference)
    new_year = datetime(2024, 1, 1, 8, tzinfo=UTC).timestamp()
    assert_period("yesterday", at(2023, 12, 31), at(2024, 1, 1), reference=new_year)
    assert_period("last Friday", at(2023, 12, 29), at(2023, 12, 30), reference=new_year)
    thursday = datetime(2025, 1, 2, 12, tzinfo=UTC).timestamp()
    assert_period("this week", at(2024, 12, 30), at(2025, 1, 6), reference=thursday)
    assert_period("last week", at(2024, 12, 23), at(2024, 12, 30), reference=thursday)
    assert_period("next week", at(2025, 1, 6), at(2025, 1, 13), reference=thursday)


def test_leap_years_and_month_lengths():
    assert_period("in February 2024", at(2024, 2, 1), at(2024, 3, 1))
    assert only_range("in February 2024").end == at(2024, 2, 29, 23) + 3599.999999
    assert_period("in February 2023", at(2023, 2, 1), at(2023, 3, 1))
    assert_period("on February 29", at(2020, 2, 29), at(2020, 3, 1))
    assert_period("April 2023", at(2023, 4, 1), at(2023, 5, 1))
    march_end = datetime(2024, 3, 31, 12, tzinfo=UTC).timestamp()
    assert only_range("over the past month", march_end).start == at(2024, 2, 29)
    assert_period("a month ago", at(2024, 2, 1), at(2024, 3, 1), reference=march_end)
    leap_day = datetime(2024, 2, 29, 12, tzinfo=UTC).timestamp()
    assert only_range("the past year", leap_day).start == at(2023, 2, 28)


def test_impossible_dates_are_not_ranges():
    assert find_time_expressions("February 30, 2023", REF) == []
    assert find_time_expressions("2023-02-30", REF) == []


def test_time_zone_moves_day_boundaries():
    minus_four = timezone(timedelta(hours=-4))
    reference = datetime(2023, 6, 14, 2, tzinfo=UTC).timestamp()  # 13 June 22:00 at UTC-4
    local = parse_time("today", reference, tz=minus_four)
    assert isinstance(local, TimeRange)
    assert local.start == at(2023, 6, 13, tz=minus_four) == at(2023, 6, 13, 4)
    assert local.end == at(2023, 6, 14, tz=minus_four) - MICROSECOND
    utc = parse_time("today", reference)
    assert isinstance(utc, TimeRange)
    assert utc.start == at(2023, 6, 14)
    month = parse_time("in May", reference, tz=minus_four)
    assert isinstance(month, TimeRange)
    assert month.start == at(2023, 5, 1, 4)


def test_daylight_saving_day_is_23_hours_long():
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        new_york = zoneinfo.ZoneInfo("America/New_York")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no time-zone database on this machine")
    found = parse_time("on 12 March 2023", REF, tz=new_york)
    assert isinstance(found, TimeRange)
    assert found.end - found.start == pytest.approx(23 * 3600 - MICROSECOND)
    assert found.start == at(2023, 3, 12, 5)


@pytest.mark.parametrize(
    "query",
    [
        "may I ask you something",
        "I may go to the shops",
        "March on, soldiers",
        "I want a second opinion",
        "Will is here",
        "the date of the party",
        "we need 2023 more widgets",
        "Monday meetings are boring",
        "I had a bad fall",
        "the weekend plans",
        "I ran 3 miles in the morning",
        "the last day of school",
        "the 3 may go home",
        "",
    ],
)
def test_ordinary_words_are_not_time_expressions(query):
    assert parse_time(query, REF) is None
    assert find_time_expressions(query, REF) == []


def test_ambiguous_month_names_need_context():
    found = find_time_expressions("I may go in May", REF)
    assert [item.expression for item in found] == ["in May"]
    assert [item.expression for item in find_time_expressions("march on May 3", REF)] == [
        "on May 3"
    ]
    assert [item.expression for item in find_time_expressions("during march", REF)] == [
        "during march"
    ]


def test_event_anchors_are_extracted():
    assert parse_time("what did I eat before the trip?", REF) == TimeAnchor(
        "before", "the trip", "before the trip"
    )
    found = find_time_expressions(
        "how did I feel after my surgery and during the conference in Berlin", REF
    )
    assert found == [
        TimeAnchor("after", "my surgery", "after my surgery"),
        TimeAnchor("during", "the conference in Berlin", "during the conference in Berlin"),
    ]
    assert parse_time("since the move to Paris", REF) == TimeAnchor(
        "after", "the move to Paris", "since the move to Paris"
    )
    assert parse_time("until our wedding", REF) == TimeAnchor(
        "before", "our wedding", "until our wedding"
    )


def test_anchor_event_stops_at_a_date_expression():
    found = find_time_expressions("who did I meet after the party last Friday", REF)
    assert found[0] == TimeAnchor("after", "the party", "after the party")
    assert isinstance(found[1], TimeRange)
    assert found[1].expression == "last Friday"


def test_dates_after_prepositions_are_ranges_not_anchors():
    found = parse_time("before the 8th of May", REF)
    assert isinstance(found, TimeRange)
    assert found.end == at(2023, 5, 8) - MICROSECOND
    during = parse_time("during the summer of 2022", REF)
    assert isinstance(during, TimeRange)
    assert during.start == at(2022, 6, 1)
    assert parse_time("before the", REF) is None


def test_find_returns_all_in_text_order():
    found = find_time_expressions("after the trip in May 2022, and then yesterday", REF)
    assert [item.expression for item in found] == ["after the trip", "in May 2022", "yesterday"]


def test_parse_time_prefers_the_narrowest_range():
    found = parse_time("last year, especially yesterday", REF)
    assert isinstance(found, TimeRange)
    assert found.expression == "yesterday"
    assert parse_time("before the trip last month", REF).expression == "last month"


def test_strip_time_expressions():
    query = "What did I eat yesterday with Anna in May 2023?"
    found = find_time_expressions(query, REF)
    assert strip_time_expressions(query, found) == "What did I eat with Anna?"
    assert strip_time_expressions("before the trip", []) == "before the trip"
    assert strip_time_expressions(
        "Last week, I ran", find_time_expressions("Last week, I ran", REF)
    ) == (", I ran")


def test_bad_arguments_raise_validation_error():
    with pytest.raises(ValidationError):
        parse_time(None, REF)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        parse_time("today", float("nan"))
    with pytest.raises(ValidationError):
        parse_time("today", True)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        parse_time("today", 1e20)
    with pytest.raises(ValidationError):
        parse_time("today", REF, tz="UTC")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        strip_time_expressions("today", ["today"])  # type: ignore[list-item]


@settings(deadline=None)
@given(st.text(), st.floats(min_value=-1e9, max_value=4e9), st.integers(-14 * 60, 14 * 60))
def test_arbitrary_text_never_raises(text, reference, offset_minutes):
    tz = timezone(timedelta(minutes=offset_minutes))
    found = find_time_expressions(text, reference, tz=tz)
    for item in found:
        if isinstance(item, TimeRange):
            assert item.start <= item.end
    parse_time(text, reference, tz=tz)
    strip_time_expressions(text, found)


PHRASES = [case[0] for case in CALENDAR_CASES] + [
    "the past 3 days",
    "recently",
    "since March",
    "after tomorrow",
    "before May 2023",
    "until next week",
    "since next year",
    "on February 29",
    "a few years ago",
    "after the last 2 hours",
]


@settings(deadline=None)
@given(
    st.lists(st.sampled_from(PHRASES), min_size=1, max_size=3),
    st.floats(min_value=0, max_value=4e9),
    st.integers(-14 * 60, 14 * 60),
)
def test_known_phrases_at_any_reference_give_ordered_ranges(phrases, reference, offset_minutes):
    tz = timezone(timedelta(minutes=offset_minutes))
    found = find_time_expressions(" and ".join(phrases), reference, tz=tz)
    assert found
    for item in found:
        assert isinstance(item, TimeRange)
        assert item.start <= item.end
