"""LocalEmbedder against the real packaged ONNX model and tokenizer."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import ucma.embeddings.local as local_module
import ucma.embeddings.tokens as tokens_module
from ucma.embeddings import LocalEmbedder
from ucma.errors import ConfigError, EmbeddingError, ValidationError

pytestmark = pytest.mark.integration

JWT = "The JWT token expired early because of clock skew"
AUTH = "authentication tokens expire too soon"
BREAD = "I baked banana bread"
SRC = Path(local_module.__file__).resolve().parents[2]


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


def test_text_longer_than_max_tokens_is_truncated(embedder: LocalEmbedder) -> None:
    head = " ".join(f"word{i}" for i in range(400))  # far beyond 256 word pieces
    a, b = embedder.embed_sync([head, head + " and a completely different ending about bread"])
    np.testing.assert_allclose(a, b, atol=1e-6)


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
    "kwargs", [{"batch_size": 0}, {"intra_op_threads": 0}, {"max_tokens": 2}, {"max_tokens": 513}]
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
