"""A few of bench/crash.py's SIGKILL trials and one backup taken during writes, as a test.

Each trial kills a child process that writes through the engine on a real SQLite file
(observe, observe_many, sleep, outcome), then reopens the file and checks it: integrity,
every acknowledged write present and found by its text, no half-written batch, replay
equal to the live state. No timing is asserted; where the kill lands is random.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

from ucma.embeddings import LocalEmbedder

pytestmark = [pytest.mark.integration, pytest.mark.slow]

_PATH = Path(__file__).resolve().parents[2] / "bench" / "crash.py"
_SPEC = importlib.util.spec_from_file_location("bench_crash", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
crash = importlib.util.module_from_spec(_SPEC)
sys.modules["bench_crash"] = crash  # dataclasses look their module up
_SPEC.loader.exec_module(crash)


@pytest.mark.parametrize("operation", crash.OPERATIONS)
def test_a_killed_writer_loses_no_acknowledged_write(
    operation: str, tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    store = crash.Store(tmp_path, operation)
    rng = random.Random(operation)
    results = [store.trial(rng, seed, local_embedder) for seed in (1, 2)]
    assert sum(r.acknowledged for r in results) > 0
    for result in results:
        assert result.lost == []
        assert result.integrity == []
        assert result.half_batches == []


def test_a_backup_during_writes_holds_every_write_acknowledged_before_it(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    result = crash.backup_trial(tmp_path, random.Random(5), 5, local_embedder)
    assert result["acknowledged_before_backup"] >= 5
    assert result["acknowledged_after_backup_began"] >= 1  # the writer was live
    assert result["lost"] == []
    assert result["integrity"] == []
