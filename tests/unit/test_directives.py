"""Reading the requests a standing instruction applies to (retrieval/directives.py)."""

from __future__ import annotations

import pytest

from ucma.retrieval.directives import condition


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Always include status codes when I ask about API error handling.", "API error handling"),
        ("Whenever we talk about travel plans, list prices in euros.", "travel plans"),
        ("If I ask you for a recipe, please keep it vegetarian.", "a recipe"),
        ("Never use bullet points any time I ask about my essays!", "my essays"),
        ("Thanks! Please use metric units when we discuss running.", "running"),
    ],
)
def test_the_requests_an_instruction_governs(text: str, expected: str) -> None:
    assert condition(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Please always use dark mode for me.",  # holds for everything: no condition
        "When I talk about my dad, it gets emotional.",  # tells the assistant nothing
        "I'll use these when I talk to the filmmakers in August.",  # the speaker's own plan
        "Should I always include tests when I ask about code?",  # a question
        "When we discuss money my sister always gets nervous and changes the subject, "
        + "which happened again at the wedding last year " * 5,  # a story, not a request
        "",
    ],
)
def test_no_instruction(text: str) -> None:
    assert condition(text) is None
