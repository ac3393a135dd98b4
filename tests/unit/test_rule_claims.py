"""Claims of the rule extractor (issue 12): clean objects, possessives, change and negation,
and who a first name means."""

from __future__ import annotations

import pytest

from ucma.conflicts.supersession import identify
from ucma.providers.rule_facts import RuleFactExtractor

RULES = RuleFactExtractor()


def claims(text: str, speaker: str = "user") -> set[tuple[str, str, str, bool, bool]]:
    return {
        (c.fact.subject, c.fact.predicate, c.fact.object, c.change, c.negated)
        for c in RULES.claims(text, speaker=speaker)
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dana's birthday is on March 14.", ("Dana", "birthday", "March 14", False, False)),
        ("Dana works at Acme Robotics as a firmware engineer.",
         ("Dana", "works_at", "Acme Robotics", False, False)),
        ("Dana has worked at Acme for 5 years.", ("Dana", "works_at", "Acme", False, False)),
        ("Uma now works at Google as of 2026.", ("Uma", "works_at", "Google", True, False)),
        ("Dana moved to Denver last week.", ("Dana", "lives_in", "Denver", True, False)),
        ("Dana joined Globex.", ("Dana", "works_at", "Globex", True, False)),
        ("These days Dana lives in Lisbon.", ("Dana", "lives_in", "Lisbon", True, False)),
        ("My favourite color is now green.", ("user", "favourite_color", "green", True, False)),
        ("Dana no longer likes coffee.", ("Dana", "likes", "coffee", True, True)),
        ("I don't drink coffee anymore.", ("user", "drinks", "coffee", True, True)),
        ("Dana left Acme.", ("Dana", "works_at", "Acme", True, True)),
        ("Dana is married to Sam.", ("Dana", "married_to", "Sam", False, False)),
        ("Also: Rosa has a place in Porto.", ("Rosa", "lives_in", "Porto", False, False)),
        # Ways to say who employs someone, without the team they are in.
        ("Hana has a job at Meridian Pharma in the finance team.",
         ("Hana", "works_at", "Meridian Pharma", False, False)),
        ("Priya is a nurse at St Mary Hospital.",
         ("Priya", "works_at", "St Mary Hospital", False, False)),
        ("Maya is an engineer over at Kestrel.", ("Maya", "works_at", "Kestrel", False, False)),
        # A new employer, said as a hire or an offer taken.
        ("Sam got hired by Saltmarsh Games last year and loves it.",
         ("Sam", "works_at", "Saltmarsh Games", True, False)),
        ("Sam took an offer from Kestrel Analytics, so bye bye Copperleaf Studio.",
         ("Sam", "works_at", "Kestrel Analytics", True, False)),
        ("Dana accepted a job offer from Globex.", ("Dana", "works_at", "Globex", True, False)),
    ],
)  # fmt: skip
def test_claims(text: str, expected: tuple[str, str, str, bool, bool]) -> None:
    assert expected in claims(text)


def test_a_verb_clause_keeps_its_subject() -> None:
    assert claims("Dana quit Acme and joined Globex.") == {
        ("Dana", "works_at", "Acme", True, True),
        ("Dana", "works_at", "Globex", True, False),
    }
    assert {c[:3] for c in claims("Dana lives in Boston and works at Acme.")} == {
        ("Dana", "lives_in", "Boston"),
        ("Dana", "works_at", "Acme"),
    }


def test_extract_leaves_out_what_stopped_holding() -> None:
    assert RULES.extract("Dana no longer likes coffee.") == []


def test_a_year_dates_a_change() -> None:
    [claim] = RULES.claims("Uma now works at Google as of 2026.")
    assert claim.fact.valid_from == 1767225600.0  # 2026-01-01 UTC


def test_a_first_name_is_the_one_known_full_name() -> None:
    assert identify("Dana", ["Dana Whitfield"]) == ("Dana Whitfield", ("Dana",))
    assert identify("Dana", ["Dana Whitfield", "Dana Scully"]) == ("Dana", ())
    assert identify("Dana", ["Dana"]) == ("Dana", ())
    assert identify("Dana Whitfield", ["Dana"]) == ("Dana Whitfield", ("Dana",))
    assert identify("Dana Whitfield", ["Dana", "Dana Scully"]) == ("Dana Whitfield", ())
    assert identify("meeting", ["meeting room"]) == ("meeting", ())


def test_a_request_with_a_date_is_no_event_of_a_person_named_dont() -> None:
    # The date taken out, "Don't let me forget ..." once read as (Don't, let, ...).
    march = 1742120514.0
    said = "Don't let me forget my teammate Mateo's birthday, October 23."
    assert [c.fact.object for c in RULES.claims(said, reference_time=march)] == ["October 23"]
    assert RULES.claims("Can't wait for March 3, Dana visits then.", reference_time=march) == []
    [claim] = RULES.claims("Don't let me forget that Dana is vegan.")
    assert (claim.fact.subject, claim.fact.object) == ("Dana", "vegan")


