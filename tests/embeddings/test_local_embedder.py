"""LocalEmbedder against the real packaged ONNX model and tokenizer."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ucma.embeddings.local as local_module
import ucma.embeddings.tokens as tokens_module
from ucma.embeddings import LocalEmbedder
from ucma.embeddings.base import preload
from ucma.errors import ConfigError, EmbeddingError, ValidationError

pytestmark = pytest.mark.integration

JWT = "The JWT token expired early because of clock skew"
AUTH = "authentication tokens expire too soon"
BREAD = "I baked banana bread"
SRC = Path(local_module.__file__).resolve().parents[2]
CHUNKED = LocalEmbedder(max_tokens=128, chunk=True)


@pytest.fixture
def embedder(local_embedder: LocalEmbedder) -> LocalEmbedder:
    """The session-wide real model from tests/conftest.py."""
    return local_embedder


def test_related_texts_score_higher_than_unrelated(embedder: LocalEmbedder) -> None:
    jwt, auth, bread = embedder.embed_sync([JWT, AUTH, BREAD])
    assert float(jwt @ auth) > 0.4
    assert float(jwt @ auth) > float(jwt @ bread) + 0.3
    assert float(auth @ bread) < 0.3


def test_output_shape_dtype_and_unit_norm(embedder: LocalEmbedder) -> None:
    vectors = embedder.embed_sync([JWT, AUTH, BREAD, "ok"])
    assert vectors.shape == (4, 384)
    assert vectors.dtype == np.float32
    assert vectors.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.model_id == "minilm-l6-v2-int8"
    assert embedder.dimension == 384


def test_empty_input_gives_zero_rows(embedder: LocalEmbedder) -> None:
    assert embedder.embed_sync([]).shape == (0, 384)


@pytest.mark.anyio
async def test_async_embed_matches_sync(embedder: LocalEmbedder) -> None:
    vectors = await embedder.embed([JWT, BREAD])
    np.testing.assert_allclose(vectors, embedder.embed_sync([JWT, BREAD]), atol=1e-6)
    assert (await embedder.embed([])).shape == (0, 384)


def test_batched_vector_equals_single_vector(embedder: LocalEmbedder) -> None:
    texts = [JWT, "short", AUTH + " " + BREAD * 5, BREAD]
    batched = embedder.embed_sync(texts)
    singles = np.vstack([embedder.embed_sync([text]) for text in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-5)


def test_order_is_restored_across_small_sorted_batches(embedder: LocalEmbedder) -> None:
    # Lengths deliberately unsorted so that length-sorting reorders them across batches of 3.
    texts = [f"{'very ' * (i * 7 % 11)}memory number {i} about topic {i % 4}" for i in range(20)]
    small_batches = LocalEmbedder(batch_size=3).embed_sync(texts)
    np.testing.assert_allclose(small_batches, embedder.embed_sync(texts), atol=1e-5)
    for i, text in enumerate(texts):
        assert float(small_batches[i] @ embedder.embed_sync([text])[0]) > 0.9999


def test_batches_stay_within_the_token_bound_and_vectors_do_not_change(
    embedder: LocalEmbedder,
) -> None:
    texts = [f"{'very ' * (i * 5 % 13)}memory number {i} about topic {i % 4}" for i in range(24)]
    narrow = LocalEmbedder(batch_tokens=40)
    shapes: list[tuple[int, ...]] = []
    runtime = narrow._loaded()
    session = runtime.session

    class Recording:
        def run(self, outputs: list[str], feeds: dict[str, np.ndarray]) -> Any:
            shapes.append(feeds["input_ids"].shape)
            return session.run(outputs, feeds)

    narrow._runtime = dataclasses.replace(runtime, session=Recording())
    np.testing.assert_allclose(narrow.embed_sync(texts), embedder.embed_sync(texts), atol=1e-5)
    assert sum(rows for rows, _ in shapes) == len(texts)
    # Each batch within 40 padded tokens unless it is a single window.
    assert all(rows * width <= 40 or rows == 1 for rows, width in shapes)
    assert len(shapes) > 2


def test_by_default_a_long_text_is_truncated_to_one_window(embedder: LocalEmbedder) -> None:
    head = " ".join(f"word{i}" for i in range(400))  # far beyond 256 word pieces
    a, b = embedder.embed_sync([head, head + " and a completely different ending about bread"])
    np.testing.assert_allclose(a, b, atol=1e-6)
    c, d = CHUNKED.embed_sync([head, head + " and a completely different ending about bread"])
    assert float(c @ d) < 0.9999  # chunked: the ending counts


_FILLER = (
    "We spent the morning reviewing the sprint backlog and agreed to move the reporting work to "
    "next week. The database migration is scheduled for Thursday night, and the operations team "
    "will watch the dashboards. Marketing asked for a new landing page, but the design is still "
    "waiting on copy from the product lead. Our test coverage rose to seventy percent after the "
    "refactoring of the billing module. The budget review is on Friday and finance wants the "
    "cloud costs split by team. We also discussed hiring two more backend engineers."
)
_TOPICS = ("sales figures", "office move", "onboarding", "security audit", "mobile release")


def _long_note(first_topic: int, last_paragraph: str) -> str:
    paragraphs = [f"About the {_TOPICS[(first_topic + k) % 5]}: {_FILLER}" for k in range(4)]
    return "\n\n".join([*paragraphs, last_paragraph])


def test_chunking_finds_a_fact_in_the_last_paragraph_of_a_long_memory(
    embedder: LocalEmbedder,
) -> None:
    """Issue 12: with chunking, all of a memory's text counts, not its first window."""
    notes = [
        _long_note(0, "Finally, my sister Beatrice keeps three alpacas named Pesto, Mango and "
                      "Juniper on her farm in Vermont."),
        _long_note(1, "Finally, the team lunch moved to the Italian place near the station."),
        _long_note(2, "Finally, the printer on the third floor needs new toner again."),
        _long_note(3, "Finally, remember to renew the domain name before it expires in October."),
        _long_note(4, "Finally, the conference talk proposal is due at the end of the month."),
    ]  # fmt: skip
    query = "What are the names of Beatrice's alpacas?"
    chunked = CHUNKED.embed_sync(notes) @ CHUNKED.embed_sync([query])[0]
    assert int(np.argmax(chunked)) == 0
    truncated = embedder.embed_sync(notes) @ embedder.embed_sync([query])[0]
    assert int(np.argmax(truncated)) != 0  # the default reads the first 256 word pieces


