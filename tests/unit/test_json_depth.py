"""``json_depth``: the nesting of JSON text counted without parsing it, so it can guard
``json.loads`` (which raises RecursionError about a thousand levels down)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ucma.errors import InputLimitError, ValidationError
from ucma.validation import check_json_depth, json_depth

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:\n'),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(alphabet='[]{}"\\ab'), children, max_size=3)
    ),
    max_leaves=30,
)


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(v) for v in value.values()), default=0)
    return 0


@given(JSON)
def test_the_depth_of_valid_json_is_that_of_the_parsed_value(value: Any) -> None:
    # Brackets, quotes and backslashes inside strings do not count.
    text = json.dumps(value, ensure_ascii=False)
    assert json_depth(text) == depth_of(value)


@pytest.mark.parametrize("levels", [1_000, 400_000])
def test_deep_nesting_is_measured_without_recursion(levels: int) -> None:
    text = "[" * levels + "]" * levels
    assert json_depth(text) == levels
    with pytest.raises(InputLimitError, match=f"nests {levels} levels") as caught:
        check_json_depth(text, 64)
    assert isinstance(caught.value, ValidationError) and caught.value.limit == "max_json_depth"


def test_invalid_text_gives_an_answer_not_a_crash() -> None:
    assert json_depth('{"a": "unterminated [[[') >= 1
    assert json_depth("]]]]") == 0
    assert json_depth("\ud800[") == 1  # a lone surrogate
    check_json_depth('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', 2)  # all inside a string
