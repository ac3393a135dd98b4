"""Seed 003 R1 temporal levels, R2 initial salience, R17 dampening."""

import pytest

from ucma.errors import ValidationError
from ucma.memory.levels import (
    TEMPORAL_DAMPENING,
    initial_salience,
    is_explicit_statement,
    select_temporal_level,
    temporal_dampening,
)


@pytest.mark.parametrize(
    ("content", "content_type", "level"),
    [
        # level 4: identity and permanent preferences
        ("User values clean code and developer experience", "fact", 4),
        ("User is a founder of two startups", "fact", 4),
        ("She believes tests are documentation", "fact", 4),
        ("User always uses dark mode", "preference", 4),
        ("User never deploys on a Friday", "fact", 4),
        ("My favourite editor is Helix", "preference", 4),
        ("tabs over spaces", "preference", 4),  # preference default
        # level 3: recurring patterns
        ("User typically reviews pull requests after lunch", "observation", 3),
        ("The team usually ships on Thursdays", "observation", 3),
        ("Every quarter the user plans the roadmap", "event", 3),
        ("Each week the user writes a status report", "observation", 3),
        ("Backups run every 2 weeks", "fact", 3),
        ("A pattern: builds break after dependency bumps", "observation", 3),
        # level 2: situational
        ("User is working on the Mind v5 MCP integration", "observation", 2),
        ("This week the focus is the release", "observation", 2),
        ("The current project uses Postgres", "fact", 2),
        ("Ship the billing project", "goal", 2),
        ("Learn Rust", "goal", 2),  # goal default
        # level 1: immediate
        ("User is debugging an API latency issue", "observation", 1),
        ("Right now the user wants terse answers", "preference", 1),
        ("Currently on the train", "observation", 1),
        ("In this session we use the staging database", "fact", 1),
        ("The build finished", "event", 1),
    ],
)
def test_r1_classes(content: str, content_type: str, level: int) -> None:
    assert select_temporal_level(content, content_type) == level


def test_r1_precedence() -> None:
    # a qualifier beats a topical word: "usually" (3) over "projects" (2)
    assert select_temporal_level("User usually works on side projects at night", "fact") == 3
    # among qualifiers the lowest level wins: "currently" (1) over "always" (4)
    assert select_temporal_level("User currently always answers in French", "fact") == 1
    assert select_temporal_level("User is currently working on project X", "observation") == 1
    # among topical words the lowest level wins: "project" (2) over "prefers" (4)
    assert select_temporal_level("For the current project the user prefers tabs", "preference") == 2
    # level-4 markers count only for facts and preferences
    assert select_temporal_level("The build never finished", "event") == 1
    assert select_temporal_level("The user is a regular here", "observation") == 1
    # whole words: "currently" is not "current", "valuesx" is not "values"
    assert select_temporal_level("currently", "goal") == 1
    assert select_temporal_level("valuesx", "fact") == 1
    # case and spacing
    assert select_temporal_level("RIGHT   NOW", "preference") == 1
    assert select_temporal_level("User values X", " Fact ") == 4


def test_unknown_content_type_raises() -> None:
    for content_type in ("memo", "", None, ["fact"]):
        with pytest.raises(ValidationError):
            select_temporal_level("text", content_type)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "content",
    [
        "I want answers in French",
        "I prefer tabs",
        "I really need a summary every morning",
        "I'd like shorter replies",
        "I\u2019d rather use Rust",
        "Please remember that the deploy key rotates monthly",
        "Don't forget my allergy",
        "My name is Sam",
        "my preferred editors are Helix and Vim",
    ],
)
def test_explicit_statements(content: str) -> None:
    assert is_explicit_statement(content)
    assert initial_salience(content, "user_stated", 0.3) == 1.0
    assert initial_salience(content, "observed", 0.3) == 1.0


def test_r2_values_per_provenance() -> None:
    plain = "The CI pipeline took 12 minutes"
    assert not is_explicit_statement(plain)
    assert not is_explicit_statement("I wanted to, but Myanmar is far")
    assert initial_salience(plain, "user_stated", 0.3) == 0.8
    assert initial_salience(plain, "inferred", 0.9) == 0.6
    assert initial_salience("I want this", "inferred", 0.9) == 0.6
    assert initial_salience(plain, "generated", 0.9) == 0.4
    assert initial_salience("I want this", "generated", 0.9) == 0.4
    # observed: the heuristic importance, bounded by R2's observation band [0.2, 0.8]
    assert initial_salience(plain, "observed", 0.457) == 0.457
    assert initial_salience(plain, "observed", 0.15) == 0.2
    assert initial_salience(plain, "observed", 0.95) == 0.8


def test_initial_salience_validation() -> None:
    with pytest.raises(ValidationError):
        initial_salience("x", "heard", 0.5)
    for importance in (-0.1, 1.1, float("nan"), True):
        with pytest.raises(ValidationError):
            initial_salience("x", "observed", importance)  # type: ignore[arg-type]


def test_dampening_table_is_r17() -> None:
    assert TEMPORAL_DAMPENING == {1: 1.0, 2: 0.5, 3: 0.25, 4: 0.1}
    assert [temporal_dampening(level) for level in (1, 2, 3, 4)] == [1.0, 0.5, 0.25, 0.1]
    with pytest.raises(TypeError):
        TEMPORAL_DAMPENING[1] = 2.0  # type: ignore[index]
    for level in (0, 5, True, 1.0):
        with pytest.raises(ValidationError):
            temporal_dampening(level)  # type: ignore[arg-type]
