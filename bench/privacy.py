"""Benchmark of the content guard (issue 13, done-when 1).

On the labelled corpus of ``bench/privacy_corpus.py`` (PII of each kind in varied
formats, secrets of each kind, hard negatives), with the default policy:

- secrets refused: the share of secret samples whose write raises SecretRefusedError
  (target >= 0.99);
- PII tokenised: the share of PII samples whose labelled value is wholly replaced by a
  token (target >= 0.95);
- false positives: the share of negatives in which anything is found (target <= 0.02);
- retrieval: PII memories written through ``AsyncMemory`` (tokenised) and asked for by a
  question naming the original value, same scope: the share found in the top 5.

Prints a table and writes bench/results/privacy.json and .md. Run: python bench/privacy.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from privacy_corpus import Sample, corpus  # noqa: E402
from ucma.config import PrivacyConfig  # noqa: E402
from ucma.engine import AsyncMemory  # noqa: E402
from ucma.errors import ContentRefusedError, SecretRefusedError  # noqa: E402
from ucma.privacy import PII_KINDS, ContentKind, scan  # noqa: E402
from ucma.privacy.guard import screen  # noqa: E402

RESULTS = Path(__file__).parent / "results"
PII = {k.value for k in PII_KINDS}


def detection(samples: list[Sample]) -> dict[str, object]:
    policy = PrivacyConfig()
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # [hits, total]
    kind_exact: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    false_positives: list[str] = []
    misses: list[str] = []
    started = time.perf_counter()
    for sample in samples:
        findings = scan(sample.text)
        if sample.label == "negative":
            per_kind["negative"][1] += 1
            if findings:
                per_kind["negative"][0] += 1
                false_positives.append(f"{sample.text!r}: {[f.kind.value for f in findings]}")
            continue
        counts = per_kind[sample.label]
        counts[1] += 1
        if sample.label in PII:
            ok = False
            try:
                screening = screen([sample.text], policy)
                covered = [
                    f
                    for f in screening.to_tokenise[0]
                    if f.start <= sample.text.find(sample.value)
                    and f.end >= sample.text.find(sample.value) + len(sample.value)
                ]
                ok = bool(covered)
            except ContentRefusedError:
                ok = False
        else:
            try:
                screen([sample.text], policy)
                ok = False
            except SecretRefusedError:
                ok = True
        counts[0] += ok
        exact = kind_exact[sample.label]
        exact[1] += 1
        exact[0] += any(f.kind.value == sample.label for f in findings)
        if not ok:
            misses.append(f"{sample.label}: {sample.text!r}")
    elapsed = time.perf_counter() - started

    def share(labels: set[str]) -> float:
        hits = sum(per_kind[k][0] for k in labels if k in per_kind)
        total = sum(per_kind[k][1] for k in labels if k in per_kind)
        return hits / total if total else 0.0

    secret_labels = {k.value for k in ContentKind} - PII
    return {
        "samples": len(samples),
        "secrets_refused_recall": share(secret_labels),
        "pii_tokenised_recall": share(PII),
        "false_positive_rate": share({"negative"}),
        "per_kind": {
            k: {
                "recall_or_fp": v[0] / v[1],
                "n": v[1],
                "kind_named_exactly": (
                    kind_exact[k][0] / kind_exact[k][1] if k in kind_exact else None
                ),
            }
            for k, v in sorted(per_kind.items())
        },  # fmt: skip
        "microseconds_per_text": elapsed / len(samples) * 1e6,
        "misses": misses[:20],
        "false_positives": false_positives[:20],
    }


async def retrieval(samples: list[Sample], count: int = 40) -> dict[str, object]:
    """PII memories tokenised on write, found by a question naming the original."""
    chosen = [s for s in samples if s.label in PII][::8][:count]
    found = 0
    with tempfile.TemporaryDirectory() as folder:
        async with AsyncMemory(Path(folder) / "bench.db", user_id="owner") as memory:
            ids = []
            for sample in chosen:
                observed = await memory.observe(sample.text)
                stored = await memory.get(observed.merged_into or observed.id)
                assert sample.value not in stored.content, "PII stored verbatim"
                ids.append(stored.id)
            for sample, memory_id in zip(chosen, ids, strict=True):
                hits = await memory.remember(f"What do I know about {sample.value}?", limit=5)
                found += any(h.memory.id == memory_id for h in hits)
            other = await memory.remember(f"What do I know about {chosen[0].value}?",
                                          limit=5, user_id="stranger")  # fmt: skip
    return {"memories": len(chosen), "found_in_top5": found / len(chosen),
            "other_scope_hits": len(other)}  # fmt: skip


DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _chat_messages() -> dict[str, list[str]]:
    """The messages of the LoCoMo and BEAM chats beside the checkout, when present."""
    found: dict[str, list[str]] = {}
    locomo = DATA / "locomo" / "locomo_dev.json"
    if locomo.exists():
        found["locomo"] = [
            turn.get("text", "")
            for conversation in json.loads(locomo.read_text())
            for turns in conversation["conversation"].values()
            if isinstance(turns, list)
            for turn in turns
            if isinstance(turn, dict)
        ]
    beam = DATA / "beam" / "beam_100k.json"
    if beam.exists():
        texts: list[str] = []

        def walk(node: object) -> None:
            if isinstance(node, dict):
                if isinstance(node.get("content"), str):
                    texts.append(node["content"])
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        walk(json.loads(beam.read_text()))
        found["beam"] = texts
    return found


def real_chats() -> dict[str, object]:
    """What the guard would do to real chats nobody wrote for it (no real secrets in
    them: every refusal there is a false one; their PII is the datasets' fiction)."""
    report: dict[str, object] = {}
    for name, texts in _chat_messages().items():
        kinds: Counter[str] = Counter()
        refused = tokenised = 0
        for text in texts:
            findings = scan(text)
            kinds.update(f.kind.value for f in findings)
            refused += any(f.kind not in PII_KINDS for f in findings)
            tokenised += any(f.kind in PII_KINDS for f in findings)
        report[name] = {
            "messages": len(texts),
            "refused": refused / len(texts),
            "tokenised": tokenised / len(texts),
            "kinds": dict(kinds.most_common()),
        }
    return report


def main() -> None:
    samples = corpus()
    result = detection(samples)
    result["retrieval"] = asyncio.run(retrieval(samples))
    result["real_chats"] = real_chats()
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "privacy.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# Content guard benchmark (bench/privacy.py)",
        "",
        f"{result['samples']} labelled texts (bench/privacy_corpus.py, seed 13).",
        "",
        "| measure | value | target |",
        "| --- | --- | --- |",
        f"| secrets refused, recall | {result['secrets_refused_recall']:.3f} | >= 0.99 |",
        f"| PII tokenised, recall | {result['pii_tokenised_recall']:.3f} | >= 0.95 |",
        f"| false positives on negatives | {result['false_positive_rate']:.3f} | <= 0.02 |",
        f"| retrieval by the original, top 5 | {result['retrieval']['found_in_top5']:.3f} | |",
        f"| scan time per text | {result['microseconds_per_text']:.0f} us | |",
        "",
        "| kind | n | recall (FP rate for negative) | kind named exactly |",
        "| --- | --- | --- | --- |",
    ]
    for kind, row in result["per_kind"].items():
        exact = "" if row["kind_named_exactly"] is None else f"{row['kind_named_exactly']:.2f}"
        lines.append(f"| {kind} | {row['n']} | {row['recall_or_fp']:.3f} | {exact} |")
    lines += [
        "",
        "Real chats (no real secrets in them: a refusal there is a false one):",
        "",
        "| chats | messages | refused | tokenised | kinds found |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, row in result["real_chats"].items():
        kinds = ", ".join(f"{k} {n}" for k, n in row["kinds"].items())
        lines.append(
            f"| {name} | {row['messages']} | {row['refused']:.4f} | {row['tokenised']:.4f} "
            f"| {kinds} |"
        )
    (RESULTS / "privacy.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if result["misses"] or result["false_positives"]:
        print("\nmisses:", *result["misses"], sep="\n  ")
        print("false positives:", *result["false_positives"], sep="\n  ")


if __name__ == "__main__":
    main()
