"""Seed 001 importance heuristic, with whole-word keyword matching."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ucma.errors import ValidationError
from ucma.memory.importance import (
    HIGH_IMPORTANCE_KEYWORDS,
    SOURCE_WEIGHTS,
    classify_importance,
    has_substance,
    matched_keywords,
)


def test_constants_are_the_seed_values() -> None:
    assert dict(SOURCE_WEIGHTS) == {
        "system": 0.90,
        "user": 0.70,
        "tool_result": 0.50,
        "environment": 0.30,
    }
    assert len(HIGH_IMPORTANCE_KEYWORDS) == 18
    assert {"error", "failed", "deadline", "fixed"} <= HIGH_IMPORTANCE_KEYWORDS


@pytest.mark.parametrize(
    ("content", "source", "expected"),
    [
        # 0.50*0.5 + (3 hits -> 0.30)*0.3 + (43/500)*0.2 = 0.25 + 0.09 + 0.0172
        ("The deployment failed with a critical error", "tool_result", 0.357),
        # 0.70*0.5 + (remember, preference, always -> 0.30)*0.3 + (45/500)*0.2 = 0.458
        ("Remember: my preference is dark mode, always.", "user", 0.458),
        # 0.30*0.5 + 0 + (7/500)*0.2 = 0.1528
        ("disk ok", "environment", 0.153),
        # only phatic words: no substance, 0, never stored
        ("ok", "environment", 0.0),
        # unknown source 0.40*0.5 + (1 hit)*0.3 + (17/500)*0.2 = 0.2 + 0.03 + 0.0068
        ("deadline tomorrow", "calendar", 0.237),
        # 0.90*0.5 + (cap 0.30)*0.3 + 1.0*0.2
        ("urgent critical error: must fix, deadline " + "x" * 500, "system", 0.74),
        # no whole-word hits: 0.70*0.5 + (29/500)*0.2 = 0.3616 (the seed's substring match
        # would count "error" and "important" and give 0.422)
        ("night terrors are unimportant", "user", 0.362),
    ],
)
def test_seed_examples(content: str, source: str, expected: float) -> None:
    assert classify_importance(content, source) == expected


def test_whole_word_matching() -> None:
    assert matched_keywords("night terrors, unimportant mustard, nevertheless") == frozenset()
    assert matched_keywords("Errors and WARNINGS; deadlines!") == {"error", "warning", "deadline"}
    assert matched_keywords("The job FAILED: error-prone code") == {"failed", "error"}
    assert matched_keywords("successes and preferences") == {"success", "preference"}
    assert matched_keywords("error error errors") == {"error"}  # distinct keywords count once


def test_source_is_normalised() -> None:
    assert classify_importance("hello", " User ") == classify_importance("hello", "user")


def test_non_strings_raise_validation_error() -> None:
    with pytest.raises(ValidationError):
        classify_importance(None, "user")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        classify_importance("text", 3)  # type: ignore[arg-type]


@given(st.text(max_size=2000), st.sampled_from([*SOURCE_WEIGHTS, "other", ""]) | st.text())
def test_score_is_bounded_and_rounded(content: str, source: str) -> None:
    score = classify_importance(content, source)
    assert 0.0 <= score <= 1.0
    assert 0.15 <= score <= 0.74 or (score == 0.0 and not has_substance(content))
    assert score == round(score, 3)


@pytest.mark.parametrize(
    "content",
    [
        "ok thanks",
        "lol",
        "Sounds good!",
        "haha nice",
        "👍",
        "hahahaha",
        "Yes.",
        "Thank you so much!!",
        "ok",
        "  ",
    ],
)
def test_content_without_substance_scores_zero(content: str) -> None:
    assert not has_substance(content)
    assert classify_importance(content, "user") == 0.0


@pytest.mark.parametrize(
    "content", ["Tom is 6.", "ok, my cat is sick", "I moved to Denver.", "lol the build broke"]
)
def test_content_with_substance_is_scored(content: str) -> None:
    assert has_substance(content)
    assert classify_importance(content, "user") > 0.2
