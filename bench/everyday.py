"""Right answers in everyday use (issue 12): small stores built through ``observe`` only,
asked about in other words, scored on what a user would see.

The stores come from ``bench/everyday_scenarios.py`` (44 stores of 3 to 300 memories,
seeded): a user's statements about themselves and the people around them, changes to
some of them over days to months, the assistant's confirmations, requests and chit-chat.
Each store gets its own database and a simulated clock that follows the conversation, so
the engine sees an agent that observed it live; one ``sleep()`` then runs (unless
``--no-sleep``) and every question is asked at the store's end time.

Per question: ``recall`` (limit 10) with the default pipeline and with the dense-only
ablation; ``answer`` (the engine's template answer); ``POST /v1/chat`` through the FastAPI
app in-process (httpx ``ASGITransport``). A text is right when it contains every required
substring and no forbidden one (case-insensitive). Reported overall, per question kind
(fact, preference, change, people = shared first names, unanswerable) and per store:

1. top-1 right: the first hit of ``recall`` is right (answerable questions);
2. change questions: the first hit holding the current value ranks above every hit that
   holds a stale value without the current one, and no such stale hit is in the top 5;
3. ``answer`` / ``chat`` fully right (answerable questions); for unanswerable questions,
   the share that states no forbidden value (another person's or another attribute's);
4. ``low_confidence`` on unanswerable and on answerable questions, and the area under
   the ROC curve of ``result.confidence`` between the two.

Issue 12's targets: top-1 >= 0.90, current above stale >= 0.95, no stale in top 5 >=
0.85, answer / chat >= 0.85, low confidence on >= 0.80 of unanswerable and <= 0.10 of
answerable questions. Nothing here asserts wall-clock time.

Usage: ``python bench/everyday.py [--out bench/results/everyday.json] [--no-sleep]
[--stores N] [--seed 12]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from everyday_scenarios import KINDS, Question, Scenario, generate
from everyday_vocabulary import ASSISTANT_CHIT_CHAT, CHIT_CHAT
from ucma.config import EmbeddingConfig, RetrievalConfig, UCMAConfig
from ucma.embeddings import Embedder, LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.lifecycle.clock import SimulatedClock
from ucma.server.app import create_app

LIMIT = 10
NOISE = {t.lower() for t in CHIT_CHAT + ASSISTANT_CHIT_CHAT}
STOPWORDS = frozenset(
    (
        "a",
        "an",
        "the",
        "i",
        "me",
        "my",
        "you",
        "your",
        "is",
        "are",
        "am",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "where",
        "when",
        "how",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "and",
        "or",
        "with",
        "be",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "there",
        "some",
        "any",
        "now",
        "should",
        "would",
        "could",
        "can",
    )
)
TARGETS = {
    "top1": 0.90,
    "current_above_stale": 0.95,
    "no_stale_top5": 0.85,
    "answer": 0.85,
    "chat": 0.85,
    "low_conf_unanswerable": 0.80,
    "low_conf_answerable": 0.10,
}


class MemoEmbedder(Embedder):
    """Embeds each distinct text once per run (stores share chit-chat and questions),
    so the run's cost is the engine's, not the model's."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.cache: dict[str, np.ndarray] = {}

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            for text, vector in zip(missing, await self.inner.embed(missing), strict=True):
                self.cache[text] = vector
        return np.stack([self.cache[t] for t in texts])


def has(text: str, parts: tuple[str, ...]) -> list[bool]:
    low = text.lower()
    return [p.lower() in low for p in parts]


def right(text: str, question: Question) -> bool:
    """Every required substring present and no forbidden one."""
    return all(has(text, question.required)) and not any(has(text, question.forbidden))


def change_ranks(contents: list[str], question: Question) -> dict[str, Any]:
    """Rank (1-based) of the first hit with the current value, and of the hits holding a
    stale value without the current one."""
    current = next((i for i, c in enumerate(contents, 1) if all(has(c, question.required))), None)
    stale = [
        i
        for i, c in enumerate(contents, 1)
        if any(has(c, question.stale)) and not all(has(c, question.required))
    ]
    return {
        "current_rank": current,
        "stale_ranks": stale,
        "current_above_stale": current is not None and all(current < s for s in stale),
        "no_stale_top5": not any(s <= 5 for s in stale),
    }


def overlap(question: Question, scenario: Scenario) -> float | None:
    """Share of the question's content words found in its clean target statement: how
    far the question's wording is from the memory's (lower is more paraphrased)."""
    if not question.required:
        return None
    targets = [t.text for t in scenario.turns if right(t.text, question)]
    words = {w for w in re.findall(r"[a-z']+", question.text.lower()) if w not in STOPWORDS}
    if not targets or not words:
        return None
    target = set(re.findall(r"[a-z']+", targets[-1].lower()))
    return len(words & target) / len(words)


