"""A/B test of two retrieval configurations on the LoCoMo benchmark (seed 003 H1-H6).

Every LoCoMo conversation is ingested once (as in ``bench/locomo.py``); every
question with evidence is one trial. Trials are split at random (seeded,
balanced) between a control and a treatment configuration, each trial is
answered by ``recall`` under its arm's configuration, and the per-question
metric (``mrr``, ``hit@k`` or ``recall@k``) is compared with Welch's t-test by
``ucma.learning.experiments``. ``--paired`` runs every trial in both arms
instead (same questions, less noise; still Welch on the two samples).

Configurations are ``RetrievalConfig`` overrides, ``name=value`` with JSON
values, for example seed 003's H2 (RRF k 60 against 30) and H6 (fusion weights):

    python bench/experiment.py --data ../shared/data/locomo/locomo_dev.json \\
        --control fusion='"rrf"' rrf_k=60 --treatment fusion='"rrf"' rrf_k=30

    python bench/experiment.py --data ... --control \\
        --treatment 'channel_weights={"dense":0.5,"keyword":0.3,"entity":0.2}'
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from locomo import MemoEmbedder, ingest, normalise_evidence, score_question  # noqa: E402
from ucma.config import EmbeddingConfig, RetrievalConfig, UCMAConfig  # noqa: E402
from ucma.embeddings import LocalEmbedder  # noqa: E402
from ucma.engine import AsyncMemory  # noqa: E402
from ucma.learning.experiments import analyse, assign  # noqa: E402


def parse_overrides(items: list[str]) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for item in items:
        name, sep, raw = item.partition("=")
        if not sep:
            raise SystemExit(f"override {item!r} must look like name=value")
        try:
            overrides[name] = json.loads(raw)
        except json.JSONDecodeError:
            overrides[name] = raw
    return overrides


def arm_config(overrides: dict[str, Any]) -> UCMAConfig:
    retrieval = RetrievalConfig(**overrides)
    return UCMAConfig(
        retrieval=retrieval,
        embedding=replace(EmbeddingConfig(), lru_size=0, persistent_cache=False),
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(args.data.read_text())
    embedder = MemoEmbedder(LocalEmbedder())
    control_cfg = arm_config(parse_overrides(args.control))
    treatment_cfg = arm_config(parse_overrides(args.treatment))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "experiment.db"
        known: dict[str, set[str]] = {}
        references: dict[str, float] = {}
        async with AsyncMemory(db, config=control_cfg, embedder=embedder) as mem:
            for sample in data:
                known[sample["sample_id"]], references[sample["sample_id"]] = await ingest(
                    mem, sample
                )
        trials = [
            (sample["sample_id"], qa["question"], evidence)
            for sample in data
            for qa in sample["qa"]
            if str(qa["category"]) in {"1", "2", "3", "4"}
            and (evidence := normalise_evidence(qa.get("evidence", []), known[sample["sample_id"]]))
        ]
        if args.limit:
            trials = trials[: args.limit]
        if args.paired:
            control_trials = treatment_trials = trials
        else:
            control_trials, treatment_trials = assign(trials, args.seed)

        async def measure(config: UCMAConfig, chosen: list[tuple[str, str, list[str]]]):
            values = []
            async with AsyncMemory(db, config=config, embedder=embedder) as mem:
                for scope, text, evidence in chosen:
                    result = await mem.recall(
                        text, limit=20, user_id=scope, reference_time=references[scope]
                    )
                    ranked = [h.memory.metadata.get("dia_id") for h in result.hits]
                    values.append(score_question([r for r in ranked if r], evidence)[args.metric])
            return values

        control = await measure(control_cfg, control_trials)
        treatment = await measure(treatment_cfg, treatment_trials)
    await embedder.aclose()
    result = analyse(
        control, treatment, name=args.name, metric=args.metric, alpha=args.alpha
    ).to_dict()
    result.update(
        control_config=parse_overrides(args.control),
        treatment_config=parse_overrides(args.treatment),
        design="paired" if args.paired else "between-trials",
        seed=args.seed,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--control", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--treatment", nargs="*", default=[], metavar="NAME=VALUE")
    parser.add_argument("--metric", default="mrr")
    parser.add_argument("--name", default="experiment")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--paired", action="store_true")
    parser.add_argument("--limit", type=int, default=0, help="use only the first N questions")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp_out = args.out.with_suffix(args.out.suffix + ".tmp")
        tmp_out.write_text(json.dumps(result, indent=2) + "\n")
        tmp_out.replace(args.out)


if __name__ == "__main__":
    main()
