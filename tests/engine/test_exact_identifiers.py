"""Exact identifiers (emails, codes, ids, URLs) found exactly and case-insensitively.

Through the public API on a real SQLite file: an identifier in the query
matches the memory holding that identifier first, ahead of memories sharing
its parts, whatever order the memories were stored in and whatever the case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import ucma
from ucma.embeddings import LocalEmbedder

pytestmark = pytest.mark.integration


def _store(path: Path, embedder: LocalEmbedder, contents: list[str]) -> ucma.Memory:
    memory = ucma.Memory(path, user_id="alice", embedder=embedder)
    for content in contents:
        memory.observe(content)
    return memory


def _first(memory: ucma.Memory, query: str) -> list[str]:
    # Emails are stored as tokens (the content guard, docs/privacy.md); their owner
    # reads them back whole.
    return [memory.detokenise(hit.content) for hit in memory.recall(query).hits]


@pytest.mark.parametrize("wendy_first", [True, False])
def test_an_email_finds_its_memory_before_one_sharing_the_domain(
    tmp_path: Path, local_embedder: LocalEmbedder, wendy_first: bool
):
    # The short memory repeats the shared parts' weight: by parts alone it ranked first.
    wendy = (
        "Please remember that the volunteer coordinator can be reached at wendy@post.dev"
        " during the week."
    )
    liam = "Mail liam@post.dev"
    contents = [wendy, liam] if wendy_first else [liam, wendy]
    with _store(tmp_path / "memory.db", local_embedder, contents) as memory:
        assert _first(memory, "wendy@post.dev")[0] == wendy
        assert _first(memory, "Which memory mentions LIAM@POST.DEV?")[0] == liam


@pytest.mark.parametrize("short_first", [True, False])
def test_an_email_in_other_case_beats_a_longer_one_containing_its_parts(
    tmp_path: Path, local_embedder: LocalEmbedder, short_first: bool
):
    # Worded differently: near-identical sentences would be merged as duplicates (R4).
    short = "Send the signed contract to alice@acme.io by Friday."
    longer = "Alice Smith from procurement writes from alice.smith@acme.io about invoices."
    contents = [short, longer] if short_first else [longer, short]
    with _store(tmp_path / "memory.db", local_embedder, contents) as memory:
        found = _first(memory, "ALICE@ACME.IO")
        assert found[0] == short and found.index(longer) > 0
        assert _first(memory, "Alice.Smith@Acme.IO")[0] == longer


@pytest.mark.parametrize("ordered_first", [True, False])
def test_order_codes_urls_and_ids_match_exactly(
    tmp_path: Path, local_embedder: LocalEmbedder, ordered_first: bool
):
    ordered = "Invoice INV-2024-0042 was paid in full by the customer."
    other = "Invoice INV-2024-0043 was paid in full by the customer."
    link = "The design review notes are at https://x.io/a/b for everyone."
    other_link = "Holiday photos from the team trip were uploaded to https://x.io/a/c yesterday."
    order_id = "Order ORD_9f3k2 shipped from the Lisbon warehouse."
    other_id = "Order ORD_7q1m8 shipped from the Lisbon warehouse."
    pairs = [(ordered, other), (link, other_link), (order_id, other_id)]
    contents = [text for pair in pairs for text in (pair if ordered_first else pair[::-1])]
    with _store(tmp_path / "memory.db", local_embedder, contents) as memory:
        assert _first(memory, "inv-2024-0042")[0] == ordered
        assert _first(memory, "What about invoice INV-2024-0043?")[0] == other
        assert _first(memory, "https://x.io/a/b")[0] == link
        assert _first(memory, "where is ord_9F3K2")[0] == order_id


def test_an_identifier_still_matches_by_its_parts(tmp_path: Path, local_embedder: LocalEmbedder):
    email = "Contact address on file: wendy@post.dev for the newsletter."
    with _store(tmp_path / "memory.db", local_embedder, [email]) as memory:
        assert _first(memory, "What is Wendy's address?")[0] == email
