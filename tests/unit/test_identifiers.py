"""Identifiers kept whole, beside their parts, by keyword analysis and query terms."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ucma.identifiers import IDENTIFIER, identifiers
from ucma.retrieval.terms import keyword_terms
from ucma.storage.base import DEFAULT_BM25
from ucma.storage.index.keyword_cache import ScopeTerms, analyze


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Write to Wendy@Post.dev.", ["wendy@post.dev"]),
        ("alice.smith@acme.io, then alice@acme.io", ["alice.smith@acme.io", "alice@acme.io"]),
        ("Invoice INV-2024-0042 (paid)", ["inv-2024-0042"]),
        ("see https://x.io/a/b/ now", ["https://x.io/a/b"]),
        ("order ORD_9f3k2!", ["ord_9f3k2"]),
        ("plain words, Mel's cat; col:x at 10:30", []),
    ],
)
def test_identifiers_are_whole_lower_cased_runs_without_trailing_punctuation(text, found):
    assert identifiers(text) == found


def test_analysis_adds_the_whole_identifier_to_its_stemmed_parts():
    assert analyze("Mail WENDY@post.dev today") == [
        "mail",
        "wendi",
        "post",
        "dev",
        "today",
        "wendy@post.dev",
    ]
    assert analyze("She RUNS; the runners' café!") == ["she", "run", "the", "runner", "cafe"]


def test_query_terms_hold_the_identifier_then_its_parts():
    assert keyword_terms("Who is ALICE@ACME.IO?") == ["alice@acme.io", "alice", "acme", "io"]
    assert keyword_terms("status of INV-2024-0042") == [
        "status",
        "inv-2024-0042",
        "inv",
        "2024",
        "0042",
    ]
    assert keyword_terms("What did Caroline research?") == ["caroline", "research"]


def test_an_exact_identifier_outscores_shared_parts_whatever_the_row_order():
    for texts in (
        ["alice@acme.io", "alice.smith@acme.io"],
        ["alice.smith@acme.io", "alice@acme.io"],
    ):
        index = ScopeTerms()
        index.append([(f"Send it to {text}", "") for text in texts])
        positions, scores = index.scores(keyword_terms("ALICE@ACME.IO"), None, None, DEFAULT_BM25)
        by_row = dict(zip(positions.tolist(), scores.tolist(), strict=True))
        exact = texts.index("alice@acme.io")
        assert by_row[exact] > by_row[1 - exact] > 0


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="ab9_é .:/-@?#,'", max_size=16))
def test_the_quick_check_never_hides_an_identifier(text: str):
    assert identifiers(text) == [found.lower() for found in IDENTIFIER.findall(text)]
