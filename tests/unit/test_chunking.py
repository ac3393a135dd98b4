"""Pure window planning for long texts (ucma.embeddings.chunking)."""

from __future__ import annotations

import pytest

from ucma.embeddings.chunking import plan_windows, sentence_starts, token_boundaries


def test_sentence_starts_follow_punctuation_and_line_breaks() -> None:
    text = 'First one. "Quoted!" Next?\nA line\n\n  Indented. e.g.x stays'
    starts = sentence_starts(text)
    assert [text[s : s + 4] for s in starts] == ["Firs", '"Quo', "Next", "A li", "Inde", "e.g."]
    assert sentence_starts("One sentence only.") == [0]
    assert sentence_starts("Trailing break.\n") == [0]


def test_token_boundaries_map_each_sentence_to_its_first_token() -> None:
    # Tokens start at these characters; sentences at 0, 11 (inside token 3's span) and 30.
    token_starts = [0, 4, 9, 12, 20, 30, 35]
    assert token_boundaries(token_starts, [0, 11, 30]) == [0, 3, 5]
    assert token_boundaries(token_starts, [0, 40]) == [0]  # past the last token
    assert token_boundaries(token_starts, [0, 1, 2]) == [0, 1]  # no duplicates
    assert token_boundaries([], [0]) == []


def test_a_short_text_is_one_window() -> None:
    assert plan_windows(0, [], 126, 16) == [(0, 0)]
    assert plan_windows(126, [40, 80], 126, 16) == [(0, 126)]


def test_windows_end_on_sentence_boundaries_and_overlap_whole_sentences() -> None:
    boundaries = list(range(0, 300, 20))  # a sentence every 20 tokens
    spans = plan_windows(300, boundaries, 126, 16)
    assert spans == [(0, 120), (120, 240), (180, 300)]
    # With a sentence start inside the overlap, the next window re-reads that sentence.
    assert plan_windows(300, [0, 110, 120, 230, 240], 126, 16) == [
        (0, 120),
        (110, 230),
        (230, 300),
    ]
    # A last sentence shorter than half a window is read with the text before it.
    assert plan_windows(250, [0, 120, 240], 126, 16) == [(0, 120), (120, 240), (124, 250)]


def test_hard_cuts_overlap_by_tokens_and_the_last_window_is_full() -> None:
    spans = plan_windows(10, [], 4, 1)
    assert spans == [(0, 4), (3, 7), (6, 10)]
    assert plan_windows(11, [], 4, 1) == [(0, 4), (3, 7), (6, 10), (7, 11)]


@pytest.mark.parametrize("n", [127, 200, 513, 1000, 4321])
@pytest.mark.parametrize("step", [7, 25, 60, 1000])
def test_windows_cover_everything_within_size_and_progress(n: int, step: int) -> None:
    boundaries = list(range(0, n, step))
    spans = plan_windows(n, boundaries, 126, 16)
    assert spans[0][0] == 0 and spans[-1][1] == n
    for (start, end), (next_start, next_end) in zip(spans, spans[1:], strict=False):
        assert start < next_start <= end < next_end  # covered, no gaps, always forward
    for (_, end), (next_start, _) in zip(spans, spans[1:-1], strict=False):
        assert end - next_start <= 16  # bounded overlap, except for the full last window
    assert all(0 < end - start <= 126 for start, end in spans)
    assert spans[-1][1] - spans[-1][0] >= 126 // 2  # no tiny fragment at the end
    assert plan_windows(n, boundaries, 126, 16) == spans  # deterministic


@pytest.mark.parametrize(("window", "overlap"), [(1, 0), (126, 63), (126, -1), (10, 5)])
def test_invalid_window_or_overlap_raise(window: int, overlap: int) -> None:
    with pytest.raises(ValueError, match="window"):
        plan_windows(1000, [], window, overlap)
