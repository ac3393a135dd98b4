"""Which texts "forget this person" matches (ucma.privacy.erasure, pure)."""

from __future__ import annotations

import pytest

from ucma.errors import ValidationError
from ucma.privacy.erasure import IdentifierMatcher, check_identifiers


def test_names_match_on_word_boundaries_in_any_case_and_spacing() -> None:
    match = IdentifierMatcher(["Ann Lee"])
    assert match("I met ann  lee yesterday")
    assert match("ANN LEE's bike")
    assert not match("Anna Leeds called")
    assert not match("planning")


def test_emails_match_whole_and_in_json_escapes() -> None:
    match = IdentifierMatcher(["josé@example.org"])
    assert match('{"to": "Jos\\u00e9@example.org"}')
    assert not match("xjosé@example.org.uk is someone else")  # a longer address


def test_numbers_match_in_any_grouping_but_not_inside_longer_numbers() -> None:
    match = IdentifierMatcher(["+46 70 123 45 67"])
    assert match("call 46701234567")
    assert match("(46) 70-123-45-67")
    assert not match("order 1467012345678")
    assert not match("70 123")


def test_tokens_match_exactly() -> None:
    match = IdentifierMatcher(["Greta"], ["[email_3f2a9c1b]"])
    assert match("mail [email_3f2a9c1b] today")
    assert not match("mail [email_3f2a9c1c] today")


@pytest.mark.parametrize("bad", [[], [""], ["x"], ["--"], [1], "", ["y" * 257]])
def test_identifiers_too_vague_or_malformed_are_refused(bad: object) -> None:
    with pytest.raises(ValidationError):
        check_identifiers(bad)


def test_identifiers_are_stripped_and_deduplicated() -> None:
    assert check_identifiers(["  Ann   Lee ", "Ann Lee", "a@b.io"]) == ["Ann Lee", "a@b.io"]
    assert check_identifiers("Ann") == ["Ann"]