def test_chunked_texts_embed_deterministically_alone_or_in_any_batch() -> None:
    texts = [_long_note(k, f"Closing remark number {k}.") for k in range(3)] + [JWT, BREAD]
    first = CHUNKED.embed_sync(texts)
    np.testing.assert_array_equal(first, CHUNKED.embed_sync(texts))
    singles = np.vstack([CHUNKED.embed_sync([t]) for t in reversed(texts)])[::-1]
    np.testing.assert_allclose(first, singles, atol=1e-5)
    small = LocalEmbedder(batch_size=2, max_tokens=128, chunk=True).embed_sync(texts)
    np.testing.assert_allclose(first, small, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)


def test_a_text_within_one_window_is_not_chunked(embedder: LocalEmbedder) -> None:
    short = "Dana prefers meetings in the morning, before the stand-up."
    np.testing.assert_allclose(embedder.embed_sync([short]), CHUNKED.embed_sync([short]), atol=1e-6)


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ([""], "empty"),
        (["fine", "   \n"], "text 1"),
        (["fine", 3], "int"),
        ("a bare string", "sequence of texts"),
        (["bad \ud800 surrogate"], "surrogate"),
    ],
)
def test_invalid_input_raises_validation_error(
    embedder: LocalEmbedder, texts: object, message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        embedder.embed_sync(texts)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_async_invalid_input_raises_validation_error(embedder: LocalEmbedder) -> None:
    with pytest.raises(ValidationError):
        await embedder.embed(["ok", ""])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"batch_size": 0},
        {"batch_tokens": 0},
        {"intra_op_threads": 0},
        {"max_tokens": 2},
        {"max_tokens": 513},
        {"chunk_overlap": -1},
        {"chunk_overlap": 127},
        {"max_tokens": 32, "chunk_overlap": 16},
    ],
)
def test_invalid_settings_raise_config_error(kwargs: dict[str, int]) -> None:
    with pytest.raises(ConfigError):
        LocalEmbedder(**kwargs)


