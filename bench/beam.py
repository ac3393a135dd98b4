"""Retrieval quality and confidence on BEAM 100K (long chats), through the public API only.

Each conversation lives in its own scope. Every chat message becomes one
``observe`` (through ``observe_many``, one call per chat batch): the role as its
source, the message id in its metadata, the batch as its session, and as its
timestamp the latest ``time_anchor`` seen so far plus one minute per message
since that anchor (never earlier than the previous message plus a minute), so
the chat's order is kept. Then every probing question with evidence
(``source_chat_ids``, dict values and nested lists flattened) is asked through
``recall`` with limit 20 and the conversation's last timestamp as the
reference time. A hit maps back to its message through its metadata; a
message merged into a near-duplicate counts as the message it merged into.

Reported per system: Recall@k (share of the evidence messages in the top k)
for k = 1, 5, 10, 20, hit@1, hit@10 and MRR, overall and per category; the
share of assistant messages in the top 10 and their median length.

Confidence: the ROC AUC of ``result.confidence`` between answerable questions
(evidence in the top 10) and unanswerable ones (BEAM's abstention questions
and a fixed sample of another conversation's questions asked against this
conversation's scope: conversation i gets those of conversation i + 1), and
the share of ``low_confidence`` in each group. Knowledge updates: the share of
knowledge_update questions whose best-ranked ``updated_info`` message ranks
above the best-ranked ``original_info`` one (a missing message ranks last;
ties and both-missing are counted apart).

``--sleep`` also runs one ``sleep()`` per scope after the evaluation and
reports how many episodes are still searchable, then evaluates ``ucma`` and
``dense`` again on the slept store.

Systems: ``ucma`` (default configuration, ``recall`` with its cascade),
``remember`` (the default pipeline's ``remember``: no cascade, so no result
confidence), and the ablations ``keyword`` (BM25 only) and ``dense`` (vectors
only). Every system starts from a copy of the same ingested store, so a
system's recalls (which reinforce what they return) never affect another's.
Document and question vectors are memoised, so each text is embedded once per
run, and kept on disk between runs (bench/vector_cache.py; ``--vector-cache``,
default ``.artifacts/bench_vectors.sqlite``, ``--no-vector-cache`` to embed
afresh), so a repeated run pays only for the engine's own work; latency is not
measured here (see bench/locomo.py).

Usage: ``python bench/beam.py --data ../shared/data/beam/beam_100k.json
[--out bench/results/beam.json] [--systems ucma remember keyword dense]
[--conversations N] [--foreign 20] [--sleep] [--details PATH] [--no-vector-cache]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from locomo import MemoEmbedder  # noqa: E402
from metrics import first_rank, mean_rows, ranking_scores, roc_auc, share  # noqa: E402
from ucma.config import EmbeddingConfig, RetrievalConfig, UCMAConfig  # noqa: E402
from ucma.embeddings import LocalEmbedder  # noqa: E402
from ucma.engine import AsyncMemory  # noqa: E402
from ucma.errors import UCMAError  # noqa: E402
from vector_cache import DEFAULT_PATH, DiskVectors  # noqa: E402

KS = (1, 5, 10, 20)
LIMIT = max(KS)
ANSWERABLE_K = 10
MINUTE = 60.0
ABSTENTION = "abstention"
UPDATE = "knowledge_update"

# name -> (retrieval configuration, call recall with its cascade; False = remember)
SYSTEMS: dict[str, tuple[RetrievalConfig, bool]] = {
    "ucma": (RetrievalConfig(), True),
    "remember": (RetrievalConfig(), False),
    "keyword": (RetrievalConfig.ablation("keyword"), True),
    "dense": (RetrievalConfig.ablation("dense"), True),
}
AFTER_SLEEP = ("ucma", "dense")


@dataclass
class Question:
    """One probing question; ``evidence`` is empty for abstention and for questions
    without ``source_chat_ids``; ``original``/``updated`` only for knowledge updates."""

    conversation: str
    category: str
    text: str
    evidence: list[int]
    original: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)


@dataclass
class Conversation:
    """An ingested conversation: its scope, reference time and message aliases."""

    scope: str
    reference: float
    questions: list[Question]
    alias: dict[int, int] = field(default_factory=dict)
    """Message id -> the message id whose memory holds it (itself unless merged)."""
    dropped: set[int] = field(default_factory=set)
    """Message ids the importance gate did not store."""
    truncated: int = 0
    """Messages cut to the engine's content limit (two in BEAM 100K: 53K and 349K
    characters of repeated assistant output); the rest of the chat is kept whole."""


def flatten(ids: Any) -> Iterator[int]:
    """The message ids of ``source_chat_ids``: a list (possibly nested) or a dict of lists."""
    if isinstance(ids, dict):
        for value in ids.values():
            yield from flatten(value)
    elif isinstance(ids, list):
        for value in ids:
            yield from flatten(value)
    elif ids is not None:
        yield int(ids)


def anchor_time(text: str) -> float:
    """BEAM's "March-15-2024" as epoch seconds (UTC midnight)."""
    return datetime.strptime(text.strip(), "%B-%d-%Y").replace(tzinfo=UTC).timestamp()


