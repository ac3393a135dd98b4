"""The memory inspector on a large scope: how long each view's API calls take, and how
many bytes the page downloads before its first view.

A scope of 100,000 memories (default ``--size``) is written straight through the storage
layer's batch path (episodes with vectors, retention states, session-order edges, in
chunks of 5,000: seconds, not the hours 100,000 HTTP observes would take). Its vectors
are the packaged model's embeddings of 2,048 distinct synthetic texts, each reused with
a little noise (the search does the same work on them as on 100,000 distinct
embeddings), and the most sleep cycles a scope keeps (1,000) to its log. Then, through
the public API like any client, it adds what the other views show (facts with a pending
conflict, decisions with outcomes, a strategy, opinions, goals with subgoals,
competences, transitions; no sleep cycle, which would archive most of three months of
synthetic episodes), starts
the real service (uvicorn, loopback HTTP) and, for every view, issues the requests the
page issues (``src/ucma/server/static/views/*.js``), ``--repeat`` times: per call and
per view (its calls one after another, an upper bound of what the page waits for, since
the page sends a view's independent calls together), the median and 95th percentile.
The first-view bytes follow the page's module graph from ``/`` (HTML, style sheet, the
modules ``main.js`` imports and the first view's module) plus the JSON of the first
view's calls.

Usage: ``python bench/inspector.py [--size 100000] [--repeat 20]
[--out bench/results/inspector.json]``
(also writes the ``.md`` table next to the JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import uvicorn

sys.path.insert(0, str(Path(__file__).parent))

from core import percentile, run_meta, synthetic_texts  # noqa: E402
from ucma.config import UCMAConfig  # noqa: E402
from ucma.embeddings import LocalEmbedder  # noqa: E402
from ucma.engine import AsyncMemory  # noqa: E402
from ucma.memory.retention import initial_stability  # noqa: E402
from ucma.server import create_app  # noqa: E402
from ucma.storage.sqlite import SQLiteStorage  # noqa: E402
from ucma.types import Episode, GraphEdge, RetentionInfo, Scope, SleepRun  # noqa: E402

USER = "inspector"
SCOPE = Scope(USER, "default")
CHUNK = 5_000
DISTINCT = 2_048
SESSION = 25
DAY = 86_400.0
STATIC = Path(__file__).resolve().parents[1] / "src" / "ucma" / "server" / "static"


def seed_storage(path: Path, size: int, embedder: LocalEmbedder, now: float) -> float:
    """Write ``size`` episodes of the last 90 days through the storage batch path, and
    a full log of sleep cycles; returns the seconds it took."""
    texts = synthetic_texts(size, seed=18)
    base = np.concatenate(
        [embedder.embed_sync(texts[i : i + 512]) for i in range(0, DISTINCT, 512)]
    ).astype(np.float32)
    rng = np.random.default_rng(18)
    start = time.perf_counter()
    storage = SQLiteStorage(path, dimension=base.shape[1])
    try:
        for first in range(0, size, CHUNK):
            count = min(CHUNK, size - first)
            noise = rng.normal(0.0, 0.05, (count, base.shape[1])).astype(np.float32)
            vectors = base[(np.arange(first, first + count)) % DISTINCT] + noise
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            moments = [now - 90 * DAY + (first + i) * (90 * DAY / size) for i in range(count)]
            episodes = [
                Episode(
                    id=f"ep_bench{first + i:07d}",
                    user_id=SCOPE.user_id,
                    agent_id=SCOPE.agent_id,
                    content=texts[first + i],
                    created_at=moments[i],
                    session_id=f"ses_bench{(first + i) // SESSION:06d}",
                    timestamp=moments[i],
                    source="user" if (first + i) % 3 else "assistant",
                    temporal_level=2,
                )
                for i in range(count)
            ]
            edges = [
                GraphEdge(a.id, b.id, "followed_by", 0.5, b.created_at)
                for a, b in zip(episodes, episodes[1:], strict=False)
                if a.session_id == b.session_id
            ]
            with storage.transaction():
                storage.episodes.add(episodes, vectors)
                storage.retention.put_many(
                    SCOPE,
                    [RetentionInfo(e.id, initial_stability(2), e.created_at) for e in episodes],
                )
                storage.graph.add_edges(SCOPE, edges)
        kept = UCMAConfig().consolidation.sleep_runs_kept
        for n in range(kept):  # a scope's sleep log at its longest
            storage.lifecycle.add_sleep_run(
                SleepRun(
                    USER,
                    SCOPE.agent_id,
                    "new_session" if n % 4 else "gardener",
                    now - (kept - n) * 3_600.0,
                    0.4,
                    ("compress", "abstract", "reinforce", "prune", "clean"),
                    {"compress": {"expired": 25, "promoted": 20, "archived": 5}},
                ),
                keep=kept,
            )
    finally:
        storage.close()
    return time.perf_counter() - start


def ok(response: httpx.Response) -> Any:
    if response.status_code >= 300:
        raise RuntimeError(f"{response.request.method} {response.request.url}: {response.text}")
    return response.json() if response.content else None


async def seed_api(client: httpx.AsyncClient, episode: str) -> dict[str, Any]:
    """What the other views show, written as a client would."""
    scope = {"user_id": USER}
    ids: dict[str, Any] = {"episode": episode}
    await client.post(
        "/v1/facts", json={**scope, "subject": "Maria", "predicate": "lives_in", "object": "Porto"}
    )
    conflict = ok(
        await client.post(
            "/v1/facts",
            json={
                **scope,
                "subject": "Maria",
                "predicate": "lives_in",
                "object": "Braga",
                "provenance": "inferred",
                "confidence": 0.75,
            },
        )
    )
    ids["fact"] = conflict["fact"]["id"]
    for n in range(20):
        decision = ok(
            await client.post(
                "/v1/decisions",
                json={
                    **scope,
                    "memory_ids": [episode, f"ep_bench{n * 97:07d}"],
                    "summary": f"Decision {n} on the garden",
                },
            )
        )
        await client.post(
            f"/v1/decisions/{decision['id']}/outcome",
            json={
                **scope,
                "quality": 0.8 if n % 3 else -0.5,
                "signal": "task_completed" if n % 3 else "task_failed",
            },
        )
    ids["decision"] = decision["id"]
    for n in range(30):
        goal = ok(
            await client.post(
                "/v1/goals",
                json={
                    **scope,
                    "description": f"Repot balcony herb tray {n}: buy soil, repot the seedlings "
                    "and water them",
                    "priority": (n % 10) / 10,
                    "deadline": time.time() + n * DAY,
                },
            )
        )
    steps = ["Buy soil", "Repot the seedlings", "Water them"]
    subgoals = ok(
        await client.post(f"/v1/goals/{goal['id']}/decompose", json={**scope, "steps": steps})
    )["items"]
    ids["goal"] = goal["id"]
    ids["subgoals"] = [g["id"] for g in subgoals]
    for n in range(40):
        await client.post(
            "/v1/self/competences",
            json={
                **scope,
                "capability": f"garden task {n % 8}",
                "success": n % 3 != 0,
                "predicted": 0.7,
                **({"failure_reason": "frost"} if n % 3 == 0 else {}),
            },
        )
        await client.post(
            "/v1/world/transitions",
            json={**scope, "action": f"water bed {n % 5}", "outcome": "seedlings", "context": {}},
        )
    await client.post(
        "/v1/trajectories",
        json={
            **scope,
            "task": "Repaint the garden fence",
            "steps": ["Sand", "Prime", "Paint"],
            "success": True,
            "domain": "garden",
        },
    )
    await client.post(
        "/v1/retain",
        json={
            **scope,
            "text": "Maria thinks the new fence colour is too bright.",
            "bank": "opinion",
            "topic": "fence colour",
        },
    )
    return ids


def views(
    ids: dict[str, Any], now: float, live: int
) -> dict[str, list[tuple[str, str, dict[str, Any]]]]:
    """Each view's API calls as the page makes them: (method, path, params or body);
    ``live``: the memories the list shows (the last page starts at its last 100)."""
    u = {"user_id": USER}
    last_page = max(0, (live - 1) // 100 * 100)
    ep, fact, decision, goal = ids["episode"], ids["fact"], ids["decision"], ids["goal"]
    return {
        "scopes": [("GET", "/v1/scopes", {"limit": 50})],
        "memories (first page)": [("GET", "/v1/memories", {**u, "limit": 100})],
        "memories (last page)": [("GET", "/v1/memories", {**u, "limit": 100, "offset": last_page})],
        "memories by kind": [("GET", "/v1/memories", {**u, "limit": 100, "kind": "semantic"})],
        "memories by bank": [("GET", "/v1/memories", {**u, "limit": 100, "bank": "opinion"})],
        "search (recall)": [
            (
                "POST",
                "/v1/recall",
                {**u, "query": "When did Maria visit the garden?", "limit": 25, "explain": True},
            )
        ],
        "memory (episode)": [
            ("GET", f"/v1/memories/{ep}", u),
            ("GET", f"/v1/memories/{ep}/history", u),
            ("GET", f"/v1/memories/{ep}/retention", {**u, "days_ahead": 30}),
            ("GET", f"/v1/memories/{ep}/influence", {**u, "min_decisions": 1}),
            ("GET", f"/v1/memories/{ep}/sources", u),
        ],
        "memory (fact)": [
            ("GET", f"/v1/memories/{fact}", u),
            ("GET", f"/v1/memories/{fact}/history", u),
            ("GET", f"/v1/memories/{fact}/retention", {**u, "days_ahead": 30}),
            ("GET", f"/v1/memories/{fact}/influence", {**u, "min_decisions": 1}),
            ("GET", f"/v1/memories/{fact}/sources", u),
            ("GET", "/v1/facts/history", {**u, "subject": "Maria", "predicate": "lives_in"}),
            ("GET", "/v1/conflicts", {**u, "subject": "Maria", "predicate": "lives_in"}),
        ],
        "graph": [
            ("GET", f"/v1/memories/{ep}", u),
            ("GET", f"/v1/memories/{ep}/links", {**u, "limit": 40}),
        ],
        "timeline": [
            ("GET", "/v1/episodes", {**u, "start": now - 30 * DAY, "end": now, "limit": 200})
        ],
        "conflicts": [
            ("GET", "/v1/conflicts", {**u, "status": "pending", "limit": 50}),
            ("GET", "/v1/review_flags", {**u, "limit": 100}),
        ],
        "decisions": [("GET", "/v1/decisions", {**u, "limit": 50})],
        "decision": [
            ("GET", f"/v1/decisions/{decision}", u),
            ("GET", f"/v1/memories/{ep}", u),
            ("GET", f"/v1/memories/{ep}/influence", {**u, "min_decisions": 1}),
            ("GET", f"/v1/decisions/{decision}/counterfactuals", u),
        ],
        "strategies": [("GET", "/v1/memories", {**u, "kind": "procedural", "limit": 50})],
        "opinions": [("GET", "/v1/opinions", {**u, "limit": 50})],
        "goals": [("GET", "/v1/goals", {**u, "limit": 50})],
        "goal": [
            ("GET", f"/v1/goals/{goal}", u),
            *[("GET", f"/v1/goals/{s}", u) for s in ids["subgoals"]],
            ("GET", f"/v1/goals/{goal}/anticipate", u),
        ],
        "self-model": [
            ("GET", "/v1/self/competences", {**u, "limit": 50}),
            ("GET", "/v1/self/learning-priorities", {**u, "limit": 10}),
            ("GET", "/v1/world/transitions", {**u, "limit": 20}),
        ],
        "sleep & gardener": [
            ("GET", "/v1/gardener", {}),
            ("GET", "/v1/sleep/runs", {**u, "limit": 20}),
            (
                "GET",
                "/v1/events",
                {
                    **u,
                    "types": [
                        "memory.archived",
                        "memory.restored",
                        "memory.superseded",
                        "fact.superseded",
                        "strategy.merged",
                        "procedure.status_changed",
                    ],
                    "newest_first": "true",
                    "limit": 50,
                },
            ),
            ("GET", "/v1/duplicates", {**u, "limit": 50}),
        ],
        "forgetting preview (button)": [("POST", "/v1/forget", {**u, "dry_run": True})],
        "live events": [("GET", "/v1/events", {**u, "newest_first": "true", "limit": 100})],
        "stats": [("GET", "/v1/stats", u)],
    }


async def call(
    client: httpx.AsyncClient, method: str, path: str, data: dict[str, Any]
) -> tuple[float, int]:
    start = time.perf_counter()
    if method == "GET":
        response = await client.get(path, params=data)
    else:
        response = await client.post(path, json=data)
    elapsed = time.perf_counter() - start
    if response.status_code >= 300:
        raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:300]}")
    return elapsed, len(response.content)


def first_view_assets() -> list[str]:
    """The files the browser fetches before the first view: the shell, its style sheet,
    main.js and every module it imports statically, and the first view's module."""
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    files = ["index.html", *re.findall(r'(?:href|src)="/inspector/([^"]+)"', html)]
    queue = [f for f in files if f.endswith(".js")]
    while queue:
        module = queue.pop()
        source = (STATIC / module).read_text(encoding="utf-8")
        for imported in re.findall(r'^import [^;]*? from "\./([^"]+)";', source, re.MULTILINE):
            name = str(Path(module).parent / imported).removeprefix("./")
            if name not in files:
                files.append(name)
                queue.append(name)
    main = (STATIC / "main.js").read_text(encoding="utf-8")
    first = re.search(r'module: "\./(views/[^"]+)"', main)
    assert first is not None
    files.append(first.group(1))
    return files


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    embedder = LocalEmbedder()
    embedder.load()
    home = Path(tempfile.mkdtemp(prefix="ucma-inspector-bench-"))
    now = time.time()
    seed_seconds = seed_storage(home / "ucma.db", args.size, embedder, now)
    print(f"seeded {args.size:,} memories through the storage batch path in {seed_seconds:.1f} s")
    async with AsyncMemory(home / "ucma.db", embedder=embedder) as memory:
        prepared = await memory.prepare_search(user_id=USER)
        app = create_app(memory, require_keys=False, mcp=False, maintenance=False)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.05)
        try:
            base = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base, timeout=120) as client:
                ids = await seed_api(client, f"ep_bench{args.size - 10:07d}")
                listed = ok(await client.get("/v1/memories", params={"user_id": USER, "limit": 1}))
                every = ok(
                    await client.get(
                        "/v1/memories",
                        params={"user_id": USER, "limit": 1, "include_archived": "true"},
                    )
                )
                live = int(listed["total"])
                results = await time_views(client, views(ids, time.time(), live), args.repeat)
                first = await first_view_bytes(client)
        finally:
            server.should_exit = True
            await serving
            sock.close()
    return {
        "meta": run_meta(embedder),
        "size": args.size,
        "seed_seconds": round(seed_seconds, 1),
        "search_index": prepared,
        "memories_listed": live,
        "memories_with_archived": int(every["total"]),
        "repeat": args.repeat,
        "views": results,
        "first_view": first,
    }


