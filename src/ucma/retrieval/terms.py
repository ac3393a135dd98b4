"""Turning user text into keyword-search terms.

User text is never handed to a search engine as query syntax: it is split
into plain word tokens here, and storage backends quote each token. Words that
carry no topic (articles, pronouns, question words) are dropped so that BM25
scores reflect what the query is about. An exact identifier (an email, URL,
code or id, see ``ucma.identifiers``) is a term of its own, lower-cased,
ahead of its parts, so keyword search can match it whole.
"""

from __future__ import annotations

import re

from ucma.identifiers import IDENTIFIER

__all__ = ["STOPWORDS", "keyword_terms"]

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_IDENTIFIER_OR_WORD = re.compile(
    rf"(?P<identifier>{IDENTIFIER.pattern})|(?P<word>{_WORD.pattern})", re.UNICODE
)

STOPWORDS: frozenset[str] = frozenset(
    word
    for line in """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having
    he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm
    i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor not
    of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them themselves
    then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's
    where where's which while who who's whom why why's with won't would wouldn't you you'd
    you'll you're you've your yours yourself yourselves did does do tell know please also just
    """.splitlines()
    for word in line.split()
)


def keyword_terms(text: str, *, max_terms: int = 64) -> list[str]:
    """Distinct lower-case content words of ``text``, in order of first appearance;
    an identifier comes whole, then its parts ("wendy@post.dev", "wendy", "post", "dev").

    Stopwords are dropped unless nothing else is left (a query of only
    stopwords still searches for them). At most ``max_terms`` are returned, so
    a very long query cannot produce an unbounded search expression.
    """
    words: list[str] = []
    whole: set[str] = set()  # the identifiers, never stopwords
    for match in _IDENTIFIER_OR_WORD.finditer(text):
        if match.lastgroup == "identifier":
            identifier = match.group().lower()
            whole.add(identifier)
            words.append(identifier)
            words.extend(w.lower().replace("’", "'") for w in _WORD.findall(identifier))
        else:
            words.append(match.group().lower().replace("’", "'"))
    seen: dict[str, None] = {}
    for word in words:
        if word in whole or word not in STOPWORDS:
            seen.setdefault(word, None)
    if not seen:
        for word in words:
            seen.setdefault(word, None)
    return list(seen)[:max_terms]
