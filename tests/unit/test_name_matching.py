"""Known names in queries: the token index agrees with trying every name's expression."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ucma.retrieval.names import NameIndex, find_names, name_index, remove_names
from ucma.retrieval.router import named_entities, route, without_names


def reference_names(text: str, known: list[str]) -> list[str]:
    """The straightforward matcher: every name's expression tried in turn, longest
    first (ties in listed order), each taking its first occurrence not overlapping
    one already taken."""
    found: list[str] = []
    taken: list[tuple[int, int]] = []
    names = dict.fromkeys(n.strip() for n in known if n and n.strip())
    for name in sorted(names, key=len, reverse=True):
        pattern = re.compile(rf"(?<!\w){re.escape(name)}(?:'s|’s)?(?!\w)", re.IGNORECASE)
        for match in pattern.finditer(text):
            span = match.span()
            if not any(span[0] < end and start < span[1] for start, end in taken):
                taken.append(span)
                found.append(name)
                break
    return found


# Few distinct words, so that names overlap, share first words and recur in texts;
# case variants, possessives, punctuation, digits and letters whose case rules differ.
_WORDS = [
    "Mary",
    "mary",
    "Ann",
    "ANN",
    "Al",
    "al",
    "Mel",
    "O'Brien",
    "Jo",
    "José",
    "JOSÉ",
    "Straße",
    "STRASSE",
    "Iris",
    "IRIS",
    "ıris",
    "İris",
    "x1",
    "C++",
    "AT&T",
    "#ops",
    "Dr.",
    "van",
    "de",
    "s",
    "'s",
    "’s",
    "-",
    ".",
    "!",
]
_SEPARATORS = [" ", " ", " ", "  ", "-", "'s ", "’s ", ", ", "\t", ""]

_word = st.sampled_from(_WORDS)
_name = st.lists(
    st.tuples(_word, st.sampled_from([" ", " ", "-", ". ", ""])), min_size=1, max_size=3
).map(lambda parts: "".join(w + s for w, s in parts))
_text = st.lists(st.tuples(_word, st.sampled_from(_SEPARATORS)), max_size=14).map(
    lambda parts: "".join(w + s for w, s in parts)
)


@settings(max_examples=400, deadline=None)
@given(text=_text, known=st.lists(_name, max_size=8))
def test_the_index_agrees_with_the_reference(text: str, known: list[str]):
    assert NameIndex(known).find(text) == reference_names(text, known)


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=40), known=st.lists(st.text(min_size=1, max_size=6), max_size=6))
def test_the_index_agrees_on_arbitrary_ascii_and_latin_text(text: str, known: list[str]):
    # Plain random strings, kept to Latin script where re's case rules and
    # Unicode case folding agree on word boundaries.
    text = "".join(ch for ch in text if ord(ch) < 0x250)
    known = ["".join(ch for ch in name if ord(ch) < 0x250) for name in known]
    assert NameIndex(known).find(text) == reference_names(text, known)


def test_longest_whole_word_names_win_and_possessives_count():
    known = ["Mary", "Mary Ann", "Al", "Mel"]
    assert named_entities("Did Mary Ann's sister call?", known) == ["Mary Ann"]
    assert named_entities("Ask ALICE and mary", known) == ["Mary"]
    assert named_entities("Mel’s cat and Mel's dog met Mary", known) == ["Mary", "Mel"]
    assert named_entities("Mary Ann met Mary", known) == ["Mary Ann", "Mary"]


def test_names_with_punctuation_and_repeats_in_other_case():
    known = ["C++", "AT&T", "#ops", "O'Brien", "Dr. Who", "mary", "Mary"]
    text = "Did O'BRIEN at at&t use c++ with dr. who in #ops? Mary and MARY"
    assert find_names(text, known) == reference_names(text, known)
    assert set(find_names(text, known)) == set(known)


def test_the_index_is_built_once_per_list_and_reused_for_an_equal_one():
    known = [f"Person {i}" for i in range(50)]
    first = name_index(known)
    assert name_index(known) is first
    assert name_index(list(known)) is first  # the engine re-reads its names as a new list
    grown = [*known, "Zed"]
    assert name_index(grown) is not first and named_entities("Ask Zed", grown) == ["Zed"]
    index = NameIndex(known)
    assert name_index(index) is index and len(index) == 50
    assert route(
        "Where does Person 7 live?", reference_time=0.0, known_entities=index
    ).entities == ["Person 7"]


def test_removing_names_keeps_the_rest_of_the_query():
    assert without_names("When did Mel's sister visit Mary Ann?", ["Mary Ann", "Mel"]) == (
        "When did sister visit?"
    )
    assert remove_names("MEL met mel", ["Mel"]) == "  met  "
    assert without_names("Caroline?", ["Caroline"]) == ""