def questions_of(sample: dict[str, Any]) -> list[Question]:
    found = []
    for category, items in sorted(sample["probing_questions"].items()):
        for item in items:
            raw = item.get("source_chat_ids")
            question = Question(
                sample["conversation_id"],
                category,
                item["question"],
                list(dict.fromkeys(flatten(raw))),
            )
            if category == UPDATE and isinstance(raw, dict):
                question.original = list(flatten(raw.get("original_info")))
                question.updated = list(flatten(raw.get("updated_info")))
            found.append(question)
    return found


async def ingest(mem: AsyncMemory, sample: dict[str, Any]) -> Conversation:
    scope = sample["conversation_id"]
    conversation = Conversation(scope, 0.0, questions_of(sample))
    anchor: float | None = None
    since_anchor = 0
    last = -math.inf
    memory_message: dict[str, int] = {}
    for batch in sample["chat"]:
        items, ids = [], []
        for turn in batch["turns"]:
            for message in turn:
                if message.get("time_anchor"):
                    anchor, since_anchor = anchor_time(message["time_anchor"]), 0
                base = anchor if anchor is not None else 0.0
                stamp = max(base + since_anchor * MINUTE, last + MINUTE)
                since_anchor += 1
                last = stamp
                ids.append(message["id"])
                content = message["content"][: mem.config.limits.max_content_chars]
                conversation.truncated += content != message["content"]
                items.append(
                    {
                        "content": content,
                        "source": message["role"],
                        "timestamp": stamp,
                        "session_id": f"batch_{batch['batch_number']}",
                        "metadata": {"message_id": message["id"]},
                    }
                )
        observations = await mem.observe_many(items, user_id=scope)
        for message_id, observation in zip(ids, observations, strict=True):
            if not observation.stored:
                conversation.dropped.add(message_id)
            elif observation.merged_into is not None:
                conversation.alias[message_id] = memory_message[observation.merged_into]
            else:
                memory_message[observation.id] = message_id
    conversation.reference = last
    return conversation


def foreign_questions(
    conversations: list[Conversation], per_conversation: int
) -> dict[str, list[Question]]:
    """Conversation i gets a fixed sample of conversation i + 1's questions (none when
    there is only one conversation)."""
    if len(conversations) < 2:
        return {c.scope: [] for c in conversations}
    found = {}
    for index, conversation in enumerate(conversations):
        donor = conversations[(index + 1) % len(conversations)]
        pool = sorted(donor.questions, key=lambda q: (q.category, q.text))
        count = min(per_conversation, len(pool))
        found[conversation.scope] = random.Random(conversation.scope).sample(pool, count)
    return found


def role(hit: Any) -> str:
    """Who said a hit: the message's role for an episode, else the memory's kind
    (a fact or a procedure derived from the chat has no speaker)."""
    return getattr(hit.memory, "source", None) or hit.kind.value


def fresh_first(ranked: list[int | None], question: Question, alias: dict[int, int]) -> str:
    """ "fresh", "stale", "tie" or "both_missing" for one knowledge-update question."""

    def best(ids: list[int]) -> float:
        rank = first_rank(ranked, {alias.get(i, i) for i in ids})
        return float(rank) if rank is not None else math.inf

    updated, original = best(question.updated), best(question.original)
    if updated == original:
        return "both_missing" if updated == math.inf else "tie"
    return "fresh" if updated < original else "stale"