async def recall_row(mem: AsyncMemory, question: Question, scope: str, at: float) -> dict:
    result = await mem.recall(question.text, limit=LIMIT, user_id=scope, reference_time=at)
    contents = [h.content for h in result.hits]
    row: dict[str, Any] = {
        "top": contents[:3],
        "hits": len(contents),
        "low_confidence": bool(result.low_confidence),
        "confidence": round(float(result.confidence), 4),
        "query_class": result.query_class,
        "top1_noise": bool(contents) and contents[0].strip().lower() in NOISE,
    }
    if question.required:
        row["top1_right"] = bool(contents) and right(contents[0], question)
    if question.stale:
        row.update(change_ranks(contents, question))
    return row


async def run_store(
    scenario: Scenario, embedder: MemoEmbedder, workdir: Path, sleep: bool
) -> dict[str, Any]:
    """Ingest one store through ``observe``, optionally sleep, ask every question."""
    db = workdir / f"{scenario.name}.db"
    scope = scenario.name
    clock = SimulatedClock(scenario.turns[0].timestamp - 60)
    base = UCMAConfig(embedding=replace(EmbeddingConfig(), lru_size=0, persistent_cache=False))
    stored = 0
    report: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    async with AsyncMemory(db, config=base, embedder=embedder, clock=clock) as mem:
        for turn in scenario.turns:
            clock.set(max(clock(), turn.timestamp))
            observation = await mem.observe(
                turn.text, source=turn.source, timestamp=turn.timestamp, user_id=scope
            )
            stored += observation.stored
        clock.advance(hours=1)
        if sleep:
            done = await mem.sleep(user_id=scope)
            report = {
                "archived": done.compress.get("archived", 0) + done.prune.get("archived", 0),
                "purged": done.prune.get("purged", 0),
                "facts_new": done.abstract.get("facts_new", 0),
            }
        at = clock()
        app = create_app(mem, require_keys=False, maintenance=False, mcp=False)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://everyday") as client:
            for question in scenario.questions:
                row: dict[str, Any] = {
                    "store": scenario.name,
                    "kind": question.kind,
                    "question": question.text,
                    "required": list(question.required),
                    "forbidden": list(question.forbidden),
                    "stale": list(question.stale),
                    "overlap": overlap(question, scenario),
                    "ucma": await recall_row(mem, question, scope, at),
                }
                answer = await mem.answer(question.text, user_id=scope)
                reply = await client.post(
                    "/v1/chat", json={"user_id": scope, "message": question.text}
                )
                chat = reply.json().get("response", "") if reply.is_success else reply.text
                row["answer"] = answer.response
                row["chat"] = chat if reply.is_success else f"HTTP {reply.status_code}: {chat}"
                row["answer_right"] = right(answer.response, question)
                row["chat_right"] = reply.is_success and right(chat, question)
                rows.append(row)
    dense = replace(base, retrieval=RetrievalConfig.ablation("dense"))
    async with AsyncMemory(db, config=dense, embedder=embedder, clock=clock) as mem:
        for row, question in zip(rows, scenario.questions, strict=True):
            row["dense"] = await recall_row(mem, question, scope, at)
    return {
        "store": scenario.name,
        "memories": len(scenario.turns),
        "stored": stored,
        "sleep": report,
        "rows": rows,
    }