async def time_views(
    client: httpx.AsyncClient, plan: dict[str, list[tuple[str, str, dict[str, Any]]]], repeat: int
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, calls in plan.items():
        await run_view(client, calls)  # warm: caches a person's first visit would also fill
        totals: list[float] = []
        per_call: list[list[float]] = [[] for _ in calls]
        size = 0
        for _ in range(repeat):
            total = 0.0
            size = 0
            for index, (method, path, data) in enumerate(calls):
                elapsed, length = await call(client, method, path, data)
                per_call[index].append(elapsed)
                total += elapsed
                size += length
            totals.append(total)
        results[name] = {
            "ms_p50": round(statistics.median(totals) * 1000, 1),
            "ms_p95": round(percentile(totals, 95) * 1000, 1),
            "bytes": size,
            "calls": [
                {
                    "call": f"{method} {path}",
                    "ms_p50": round(statistics.median(times) * 1000, 1),
                    "ms_p95": round(percentile(times, 95) * 1000, 1),
                }
                for (method, path, _), times in zip(calls, per_call, strict=True)
            ],
        }
        print(
            f"{name:24s} p50 {results[name]['ms_p50']:8.1f} ms"
            f"  p95 {results[name]['ms_p95']:8.1f} ms"
        )
    return results


async def run_view(client: httpx.AsyncClient, calls: list[tuple[str, str, dict[str, Any]]]) -> None:
    for method, path, data in calls:
        await call(client, method, path, data)


async def first_view_bytes(client: httpx.AsyncClient) -> dict[str, Any]:
    files: dict[str, int] = {}
    for name in first_view_assets():
        response = await client.get("/" if name == "index.html" else f"/inspector/{name}")
        response.raise_for_status()
        files[name] = len(response.content)
    data = 0
    for path, params in (("/v1/health", {}), ("/v1/scopes", {"limit": 50})):
        data += len((await client.get(path, params=params)).content)
    every = sum(p.stat().st_size for p in STATIC.rglob("*") if p.is_file())
    return {
        "assets": files,
        "asset_bytes": sum(files.values()),
        "data_bytes": data,
        "total_bytes": sum(files.values()) + data,
        "all_static_bytes": every,
        "limit_bytes": 500_000,
    }


def markdown(result: dict[str, Any]) -> str:
    first = result["first_view"]
    lines = [
        "# Memory inspector on a large scope",
        "",
        f"{result['size']:,} memories in one scope (seeded through the storage batch path in "
        f"{result['seed_seconds']} s; {result['memories_listed']:,} live memories listed, "
        f"{result['memories_with_archived']:,} with archived ones), the real service "
        "over loopback HTTP, each view's API "
        f"calls issued one after another {result['repeat']} times (after one warm-up). "
        "Times are the sum of a view's calls: an upper bound of what the page waits for.",
        "",
        "| view | calls | p50 ms | p95 ms | bytes |",
        "|---|---|---|---|---|",
    ]
    for name, view in result["views"].items():
        lines.append(
            f"| {name} | {len(view['calls'])} | {view['ms_p50']} | {view['ms_p95']} "
            f"| {view['bytes']:,} |"
        )
    lines += [
        "",
        f"Before the first view the page downloads {first['total_bytes']:,} bytes "
        f"({first['asset_bytes']:,} of HTML, CSS and JavaScript, {first['data_bytes']:,} of JSON); "
        f"the limit is {first['limit_bytes']:,}. All of the page's files together: "
        f"{first['all_static_bytes']:,} bytes.",
        "",
        f"Machine: {result['meta'].get('machine', '')} {result['meta'].get('python', '')}",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("bench/results/inspector.json"))
    args = parser.parse_args()
    result = asyncio.run(measure(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
