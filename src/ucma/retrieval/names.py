"""Finding known names in a query at a cost independent of how many are known.

A scope can know tens of thousands of people and entities; trying each name's
regular expression on every query made routing cost grow with them (709 ms
per query with 1,000 names). Here the names are indexed once by their token
paths (a flat trie): each name is split into tokens (runs of word characters,
or single other characters; whitespace only separates), folded for case, and
stored under the path of its tokens. A query is tokenised once and the paths
followed from each of its tokens, so the work per query depends on the
query's length, not on the number of names.

The trie only proposes candidates; each candidate is then checked with the
same whole-word expression as before (compiled once and cached), so the
semantics are exactly those of trying every name in turn:

- whole words, case-insensitive (Python's ``re.IGNORECASE``);
- a possessive ("Mel's", "Mel’s") counts as the name;
- longest name first, so "Mary Ann" wins over "Mary"; among names of the same
  length, the one listed first;
- a name's match may not overlap one already taken, and each name is reported
  once, at its first free occurrence.

Why a candidate is never missed: a match of a name starts where a text token
starts (the name is a whole word, or starts with a single-character token),
spans the same characters one for one, and ``re.IGNORECASE`` equates
characters whose case folds agree (``_fold`` adds the one exception it knows,
the dotless and dotted i), so the match's tokens fold to the name's tokens.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache

__all__ = [
    "NameIndex",
    "find_names",
    "mention_pattern",
    "name_index",
    "name_pattern",
    "remove_names",
]

_TOKEN = re.compile(r"\w+|[^\w\s]")
# re.IGNORECASE equates the Turkish dotless and dotted i with i; casefold does not.
_TURKISH_I = str.maketrans({"ı": "i", "İ": "i"})


def _fold(token: str) -> str:
    """The case-free form of a token (ASCII: its lower case)."""
    return token.lower() if token.isascii() else token.translate(_TURKISH_I).casefold()


@lru_cache(maxsize=8192)
def name_pattern(name: str) -> re.Pattern[str]:
    """The whole-word, case-insensitive expression for ``name``, possessive included."""
    return re.compile(rf"(?<!\w){re.escape(name)}(?:'s|’s)?(?!\w)", re.IGNORECASE)


@lru_cache(maxsize=8192)
def mention_pattern(name: str) -> re.Pattern[str]:
    """``name_pattern`` that also takes a plural ("the Lindqvists")."""
    return re.compile(rf"(?<!\w){re.escape(name)}(?:s|'s|’s)?(?!\w)", re.IGNORECASE)


class NameIndex:
    """Known names indexed by their token paths; build once per list, query often.

    ``names`` are stripped and de-duplicated (empty ones dropped); their order
    decides ties between names of the same length.

    The trie is flat: a name's path is its folded tokens joined by spaces (no
    token holds whitespace, so paths are unambiguous), ``_prefixes`` holds every
    leading part of every path and ``_ends`` the names at each full path. Strings
    rather than nested dicts keep a 100,000-name index out of the garbage
    collector's way (nested dicts made its build three times slower).
    """

    __slots__ = ("_ends", "_prefixes", "_rank", "names")

    def __init__(self, names: Iterable[str]) -> None:
        self.names: tuple[str, ...] = tuple(
            dict.fromkeys(s for n in names if n and (s := n.strip()))
        )
        self._rank = {name: rank for rank, name in enumerate(self.names)}
        self._prefixes: set[str] = set()
        self._ends: dict[str, str | list[str]] = {}
        folded: dict[str, str] = {}  # names share their words: fold each once
        prefixes, ends = self._prefixes, self._ends
        for name in self.names:
            path = ""
            for token in _TOKEN.findall(name):
                key = folded.get(token)
                if key is None:
                    key = folded[token] = _fold(token)
                path = f"{path} {key}" if path else key
                prefixes.add(path)
            other = ends.get(path)
            if other is None:
                ends[path] = name
            elif isinstance(other, str):
                ends[path] = [other, name]
            else:
                other.append(name)

    def __len__(self) -> int:
        return len(self.names)

    def candidates(self, text: str) -> list[str]:
        """Names whose tokens occur in order in ``text`` (a superset of the names
        ``text`` mentions), longest first, ties in listed order."""
        keys = [_fold(token) for token in _TOKEN.findall(text)]
        prefixes, ends = self._prefixes, self._ends
        found: set[str] = set()
        for start, path in enumerate(keys):
            position = start
            while path in prefixes:
                ended = ends.get(path)
                if isinstance(ended, str):
                    found.add(ended)
                elif ended is not None:
                    found.update(ended)
                position += 1
                if position == len(keys):
                    break
                path = f"{path} {keys[position]}"
        rank = self._rank
        return sorted(found, key=lambda name: (-len(name), rank[name]))

    def find(self, text: str) -> list[str]:
        """The names ``text`` mentions (see the module docstring), longest first."""
        found: list[str] = []
        taken: list[tuple[int, int]] = []
        for name in self.candidates(text):
            for match in name_pattern(name).finditer(text):
                span = match.span()
                if not any(span[0] < end and start < span[1] for start, end in taken):
                    taken.append(span)
                    found.append(name)
                    break
        return found


_CACHE_SIZE = 64
_cache: dict[int, tuple[Sequence[str], int, NameIndex]] = {}
_cache_lock = threading.Lock()


def name_index(known: Sequence[str] | NameIndex) -> NameIndex:
    """The ``NameIndex`` of ``known``, built once per list and cached.

    The cache is keyed by the sequence's identity (it holds a reference, so the
    identity stays unique) and checked against its length; a new sequence equal
    to a cached one reuses that index (a list compare, far cheaper than a
    build). A sequence must not be changed in place after it is routed unless
    its length changes too; pass a new list, or hold a ``NameIndex``.
    """
    if isinstance(known, NameIndex):
        return known
    with _cache_lock:
        entry = _cache.get(id(known))
        if entry is not None and entry[0] is known and entry[1] == len(known):
            return entry[2]
        same = next(
            (
                key
                for key, (other, size, _) in _cache.items()
                if size == len(known) and list(other) == list(known)
            ),
            None,
        )
        index = _cache.pop(same)[2] if same is not None else NameIndex(known)
        if len(_cache) >= _CACHE_SIZE:
            del _cache[next(iter(_cache))]
        _cache[id(known)] = (known, len(known), index)
        return index


def find_names(text: str, known: Sequence[str] | NameIndex) -> list[str]:
    """The known names ``text`` mentions as whole words, longest first."""
    return name_index(known).find(text)


def remove_names(text: str, names: Sequence[str]) -> str:
    """``text`` with every whole-word mention of ``names`` (possessives included)
    replaced by a space, longest name first (``names`` are those a query
    mentions: a handful, so no index is needed)."""
    for name in sorted(names, key=len, reverse=True):
        text = name_pattern(name).sub(" ", text)
    return text
