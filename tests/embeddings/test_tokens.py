"""TokenCounter with the packaged WordPiece tokenizer."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import ucma.embeddings.tokens as tokens_module
from ucma.embeddings import TokenCounter
from ucma.errors import EmbeddingError, ValidationError


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def test_counts_are_plausible(counter: TokenCounter) -> None:
    assert counter.count("hello world") == 2
    assert counter.count("Hello, World!") == 4
    # WordPiece splits unknown words into several pieces.
    assert counter.count("tokenization") == 2
    assert 8 <= counter.count("The JWT token expired early because of clock skew") <= 14


def test_empty_text_counts_zero(counter: TokenCounter) -> None:
    assert counter.count("") == 0
    assert counter.count_many([]) == []
    assert counter.count_many(["", "hello"]) == [0, 1]


def test_long_text_is_counted_without_truncation(counter: TokenCounter) -> None:
    assert counter.count("memory " * 5000) == 5000
    assert counter.count_many(["memory " * 1000, "ok"]) == [1000, 1]


def test_count_many_matches_count(counter: TokenCounter) -> None:
    texts = ["I baked banana bread", "naïve café déjà vu", "日本語のテキスト", "x" * 300, " "]
    assert counter.count_many(texts) == [counter.count(text) for text in texts]


@pytest.mark.parametrize("bad", [None, 3, b"bytes", "lone \ud800 surrogate"])
def test_invalid_text_raises_validation_error(counter: TokenCounter, bad: object) -> None:
    with pytest.raises(ValidationError):
        counter.count(bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        counter.count_many(["fine", bad])  # type: ignore[list-item]


def test_count_many_rejects_a_bare_string(counter: TokenCounter) -> None:
    with pytest.raises(ValidationError, match="use count"):
        counter.count_many("hello world")


def test_tampered_tokenizer_raises_embedding_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens_module, "TOKENIZER_SHA256", "0" * 64)
    with pytest.raises(EmbeddingError, match="sha256 be50c362"):
        TokenCounter().count("hello")


def test_missing_tokenizer_raises_embedding_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tokens_module, "_tokenizer_file", lambda: tmp_path / "tokenizer.json")
    with pytest.raises(EmbeddingError, match="missing or unreadable"):
        TokenCounter().count("hello")


def test_loaded_once_under_concurrent_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[int] = []
    real_load = tokens_module.load_tokenizer

    def counting_load() -> object:
        loads.append(1)
        return real_load()

    monkeypatch.setattr(tokens_module, "load_tokenizer", counting_load)
    counter = TokenCounter()
    barrier = threading.Barrier(4)
    counts: list[int] = []

    def work() -> None:
        barrier.wait()
        counts.append(counter.count("hello world"))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == [1]
    assert counts == [2, 2, 2, 2]


def test_load_tokenizer_returns_independent_instances() -> None:
    first = tokens_module.load_tokenizer()
    first.enable_truncation(max_length=4)
    second = tokens_module.load_tokenizer()
    assert second.truncation is None
    assert len(second.encode("one two three four five six").ids) == 8
