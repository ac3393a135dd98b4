"""Clean fact sentences, content-free text and staleness (pure; issue 12 "Answers")."""

from __future__ import annotations

from ucma.conflicts.answer import NOTHING, about_another, compose_answer
from ucma.conflicts.evidence import Evidence
from ucma.conflicts.phrasing import fact_sentence, is_content_free, is_stale
from ucma.types import Episode, Fact, Hit


def _fact(subject: str, predicate: str, obj: str, **kwargs: object) -> Fact:
    return Fact(
        id=f"f_{subject}_{predicate}_{obj}".replace(" ", "_"),
        user_id="u",
        content=f"{subject} {predicate} {obj}",
        created_at=1.0,
        subject=subject,
        predicate=predicate,
        object=obj,
        **kwargs,  # type: ignore[arg-type]
    )


def test_only_clean_triples_become_sentences() -> None:
    assert fact_sentence(_fact("Dana", "lives_in", "Denver")) == "Dana lives in Denver"
    assert fact_sentence(_fact("Dana", "birthday", "March 14")) == "Dana's birthday is March 14"
    assert (
        fact_sentence(_fact("Dana", "is", "allergic to peanuts")) == "Dana is allergic to peanuts"
    )
    for junk in (
        _fact("My", "birthday", "is"),
        _fact("Dana's", "birthday", "is"),
        _fact("Dana", "works_at", "Acme as a"),
        _fact("Dana", "vibes_with", "jazz"),
        _fact("Dana", "lives_in", " "),
    ):
        assert fact_sentence(junk) is None, junk


def test_chit_chat_is_content_free_and_superseded_or_expired_is_stale() -> None:
    for text in ("ok thanks", "lol", "Sounds good!", "hahaha", "Thank you so much"):
        assert is_content_free(text), text
    assert not is_content_free("ok, my flight is at 9")
    assert is_stale(_fact("Dana", "lives_in", "Boston", superseded_at=5.0), now=10.0)
    assert is_stale(_fact("Dana", "works_at", "Initech", valid_until=5.0), now=10.0)
    assert not is_stale(_fact("Dana", "works_at", "Initech", valid_until=50.0), now=10.0)


def test_a_broken_fact_is_replaced_by_its_source_or_skipped() -> None:
    broken = _fact("My", "birthday", "is", source_episode_ids=["ep1"])
    episode = Episode(
        id="ep1",
        user_id="u",
        content="My birthday is on March 14.",
        created_at=1.0,
        session_id="s",
        timestamp=1.0,
        source="Dana",
    )
    hit = Hit(memory=broken, score=0.9, relevance=1.0, source="dense")
    evidence = Evidence(current={broken.id: [broken]}, sources={broken.id: episode})
    answer = compose_answer(
        "birthday?", [hit], [broken], [], {}, review_factor=0.5, evidence=evidence
    )
    assert answer.response == 'From memory: Dana said: "My birthday is on March 14."'
    alone = Evidence(current={broken.id: [broken]})
    skipped = compose_answer(
        "birthday?", [hit], [broken], [], {}, review_factor=0.5, evidence=alone
    )
    assert skipped.response == NOTHING and skipped.confidence == 0.0


def test_what_is_said_of_someone_else_answers_nothing_about_the_asker_or_the_named() -> None:
    assert about_another(
        "What should you order for me at the café?", "My landlord Bruno orders a matcha latte."
    )
    assert not about_another(
        "What should you order for me at the café?", "My usual coffee order is a cold brew."
    )
    asked = "What screen appearance does my best friend Maya like?"
    assert about_another(asked, "Maya Tanaka likes high-contrast mode on all devices.")
    assert not about_another(asked, "My best friend Maya likes dark mode on all devices.")
    assert not about_another(asked, "Dark mode everywhere, please.")
