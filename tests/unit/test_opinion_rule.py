"""The opinion evolution rule (ucma.paradigms.opinions): gradual, bounded, and the
replacement threshold exactly where the configuration puts it."""

from __future__ import annotations

import pytest

from ucma.config import OpinionConfig
from ucma.errors import ConfigError
from ucma.paradigms.opinions import evolve, opinion_key, reinforced, stance_of_change, weakened

CONFIG = OpinionConfig()  # rate 0.5, plain 0.5, change 1.0, replace below 0.35


def test_reinforcing_moves_a_share_of_the_way_to_one() -> None:
    assert reinforced(0.6, 0.5, 0.5) == pytest.approx(0.7)
    assert reinforced(0.6, 1.0, 0.5) == pytest.approx(0.8)
    step = evolve(0.6, True, CONFIG.plain_weight, CONFIG)
    assert step.confidence == pytest.approx(0.7) and not step.replaced


def test_weakening_takes_a_share_away() -> None:
    assert weakened(0.6, 0.5, 0.5) == pytest.approx(0.45)
    assert weakened(0.6, 1.0, 0.5) == pytest.approx(0.3)


def test_confidence_never_leaves_the_open_interval() -> None:
    up, down = 0.6, 0.6
    for _ in range(30):
        up = evolve(up, True, 1.0, CONFIG).confidence
        down = evolve(down, False, 1.0, CONFIG).confidence
    assert 0.999 < up < 1.0
    assert 0.0 < down < 1e-8


def test_replacement_happens_strictly_below_the_threshold() -> None:
    # A stated change halves the confidence: 0.7 lands on the threshold and stays.
    at = evolve(0.7, False, CONFIG.change_weight, CONFIG)
    assert at.confidence == pytest.approx(CONFIG.replace_below) and not at.replaced
    below = evolve(0.6999, False, CONFIG.change_weight, CONFIG)
    assert below.replaced
    # Plain evidence takes a quarter: 0.35 / 0.75 is the lowest it never replaces.
    edge = CONFIG.replace_below / 0.75
    assert not evolve(edge + 1e-9, False, CONFIG.plain_weight, CONFIG).replaced
    assert evolve(edge - 1e-6, False, CONFIG.plain_weight, CONFIG).replaced


def test_gradual_not_sudden() -> None:
    """One plain contrary statement never replaces an opinion formed at the initial
    confidence; two do; a reinforced opinion survives a stated change once."""
    first = evolve(CONFIG.initial_confidence, False, CONFIG.plain_weight, CONFIG)
    assert not first.replaced
    assert evolve(first.confidence, False, CONFIG.plain_weight, CONFIG).replaced
    firm = evolve(CONFIG.initial_confidence, True, 1.0, CONFIG).confidence  # 0.8
    assert not evolve(firm, False, CONFIG.change_weight, CONFIG).replaced


@pytest.mark.parametrize("weight", [0.0, -0.1, 1.5])
def test_weights_outside_zero_one_are_refused(weight: float) -> None:
    with pytest.raises(ValueError, match="weight"):
        evolve(0.5, True, weight, CONFIG)


def test_configuration_is_checked() -> None:
    with pytest.raises(ConfigError):
        OpinionConfig(replace_below=0.7, initial_confidence=0.6)
    with pytest.raises(ConfigError):
        OpinionConfig(rate=1.5)
    with pytest.raises(ConfigError):
        OpinionConfig(change_weight=0.0)


@pytest.mark.parametrize(
    ("text", "stance"),
    [
        ("Alice switched to light mode.", "light mode"),
        ("Bob moved over to Neovim last week; he says it is faster", "Neovim last week"),
        ("Dana now prefers oat milk", "oat milk"),
        ("We went back to Postgres instead.", "Postgres"),
        ("Alice prefers dark mode.", None),
    ],
)
def test_stance_of_a_stated_change(text: str, stance: str | None) -> None:
    assert stance_of_change(text) == stance


def test_opinion_keys_fold_case_and_punctuation() -> None:
    assert opinion_key("Alice's  Editor-Theme!") == opinion_key("alice s editor theme")
