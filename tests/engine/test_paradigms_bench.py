"""bench/paradigms.py's quick mode end to end: the report has the shape the issue asks
for and the three agents behave as their memories allow. No timing is asserted."""

from __future__ import annotations

import json

import pytest
from tests.bench_modules import load_bench

from ucma.embeddings import LocalEmbedder

pytestmark = [pytest.mark.anyio, pytest.mark.integration, pytest.mark.slow]

bench = load_bench("paradigms")


async def test_quick_run_reports_every_number_and_tells_the_agents_apart(
    local_embedder: LocalEmbedder,
) -> None:
    sizes = dict(bench.QUICK)
    tasks, block = sizes.pop("tasks"), sizes.pop("block")
    report = await bench.run_all(tasks, block, 1, embedder=local_embedder, **sizes)
    report = json.loads(json.dumps(report))  # what --out writes

    blocks = -(-tasks // block)
    assert report["tasks"] == tasks
    for key in (
        "success_by_block",
        "own_success_by_block",
        "handover_by_block",
        "utility_by_block",
        "inside_success_by_block",
    ):
        assert set(report[key]) == {"none", "episodes", "paradigms"}
        for values in report[key].values():
            assert len(values) == blocks and all(0.0 <= v <= 1.0 for v in values)
    for key in ("world_model_brier", "self_model_ece", "help_seeking_accuracy"):
        assert 0.0 <= report[key] <= 1.0, key
    assert report["synthesize_p95_ms"] > 0
    assert report["synthesize"]["memories"] > 0

    # Only the paradigms agent gets advice, and it hands over some tasks.
    handed = report["handover_by_block"]
    assert sum(handed["none"]) == sum(handed["episodes"]) == 0
    assert sum(handed["paradigms"]) > 0
    # Without memory nothing is ever handed over, so resolved is own success.
    assert report["success_by_block"]["none"] == report["own_success_by_block"]["none"]
    resolved = {arm: sum(values) for arm, values in report["success_by_block"].items()}
    assert resolved["paradigms"] > resolved["episodes"]
    assert resolved["paradigms"] > resolved["none"]
    # The help-seeking suite covers every domain and context, inside and outside.
    decisions = report["help_seeking"]["decisions"]
    assert {d["inside"] for d in decisions} == {True, False}
    assert report["self_model_predictions"] > 0