def test_a_comma_before_a_calendar_day_reads_as_is() -> None:
    [claim] = RULES.claims("Don't let me forget Bruno's birthday, January 9.")
    assert (claim.fact.subject, claim.fact.predicate, claim.fact.object) == (
        "Bruno",
        "birthday",
        "January 9",
    )
    assert all(c.fact.object != "Ana" for c in RULES.claims("My sister, Ana, lives in Rome."))
    assert [c.fact.object for c in RULES.claims("My thesis is done.")] == ["done"]


def test_based_in_and_a_place_in_say_where_someone_lives() -> None:
    said = {
        "I've been based in Tallinn since uni.": ("user", "Tallinn"),
        "I'm based in Rome.": ("user", "Rome"),
        "Jordan has a place in Denver.": ("Jordan", "Denver"),
    }
    assert RULES.claims("Acme based in Oslo hired me.") == []
    for text, (subject, city) in said.items():
        [claim] = RULES.claims(text)
        assert (claim.fact.subject, claim.fact.predicate, claim.fact.object) == (
            subject,
            "lives_in",
            city,
        )


def test_my_new_favourite_is_the_favourite_changed() -> None:
    [claim] = RULES.claims("My new favourite cuisine is Sichuan.")
    assert (claim.fact.predicate, claim.fact.object, claim.change) == (
        "favourite_cuisine",
        "Sichuan",
        True,
    )


def test_a_new_home_somewhere_says_where_the_speaker_lives_now() -> None:
    for text, city in {
        "Unpacking boxes in our new place in Krakow.": "Krakow",
        "Loving my new flat in Porto, the light is great.": "Porto",
    }.items():
        [claim] = RULES.claims(text)
        assert (claim.fact.subject, claim.fact.predicate, claim.fact.object, claim.change) == (
            "user",
            "lives_in",
            city,
            True,
        )


def test_a_regular_at_a_place_is_not_employed_there() -> None:
    assert not any(c[1] == "works_at" for c in claims("Dana is a regular at the Blue Bar."))


def test_a_person_named_after_a_relation_is_named_so() -> None:
    """A sentence like "My best friend Maya is ..." is about Maya, recorded with the relation that
    names her ("Maya (my best friend)"): no "best_friend_maya" attribute of the
    speaker, and not the "Maya Tanaka" of another sentence."""
    said = {
        "My best friend Maya is an engineer over at Meridian Pharma.": (
            "Maya (my best friend)",
            "works_at",
            "Meridian Pharma",
        ),
        "My coworker Omar has a job at Tidewater Bank in the finance team.": (
            "Omar (my coworker)",
            "works_at",
            "Tidewater Bank",
        ),
        "My sister Priya's birthday is on March 14.": ("Priya (my sister)", "birthday", "March 14"),
        "Our neighbour Jordan has a place in Halifax.": (
            "Jordan (our neighbour)",
            "lives_in",
            "Halifax",
        ),
    }
    for text, triple in said.items():
        assert {c[:3] for c in claims(text)} == {triple}
    [claim] = RULES.claims("My landlord Sofia's dog is called Clementine.")
    assert claim.fact.content == "my landlord Sofia's dog is Clementine"
    assert {c[:3] for c in claims("My sister is a nurse.")} == {("user", "sister", "nurse")}


def test_a_bare_first_name_is_the_only_related_person_of_that_name() -> None:
    assert identify("Hana", ["Hana (my old roommate)"]) == ("Hana (my old roommate)", ("Hana",))
    assert identify("Hana", ["Hana (my old roommate)", "Hana Tanaka"]) == ("Hana", ())
    assert identify("Hana (my old roommate)", ["Hana Tanaka"]) == ("Hana (my old roommate)", ())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Big news: I'm engaged.", ("user", "relationship_status", "engaged", False)),
        ("Relationship-wise I'm single.", ("user", "relationship_status", "single", False)),
        ("As far as I know Mateo is divorced.",
         ("Mateo", "relationship_status", "divorced", False)),
        ("Dana got married last year.", ("Dana", "relationship_status", "married", True)),
        ("Mateo is no longer single, officially engaged.",
         ("Mateo", "relationship_status", "engaged", True)),
        ("I'm pescatarian.", ("user", "diet", "pescatarian", False)),
        ("Felix went vegan recently.", ("Felix", "diet", "vegan", True)),
        ("Update: Yusuf eats strictly gluten-free.", ("Yusuf", "diet", "gluten-free", False)),
        ("Just so you know, I follow a paleo diet.", ("user", "diet", "paleo", False)),
        ("I'm living in Utrecht these days.", ("user", "lives_in", "Utrecht", True)),
    ],
)  # fmt: skip
def test_how_someone_is_partnered_and_eats_is_one_status(
    text: str, expected: tuple[str, str, str, bool]
) -> None:
    """A few words say how someone is partnered or what they eat: one value at a
    time (functional predicates), whatever verb says it; "I'm" is "I am"."""
    assert {c[:4] for c in claims(text)} == {expected}


def test_a_married_to_and_a_single_minded_are_no_status() -> None:
    assert {c[1] for c in claims("Dana is married to Sam.")} == {"married_to"}
    assert {c[1] for c in claims("Dana is single-minded about work.")} == {"is"}
