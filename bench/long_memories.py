"""How the packaged embedder should read long memories: truncation against chunked pooling.

Issue 12 ("Long memories"): MiniLM reads 128 word pieces well (its training length) and a
longer window worse; a memory must still be represented by all of its text. This benchmark
embeds every message of some BEAM 100K conversations (../shared/data/beam/, one vector per
message) with each option below and ranks the messages of the question's conversation by
cosine alone (no fusion, no engine), for every probing question with ``source_chat_ids``:

- ``truncate-128`` / ``-256`` / ``-512``: the first window only (256 was the default);
- ``chunk-128`` / ``chunk-256``: windows on sentence boundaries with a 16-token overlap, the
  mean of the unit window vectors, renormalised (``LocalEmbedder(chunk=True)``).

Reported per option: dense Recall@10 and hit@1 (bench/metrics.py), overall and by category,
and "length does not buy rank": the share of long (> 1,000 characters) and of assistant
messages in the top 10, beside their share of the corpus. Queries are short, so every option
embeds them as one window. Results go to bench/results/long_memories.json.

Run: ``.venv/bin/python bench/long_memories.py --conversations 6`` (about a minute per option
and conversation-set on 2 cores; the options share nothing, so the cost is their sum).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from metrics import hit_at, recall_at  # noqa: E402
from ucma.embeddings import LocalEmbedder  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "beam" / "beam_100k.json"
OUT = Path(__file__).parent / "results" / "long_memories.json"
LONG_CHARS = 1_000
OPTIONS: dict[str, dict[str, Any]] = {
    "truncate-128": {"max_tokens": 128, "chunk": False},
    "truncate-256": {"max_tokens": 256, "chunk": False},
    "truncate-512": {"max_tokens": 512, "chunk": False},
    "chunk-128": {"max_tokens": 128, "chunk": True},
    "chunk-256": {"max_tokens": 256, "chunk": True},
}


def _evidence(source: object) -> set[int]:
    """Message ids of ``source_chat_ids``: a list, or a dict of lists (updates, contradictions)."""
    if isinstance(source, dict):
        return {i for ids in source.values() for i in _evidence(ids)}
    if isinstance(source, list):
        return {int(i) for i in source if isinstance(i, int | str) and str(i).isdigit()}
    return set()


def _messages(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for batch in conversation["chat"] for turn in batch["turns"] for m in turn]


def _questions(conversation: dict[str, Any], ids: set[int]) -> Iterable[tuple[str, str, set[int]]]:
    for category, questions in conversation["probing_questions"].items():
        for question in questions:
            evidence = _evidence(question.get("source_chat_ids")) & ids
            if evidence:
                yield category, question["question"], evidence


def _score(option: str, conversations: list[dict[str, Any]]) -> dict[str, Any]:
    embedder = LocalEmbedder(**OPTIONS[option])
    embedder.load()
    rows: list[dict[str, Any]] = []
    seconds = 0.0
    for conversation in conversations:
        messages = _messages(conversation)
        ids = [int(m["id"]) for m in messages]
        started = time.perf_counter()
        vectors = embedder.embed_sync([m["content"] for m in messages])
        seconds += time.perf_counter() - started
        asked = list(_questions(conversation, set(ids)))
        queries = embedder.embed_sync([q for _, q, _ in asked])
        for (category, _, evidence), query in zip(asked, queries, strict=True):
            top = np.argsort(-(vectors @ query), kind="stable")[:10]
            ranked = [ids[i] for i in top]
            rows.append(
                {
                    "category": category,
                    "recall@10": recall_at(ranked, evidence, 10),
                    "hit@1": hit_at(ranked, evidence, 1),
                    "long_top10": float(
                        np.mean([len(messages[i]["content"]) > LONG_CHARS for i in top])
                    ),  # fmt: skip
                    "assistant_top10": float(
                        np.mean([messages[i]["role"] == "assistant" for i in top])
                    ),
                    "top10_median_chars": statistics.median(
                        len(messages[i]["content"]) for i in top
                    ),
                }
            )
    return {
        "overall": _means(rows),
        "by_category": {
            c: _means([r for r in rows if r["category"] == c])
            for c in sorted({r["category"] for r in rows})
        },  # fmt: skip
        "embed_seconds": round(seconds, 1),
    }


def _means(rows: list[dict[str, Any]]) -> dict[str, float]:
    keys = [k for k in rows[0] if k != "category"]
    means = {k: round(statistics.fmean(r[k] for r in rows), 4) for k in keys}
    return {"questions": len(rows), **means}


def _corpus(conversations: list[dict[str, Any]]) -> dict[str, float]:
    messages = [m for c in conversations for m in _messages(c)]
    lengths = [len(m["content"]) for m in messages]
    return {
        "messages": len(messages),
        "long_share": round(sum(n > LONG_CHARS for n in lengths) / len(lengths), 4),
        "assistant_share": round(
            sum(m["role"] == "assistant" for m in messages) / len(messages), 4
        ),
        "median_chars": statistics.median(lengths),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=6, help="first N conversations")
    parser.add_argument("--options", nargs="*", default=list(OPTIONS), choices=list(OPTIONS))
    args = parser.parse_args()
    data = json.loads(DATA.read_text())[: args.conversations]
    report: dict[str, Any] = {
        "data": f"BEAM 100K, conversations {[c['conversation_id'] for c in data]}",
        "corpus": _corpus(data),
        "options": {},
    }
    by_category: dict[str, dict[str, float]] = defaultdict(dict)
    for option in args.options:
        result = _score(option, data)
        report["options"][option] = result
        print(option, json.dumps(result["overall"]), f"{result['embed_seconds']} s", flush=True)
        for category, values in result["by_category"].items():
            by_category[category][option] = values["recall@10"]
    report["recall@10_by_category"] = dict(by_category)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report["corpus"]))
    for category, values in sorted(by_category.items()):
        print(f"{category:26s}", " ".join(f"{k}={v:.3f}" for k, v in values.items()))


if __name__ == "__main__":
    main()
