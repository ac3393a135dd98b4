"""The offline fact extractor and extractive summariser."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ucma.providers.heuristics import ExtractiveSummarizer, RuleFactExtractor

EXTRACT = RuleFactExtractor().extract


def triples(text: str, **kwargs: object) -> set[tuple[str, str, str]]:
    return {(f.subject, f.predicate, f.object) for f in EXTRACT(text, **kwargs)}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Carol is a nurse.", ("Carol", "is", "nurse")),
        ("Alice works at Acme Corp.", ("Alice", "works_at", "Acme Corp")),
        ("I work for the city council.", ("user", "works_at", "city council")),
        ("I prefer dark roast coffee.", ("user", "prefers", "dark roast coffee")),
        ("My favourite colour is teal.", ("user", "favourite_colour", "teal")),
        ("Bob lives in Lisbon.", ("Bob", "lives_in", "Lisbon")),
        ("Remember that Dana lives in Leeds.", ("Dana", "lives_in", "Leeds")),
        ("The JWT expiry is set to 30 minutes.", ("JWT expiry", "is_set_to", "30 minutes")),
        ("Michael is back. He wants to add tokens.", ("Michael", "wants_to", "add tokens")),
    ],
)  # fmt: skip
def test_common_statements(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in triples(text)


def test_speaker_names_first_person_and_with_clause() -> None:
    assert triples("I love jazz.", speaker="Zoe") == {("Zoe", "loves", "jazz")}
    assert triples("Michael is building a FastAPI app with JWT auth.") == {
        ("Michael", "building", "FastAPI app"),
        ("FastAPI app", "uses", "JWT auth"),
    }
    assert triples("My name is Ana and I like tea.") == {
        ("user", "name", "Ana"),
        ("user", "likes", "tea"),
    }


def test_dated_events_carry_valid_from() -> None:
    [fact] = EXTRACT("On 2024-05-03 Alice moved to Berlin.")
    assert (fact.subject, fact.predicate, fact.object) == ("Alice", "lives_in", "Berlin")
    assert fact.valid_from == datetime(2024, 5, 3, tzinfo=UTC).timestamp()
    [event] = EXTRACT("On 2024-05-03 Alice toured Berlin.")
    assert (event.subject, event.predicate, event.object) == ("Alice", "toured", "Berlin")
    reference = datetime(2023, 1, 1, tzinfo=UTC).timestamp()
    [started] = EXTRACT("Bob started his new job on March 7.", reference_time=reference)
    assert started.valid_from == datetime(2023, 3, 7, tzinfo=UTC).timestamp()


def test_nothing_from_chatter() -> None:
    assert triples("ok thanks!") == set()
    assert triples("He is tired.") == set()  # no antecedent for "he"


def test_summary_keeps_central_sentences_within_budget() -> None:
    summarizer = ExtractiveSummarizer(lambda text: len(text.split()))
    text = (
        "The deploy pipeline failed on the payment service. "
        "Lunch was pizza. "
        "The payment service deploy failed because the pipeline lost its cache. "
        "We fixed the pipeline cache and the payment service deploy passed."
    )
    summary = summarizer.summary(text, max_tokens=25)
    assert "Lunch was pizza." not in summary
    assert len(summary.split()) <= 25 and "payment service" in summary
    assert summarizer.summary("Short enough.", 10) == "Short enough."
    assert len(summarizer.summary("one two three four five six", 3).split()) == 3


def test_summary_with_the_packaged_tokenizer() -> None:
    text = " ".join(f"Sentence number {i} talks about topic {i % 3}." for i in range(40))
    summary = ExtractiveSummarizer().summary(text, max_tokens=40)
    assert 0 < len(summary) < len(text)