def share(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def auc(positives: list[float], negatives: list[float]) -> float | None:
    """P(an answerable question's confidence > an unanswerable one's), ties half."""
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(wins / (len(positives) * len(negatives)), 4)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every metric over ``rows`` (any subset: a kind, a store, all)."""
    answerable = [r for r in rows if r["required"]]
    unanswerable = [r for r in rows if not r["required"]]
    changes = [r for r in rows if r["stale"]]
    out: dict[str, Any] = {
        "questions": len(rows),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "change": len(changes),
    }
    for system in ("ucma", "dense"):
        out[system] = {
            "top1": share([r[system]["top1_right"] for r in answerable]),
            "current_above_stale": share([r[system]["current_above_stale"] for r in changes]),
            "no_stale_top5": share([r[system]["no_stale_top5"] for r in changes]),
            "low_conf_answerable": share([r[system]["low_confidence"] for r in answerable]),
            "low_conf_unanswerable": share([r[system]["low_confidence"] for r in unanswerable]),
            "confidence_auc": auc(
                [r[system]["confidence"] for r in answerable],
                [r[system]["confidence"] for r in unanswerable],
            ),
            "top1_noise": share([r[system]["top1_noise"] for r in rows]),
        }
    out["answer"] = share([r["answer_right"] for r in answerable])
    out["chat"] = share([r["chat_right"] for r in answerable])
    out["answer_clean_unanswerable"] = share([r["answer_right"] for r in unanswerable])
    out["chat_clean_unanswerable"] = share([r["chat_right"] for r in unanswerable])
    overlaps = [r["overlap"] for r in answerable if r["overlap"] is not None]
    out["word_overlap"] = round(statistics.fmean(overlaps), 3) if overlaps else None
    return out


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def tables(results: dict[str, Any]) -> str:
    overall = results["overall"]
    groups = {"all": overall, **results["by_kind"]}
    lines = [
        f"everyday ({'after one sleep()' if results['sleep'] else 'no sleep'}): "
        f"{overall['questions']} questions in {len(results['stores'])} stores, "
        f"{results['memories']} memories observed; % of questions",
        "",
        "| kind | n | top-1 ucma | top-1 dense | answer | chat | low-conf ucma "
        "| low-conf dense | word overlap |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for kind, s in groups.items():
        lowc = "low_conf_unanswerable" if kind == "unanswerable" else "low_conf_answerable"
        answer = s["answer_clean_unanswerable"] if kind == "unanswerable" else s["answer"]
        chat = s["chat_clean_unanswerable"] if kind == "unanswerable" else s["chat"]
        lines.append(
            f"| {kind} | {s['questions']} | {pct(s['ucma']['top1'])} | {pct(s['dense']['top1'])} "
            f"| {pct(answer)} | {pct(chat)} | {pct(s['ucma'][lowc])} | {pct(s['dense'][lowc])} "
            f"| {s['word_overlap'] if s['word_overlap'] is not None else '-'} |"
        )
    lines += [
        "",
        "(unanswerable row: answer / chat = states no forbidden value; low-conf = share "
        "flagged; other rows: low-conf on answerable questions)",
        "",
        "| metric | ucma | dense | target |",
        "|---|---|---|---|",
    ]
    rows = [
        ("top-1 right (answerable)", "top1", ">= 90"),
        ("current above every stale (change)", "current_above_stale", ">= 95"),
        ("no stale in top 5 (change)", "no_stale_top5", ">= 85"),
        ("low_confidence on unanswerable", "low_conf_unanswerable", ">= 80"),
        ("low_confidence on answerable", "low_conf_answerable", "<= 10"),
        ("top-1 is chit-chat (all questions)", "top1_noise", "0"),
    ]
    for label, key, target in rows:
        lines.append(
            f"| {label} | {pct(overall['ucma'][key])} | {pct(overall['dense'][key])} | {target} |"
        )
    lines.append(
        f"| confidence AUC answerable vs unanswerable | {overall['ucma']['confidence_auc']} "
        f"| {overall['dense']['confidence_auc']} | - |"
    )
    lines.append(f"| answer fully right (answerable) | {pct(overall['answer'])} | - | >= 85 |")
    lines.append(f"| chat fully right (answerable) | {pct(overall['chat'])} | - | >= 85 |")
    lines += [
        "",
        "| store | memories | stored | archived by sleep | questions | top-1 | change ok "
        "| answer | chat | low-conf unanswerable |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for store in results["stores"]:
        s = store["summary"]
        archived = store["sleep"].get("archived", "-")
        lines.append(
            f"| {store['store']} | {store['memories']} | {store['stored']} "
            f"| {archived} | {s['questions']} | {pct(s['ucma']['top1'])} "
            f"| {pct(s['ucma']['current_above_stale'])} | {pct(s['answer'])} | {pct(s['chat'])} "
            f"| {pct(s['ucma']['low_conf_unanswerable'])} |"
        )
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-sleep", action="store_true", help="skip sleep() before asking")
    parser.add_argument("--stores", type=int, help="only N stores, spread over the sizes")
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()

    scenarios = generate(seed=args.seed)
    if args.stores and args.stores < len(scenarios):
        step = (len(scenarios) - 1) / max(1, args.stores - 1)
        scenarios = [scenarios[round(i * step)] for i in range(args.stores)]
    embedder = MemoEmbedder(LocalEmbedder())
    stores = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for scenario in scenarios:
            store = await run_store(scenario, embedder, Path(tmp), sleep=not args.no_sleep)
            store["summary"] = summarise(store["rows"])
            stores.append(store)
            s = store["summary"]
            print(
                f"{scenario.name}: {s['questions']} questions, top-1 {pct(s['ucma']['top1'])} "
                f"answer {pct(s['answer'])} ({time.perf_counter() - start:.0f}s)",
                file=sys.stderr,
                flush=True,
            )
    rows = [row for store in stores for row in store["rows"]]
    results: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "seed": args.seed,
        "sleep": not args.no_sleep,
        "limit": LIMIT,
        "memories": sum(s["memories"] for s in stores),
        "targets": TARGETS,
        "overall": summarise(rows),
        "by_kind": {k: summarise([r for r in rows if r["kind"] == k]) for k in KINDS},
        "stores": [{k: v for k, v in s.items() if k != "rows"} for s in stores],
        "questions": rows,
    }
    table = tables(results)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
        args.out.with_suffix(".md").write_text(table)


if __name__ == "__main__":
    asyncio.run(main())