def test_default_threads_follow_cpu_count() -> None:
    assert LocalEmbedder().intra_op_threads == (os.cpu_count() or 1)
    assert LocalEmbedder(intra_op_threads=1).intra_op_threads == 1


def test_tampered_model_hash_raises_embedding_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_module, "MODEL_SHA256", "0" * 64)
    with pytest.raises(EmbeddingError, match="model.onnx .* has sha256 8199be6f"):
        LocalEmbedder().embed_sync([JWT])


def test_tampered_tokenizer_hash_raises_embedding_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens_module, "TOKENIZER_SHA256", "f" * 64)
    with pytest.raises(EmbeddingError, match="tokenizer.json"):
        LocalEmbedder().embed_sync([JWT])


def test_missing_model_file_raises_embedding_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(local_module, "_model_file", lambda: tmp_path / "model.onnx")
    with pytest.raises(EmbeddingError, match="missing or unreadable"):
        LocalEmbedder().load()


def test_altered_model_bytes_raise_embedding_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    original = local_module._model_file().read_bytes()
    altered = tmp_path / "model.onnx"
    altered.write_bytes(original[:-1] + bytes([original[-1] ^ 1]))
    monkeypatch.setattr(local_module, "_model_file", lambda: altered)
    with pytest.raises(EmbeddingError, match="expected 8199be6f"):
        LocalEmbedder().load()


def test_concurrent_first_use_loads_the_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = LocalEmbedder()
    loads: list[int] = []
    real_load = LocalEmbedder._load

    def counting_load(self: LocalEmbedder) -> object:
        loads.append(1)
        return real_load(self)

    monkeypatch.setattr(LocalEmbedder, "_load", counting_load)
    results: list[np.ndarray] = []
    barrier = threading.Barrier(4)

    def work() -> None:
        barrier.wait()
        results.append(fresh.embed_sync([JWT]))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(loads) == 1
    assert len(results) == 4
    for vector in results:
        np.testing.assert_allclose(vector, results[0], atol=1e-6)


@pytest.mark.anyio
async def test_warm_up_loads_the_model_once_before_the_first_embed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fresh = LocalEmbedder()
    loads: list[int] = []
    real_load = LocalEmbedder._load

    def counting_load(self: LocalEmbedder) -> object:
        loads.append(1)
        return real_load(self)

    monkeypatch.setattr(LocalEmbedder, "_load", counting_load)
    await fresh.warm_up()
    await fresh.warm_up()
    assert loads == [1]
    await fresh.embed([JWT])
    assert loads == [1]


@pytest.mark.anyio
async def test_preload_logs_a_broken_model_and_the_first_embed_raises_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(local_module, "_model_file", lambda: tmp_path / "model.onnx")
    broken = LocalEmbedder()
    await preload(broken)  # a background task: it must not raise
    assert "loading the embedding model" in caplog.text
    with pytest.raises(EmbeddingError, match="missing or unreadable"):
        await broken.embed([JWT])


def test_embeds_with_the_network_namespace_removed() -> None:
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n is not permitted here: {probe.stderr.decode().strip()}")
    script = textwrap.dedent(
        f"""
        import socket, sys
        from ucma.embeddings import LocalEmbedder
        interfaces = [name for _, name in socket.if_nameindex()]
        assert interfaces == ["lo"], interfaces
        vectors = LocalEmbedder().embed_sync([{JWT!r}, {AUTH!r}, {BREAD!r}])
        assert "huggingface_hub" not in sys.modules
        print(f"{{float(vectors[0] @ vectors[1]):.4f}} {{float(vectors[0] @ vectors[2]):.4f}}")
        """
    )
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SRC), "HOME": "/nonexistent"}
    result = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    related, unrelated = (float(x) for x in result.stdout.split())
    assert related > unrelated + 0.3


def test_no_memory_arena_keeps_the_peak_of_a_big_batch(embedder: LocalEmbedder) -> None:
    """onnxruntime's CPU arena would hold the largest batch's tensors for good (1.7 GB
    after 64 long texts); without it memory returns after each batch."""
    embedder.load()
    runtime = embedder._loaded()
    assert runtime.session.get_session_options().enable_cpu_mem_arena is False