async def run_system(
    name: str, db: Path, embedder: MemoEmbedder, conversations: list[Conversation], foreign: int
) -> dict[str, Any]:
    retrieval, cascade = SYSTEMS[name]
    config = UCMAConfig(
        retrieval=retrieval,
        embedding=replace(EmbeddingConfig(), lru_size=0, persistent_cache=False),
    )
    rows: dict[str, list[dict[str, float]]] = defaultdict(list)
    answerable: list[tuple[float, bool]] = []
    abstention: list[tuple[float, bool]] = []
    other: list[tuple[float, bool]] = []
    updates: Counter[str] = Counter()
    top_roles: Counter[str] = Counter()
    top_lengths: list[int] = []
    borrowed = foreign_questions(conversations, foreign)
    details: list[dict[str, Any]] = []

    async with AsyncMemory(db, config=config, embedder=embedder) as mem:

        async def ask(question: str, scope: str, reference: float) -> tuple[list, Any]:
            if cascade:
                result = await mem.recall(
                    question, limit=LIMIT, user_id=scope, reference_time=reference
                )
                return result.hits, result
            hits = await mem.remember(
                question, limit=LIMIT, user_id=scope, reference_time=reference
            )
            return hits, None

        for conv in conversations:
            for question in conv.questions:
                if not question.evidence and question.category != ABSTENTION:
                    continue
                hits, result = await ask(question.text, conv.scope, conv.reference)
                signal = (result.confidence, result.low_confidence) if result else None
                if question.category == ABSTENTION:
                    if signal:
                        abstention.append(signal)
                    continue
                ranked = [h.memory.metadata.get("message_id") for h in hits]
                evidence = list(dict.fromkeys(conv.alias.get(e, e) for e in question.evidence))
                row = ranking_scores(ranked, evidence, KS)
                rows[question.category].append(row)
                details.append(
                    {
                        "conversation": conv.scope,
                        "category": question.category,
                        "question": question.text,
                        "evidence": evidence,
                        "top10": [
                            [h.memory.metadata.get("message_id"), role(h), len(h.content)]
                            for h in hits[:ANSWERABLE_K]
                        ],
                        "confidence": signal[0] if signal else None,
                    }
                )
                if signal and row[f"hit@{ANSWERABLE_K}"]:
                    answerable.append(signal)
                if question.category == UPDATE:
                    updates[fresh_first(ranked, question, conv.alias)] += 1
                for hit in hits[:ANSWERABLE_K]:
                    top_roles[role(hit)] += 1
                    if role(hit) == "assistant":
                        top_lengths.append(len(hit.content))
            if cascade:
                for question in borrowed[conv.scope]:
                    _, result = await ask(question.text, conv.scope, conv.reference)
                    other.append((result.confidence, result.low_confidence))

    overall = [r for category in sorted(rows) for r in rows[category]]
    unanswerable = abstention + other
    confidence = None
    if cascade:
        confidence = {
            "auc": _round(roc_auc([c for c, _ in answerable], [c for c, _ in unanswerable])),
            "auc_abstention": _round(
                roc_auc([c for c, _ in answerable], [c for c, _ in abstention])
            ),
            "auc_other_conversation": _round(
                roc_auc([c for c, _ in answerable], [c for c, _ in other])
            ),
            "count": {
                "answerable": len(answerable),
                "abstention": len(abstention),
                "other_conversation": len(other),
            },
            "low_confidence_share": {
                "answerable": _round(share([f for _, f in answerable])),
                "abstention": _round(share([f for _, f in abstention])),
                "other_conversation": _round(share([f for _, f in other])),
            },
            "median_confidence": {
                "answerable": _median([c for c, _ in answerable]),
                "unanswerable": _median([c for c, _ in unanswerable]),
            },
        }
    decided = updates["fresh"] + updates["stale"]
    return {
        "overall": mean_rows(overall),
        "by_category": {c: mean_rows(rows[c]) for c in sorted(rows)},
        "questions": {c: len(rows[c]) for c in sorted(rows)},
        "confidence": confidence,
        "fresh_first": {
            "rate": _round(updates["fresh"] / sum(updates.values())) if updates else None,
            "rate_of_decided": _round(updates["fresh"] / decided) if decided else None,
            **{k: updates[k] for k in ("fresh", "stale", "tie", "both_missing")},
        },
        "details": details,
        "top10": {
            "assistant_share": _round(share([r == "assistant" for r in top_roles.elements()])),
            "assistant_median_chars": statistics.median(top_lengths) if top_lengths else None,
        },
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


async def sleep_scopes(db: Path, embedder: MemoEmbedder, conversations: list[Conversation]) -> dict:
    """One ``sleep()`` per scope; live (searchable) episodes before and after. A sleep
    that fails is recorded in ``errors`` and the run goes on: its earlier phases
    (compression, which archives) are committed, so the count after still tells."""
    before = after = 0
    errors: list[str] = []
    completed = 0
    async with AsyncMemory(db, embedder=embedder) as mem:
        for conv in conversations:
            before += (await mem.stats(user_id=conv.scope))["memories"].get("episodic", 0)
            try:
                report = await mem.sleep(user_id=conv.scope)
            except UCMAError as exc:  # the phases before the failing one stay committed
                errors.append(f"{conv.scope}: {type(exc).__name__}: {exc}")
            else:
                completed += bool(report.phases)
            after += (await mem.stats(user_id=conv.scope))["memories"].get("episodic", 0)
    return {
        "episodes_before": before,
        "episodes_after": after,
        "sleeps_completed": completed,
        "errors": errors,
    }


def markdown(results: dict[str, Any]) -> str:
    systems = results["systems"]
    lines = [
        "| system | R@1 | R@5 | R@10 | R@20 | hit@1 | hit@10 | MRR | top-10 assistant share "
        "| their median chars |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in systems.items():
        o, t = r["overall"], r["top10"]
        lines.append(
            f"| {name} | {o['recall@1']:.3f} | {o['recall@5']:.3f} | {o['recall@10']:.3f} | "
            f"{o['recall@20']:.3f} | {o['hit@1']:.3f} | {o['hit@10']:.3f} | {o['mrr']:.3f} | "
            f"{_cell(t['assistant_share'])} | {t['assistant_median_chars']} |"
        )
    categories = sorted({c for r in systems.values() for c in r["by_category"]})
    counts = next(iter(systems.values()))["questions"] if systems else {}
    for metric in ("recall@10", "hit@1"):
        lines += ["", f"{metric} by category (questions):", ""]
        lines.append(
            "| system | " + " | ".join(f"{c} ({counts.get(c, 0)})" for c in categories) + " |"
        )
        lines.append("|---|" + "---|" * len(categories))
        for name, r in systems.items():
            cells = [_cell(r["by_category"].get(c, {}).get(metric)) for c in categories]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Confidence: ROC AUC of result.confidence, answerable (evidence in the top 10) against "
        "unanswerable (abstention + another conversation's questions); low_confidence share "
        "per group:",
        "",
        "| system | AUC | AUC vs abstention | AUC vs other conv. | n ans / abst / other "
        "| low-conf answerable | low-conf abstention | low-conf other conv. "
        "| median conf ans / unans |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in systems.items():
        c = r["confidence"]
        if c is None:
            continue
        n, low, med = c["count"], c["low_confidence_share"], c["median_confidence"]
        lines.append(
            f"| {name} | {_cell(c['auc'])} | {_cell(c['auc_abstention'])} | "
            f"{_cell(c['auc_other_conversation'])} | {n['answerable']} / {n['abstention']} / "
            f"{n['other_conversation']} | {_cell(low['answerable'])} | {_cell(low['abstention'])} "
            f"| {_cell(low['other_conversation'])} | {_cell(med['answerable'])} / "
            f"{_cell(med['unanswerable'])} |"
        )
    lines += [
        "",
        "Knowledge updates: fresh-first rate (updated message ranks above the original; "
        "missing = last):",
        "",
        "| system | fresh-first rate | of decided | fresh | stale | tie | both missing |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in systems.items():
        f = r["fresh_first"]
        lines.append(
            f"| {name} | {_cell(f['rate'])} | {_cell(f['rate_of_decided'])} | {f['fresh']} | "
            f"{f['stale']} | {f['tie']} | {f['both_missing']} |"
        )
    slept = results.get("after_sleep")
    if slept:
        s = slept["episodes"]
        lines += [
            "",
            f"After one sleep() per scope: {s['episodes_after']} of {s['episodes_before']} "
            f"episodes still searchable ({s['sleeps_completed']} sleeps completed, "
            f"{len(s['errors'])} failed"
            + (f", e.g. {s['errors'][0]}" if s["errors"] else "")
            + ").",
            "",
            "| system after sleep | R@10 | hit@1 | MRR | AUC |",
            "|---|---|---|---|---|",
        ]
        for name, r in slept["systems"].items():
            o = r["overall"]
            auc = r["confidence"]["auc"] if r["confidence"] else None
            lines.append(
                f"| {name} | {o['recall@10']:.3f} | {o['hit@1']:.3f} | {o['mrr']:.3f} | "
                f"{_cell(auc)} |"
            )
    return "\n".join(lines) + "\n"


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def _report(name: str, row: dict[str, Any]) -> None:
    o = row["overall"]
    auc = row["confidence"]["auc"] if row["confidence"] else None
    print(
        f"{name:8} R@10 {o['recall@10']:.3f} hit@1 {o['hit@1']:.3f} MRR {o['mrr']:.3f} "
        f"AUC {_cell(auc)}",
        file=sys.stderr,
        flush=True,
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--conversations", type=int, help="only the first N conversations")
    parser.add_argument("--foreign", type=int, default=20, help="borrowed questions per scope")
    parser.add_argument("--details", type=Path, help="write per-question top-10s here (JSON)")
    parser.add_argument("--code-version", help="recorded as the commit (default: git describe)")
    parser.add_argument("--sleep", action="store_true", help="also evaluate after one sleep()")
    parser.add_argument(
        "--vector-cache", type=Path, default=DEFAULT_PATH, help="vectors kept between runs"
    )
    parser.add_argument("--no-vector-cache", action="store_true", help="embed every text afresh")
    args = parser.parse_args()
    # Working memory logs a warning for every long message it cannot stage; the
    # benchmark's output is its table, so only errors are shown.
    logging.getLogger("ucma").setLevel(logging.ERROR)

    data = json.loads(args.data.read_text())[: args.conversations]
    disk = None if args.no_vector_cache else DiskVectors(args.vector_cache)
    embedder = MemoEmbedder(LocalEmbedder(), disk)
    results: dict[str, Any] = {
        "data": str(args.data),
        "date": time.strftime("%Y-%m-%d"),
        "commit": args.code_version or _commit(),
        "conversations": len(data),
        "foreign_per_conversation": args.foreign,
        "systems": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "ingested"
        base.mkdir()
        start = time.perf_counter()
        async with AsyncMemory(base / "beam.db", embedder=embedder) as mem:
            conversations = [await ingest(mem, sample) for sample in data]
        messages = sum(len(list(_messages(s))) for s in data)
        results["ingest"] = {
            "messages": messages,
            "merged": sum(len(c.alias) for c in conversations),
            "dropped": sum(len(c.dropped) for c in conversations),
            "truncated": sum(c.truncated for c in conversations),
        }
        print(
            f"ingested {messages} messages in {time.perf_counter() - start:.1f}s "
            f"({results['ingest']['merged']} merged, {results['ingest']['dropped']} dropped)",
            file=sys.stderr,
        )
        for name in args.systems:
            db = Path(tmp) / name
            shutil.copytree(base, db)
            row = await run_system(name, db / "beam.db", embedder, conversations, args.foreign)
            results["systems"][name] = row
            _report(name, row)
        if args.sleep:
            slept = Path(tmp) / "slept"
            shutil.copytree(base, slept)
            episodes = await sleep_scopes(slept / "beam.db", embedder, conversations)
            print(f"after sleep: {episodes}", file=sys.stderr)
            after: dict[str, Any] = {}
            for name in [s for s in AFTER_SLEEP if s in args.systems]:
                db = Path(tmp) / f"{name}-slept"
                shutil.copytree(slept, db)
                after[name] = await run_system(
                    name, db / "beam.db", embedder, conversations, args.foreign
                )
                _report(f"{name}/slept", after[name])
            results["after_sleep"] = {"episodes": episodes, "systems": after}
    table = markdown(results)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        per_question = {
            name: row.pop("details") for name, row in results["systems"].items() if "details" in row
        }
        for row in results.get("after_sleep", {}).get("systems", {}).values():
            row.pop("details", None)
        args.out.write_text(json.dumps(results, indent=2) + "\n")
        if args.details:
            args.details.write_text(json.dumps(per_question) + "\n")
        args.out.with_suffix(".md").write_text(table)


def _messages(sample: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for batch in sample["chat"]:
        for turn in batch["turns"]:
            yield from turn


if __name__ == "__main__":
    asyncio.run(main())
