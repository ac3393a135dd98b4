"""The in-memory keyword index: text analysis, BM25F scores, changes in place."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ucma.errors import ValidationError
from ucma.storage.base import DEFAULT_BM25, Bm25
from ucma.storage.index.keyword_cache import ScopeTerms, analyze


def _index(*texts: tuple[str, str]) -> ScopeTerms:
    terms = ScopeTerms()
    terms.append(list(texts))
    return terms


def _scores(terms: ScopeTerms, words: list[str], params: Bm25 = DEFAULT_BM25, **masks) -> dict:
    positions, scores = terms.scores(words, masks.get("live"), masks.get("visible"), params)
    return dict(zip(positions.tolist(), scores.tolist(), strict=True))


def test_analysis_lowers_splits_stems_and_folds_diacritics():
    assert analyze("She RUNS; the runners' café!") == ["she", "run", "the", "runner", "cafe"]
    assert analyze("NEAR(a* OR b) col:x \x00") == ["near", "a", "or", "b", "col", "x"]
    assert analyze("") == []


def test_scores_follow_the_bm25f_formula():
    terms = _index(("kettle kettle boiled", "tea"), ("tea time", "kettle"), ("nothing", ""))
    params = Bm25(k1=1.2, b=0.75, context_weight=0.5)
    found = _scores(terms, ["kettle"], params)
    assert set(found) == {0, 1}
    lengths = np.array([[3, 1], [2, 1], [1, 0]], dtype=float)
    average = lengths.mean(axis=0)
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))

    def expected(in_content: int, in_context: int, row: int) -> float:
        tf = in_content / (1 - 0.75 + 0.75 * lengths[row, 0] / average[0])
        tf += 0.5 * in_context / (1 - 0.75 + 0.75 * lengths[row, 1] / average[1])
        return idf * tf * 2.2 / (tf + 1.2)

    # Scores are BM25F over the most the query's terms allow (idf x (k1 + 1) each).
    most = idf * 2.2
    assert found[0] == pytest.approx(expected(2, 0, 0) / most)
    assert found[1] == pytest.approx(expected(0, 1, 1) / most)
    assert 1 not in _scores(terms, ["kettle"], Bm25(context_weight=0.0))
    # A query word no row holds counts with document frequency 0: matching the
    # rest of the query is only part of it.
    unseen = math.log(1 + (3 - 0 + 0.5) / (0 + 0.5))
    partial = _scores(terms, ["kettle", "samovar"], params)
    assert partial[0] == pytest.approx(expected(2, 0, 0) / (most + unseen * 2.2))
    assert all(0 < score <= 1 for score in partial.values())


def test_masks_filter_rows_and_deleted_rows_leave_the_statistics():
    terms = _index(("rare word", ""), ("common word", ""), ("common thing", ""))
    visible = np.array([True, False, True])
    assert set(_scores(terms, ["word", "common"], visible=visible)) == {0, 2}
    everyone = _scores(terms, ["common", "rare"])
    live = np.array([True, True, False])  # the third row deleted: "common" is rarer
    # ... so it carries more of the query's information, and row 1 matches more of it.
    assert _scores(terms, ["common", "rare"], live=live, visible=live)[1] > everyone[1]


def test_retext_and_compact_keep_positions_and_postings_in_step():
    terms = _index(("alpha one", ""), ("beta two", ""), ("gamma three", ""))
    terms.retext(1, ("beta two", ""), ("delta two", ""))
    assert set(_scores(terms, ["beta"])) == set()
    assert set(_scores(terms, ["delta"])) == {1}
    terms.compact(np.array([1, 2]))
    assert terms.n == 2
    assert set(_scores(terms, ["delta"])) == {0}
    assert set(_scores(terms, ["gamma"])) == {1}
    assert _scores(terms, ["alpha"]) == {}
    terms.append([("alpha again", "")])
    assert set(_scores(terms, ["alpha"])) == {2}


def test_unknown_words_and_empty_indexes_match_nothing():
    assert _scores(ScopeTerms(), ["anything"]) == {}
    assert _scores(_index(("hello", "")), ["goodbye", "", "   "]) == {}


@pytest.mark.parametrize("bad", [{"k1": 0.0}, {"b": 1.5}, {"context_weight": -1.0}])
def test_parameters_are_checked(bad):
    with pytest.raises(ValidationError):
        Bm25(**bad)


def test_analysis_is_safe_from_several_threads():
    import threading

    words = [
        f"{stem}{suffix}"
        for stem in ("walk", "jump", "paint", "cook")
        for suffix in ("ing", "ed", "s", "er", "ingly")
    ] * 50
    expected = analyze(" ".join(words))
    results: list[list[str]] = []

    def work() -> None:
        from ucma.storage.index import keyword_cache

        keyword_cache._STEMS.clear()  # force the stemmers to run concurrently
        results.append(analyze(" ".join(words)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * 4


def test_term_ids_follow_first_appearance_not_hashing():
    terms = _index(("zebra apple zebra", "mango apple"), ("kiwi", "zebra"))
    assert list(terms.vocabulary) == ["zebra", "appl", "mango", "kiwi"]
    assert list(terms.vocabulary.values()) == [0, 1, 2, 3]
