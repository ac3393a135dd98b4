"""Exact identifiers in text: emails, URLs, codes and ids.

Keyword analysis splits text into words, so "wendy@post.dev" became wendy /
post / dev and a search for it ranked "liam@post.dev" on the two shared parts;
"ALICE@ACME.IO" and "alice.smith@acme.io" differed only by insertion order.
An identifier is therefore also kept whole: a run of two or more word parts
(letters and digits) joined, with no whitespace, by connector characters
(``@ . _ - / + # ~ % = & ?`` and a URL's ``://``), such as
"alice.smith@acme.io", "INV-2024-0042", "https://x.io/a/b" or "ORD_9f3k2".
Trailing punctuation is not part of it ("write to a@b.io." ends at "io"). A
lone colon is not a connector: in prose it separates ("Note:see"), and in
query syntax it names a column ("col:x").

Both sides of keyword search use this one definition (the index's analysis in
storage, the query's terms in retrieval), so a whole identifier in a query
meets the same whole token in a document; being rare, it carries a high IDF
and an exact match dominates, while its parts still match partially. Ordinary
hyphenated words ("follow-up") are kept whole too, which only adds an exact
match where the text has one.
"""

from __future__ import annotations

import re

__all__ = ["IDENTIFIER", "identifiers"]

IDENTIFIER = re.compile(r"(?<![^\W_])[^\W_]++(?:(?:://|[-@._/+#~%=&?])+[^\W_]++)+")
"""A whole identifier: word parts joined by connectors, starting at a part's start.
(Possessive parts: a word followed by a space fails at once, without backtracking.)"""

# A word character, connectors, a word character: whether IDENTIFIER can match
# at all. It starts at the first connector (sre then skips ahead to the
# connector characters), so it is a few times cheaper than IDENTIFIER on text
# without identifiers, which is most of what gets indexed.
_CONNECTORS = r"(?:://|[-@._/+#~%=&?])*[^\W_]"
_JOINT = re.compile(rf"[-@._/+#~%=&?](?<=[^\W_].){_CONNECTORS}|:(?<=[^\W_]:)//{_CONNECTORS}")


def identifiers(text: str) -> list[str]:
    """The identifiers of ``text``, lower-cased, in order (repeats kept)."""
    if _JOINT.search(text) is None:
        return []
    return [match.lower() for match in IDENTIFIER.findall(text)]
