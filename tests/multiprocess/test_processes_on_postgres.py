"""4 ``ucma serve --no-maintenance`` processes and 2 ``ucma worker`` processes on one
PostgreSQL database, 20 scopes hammered through them for a fixed number of requests
(issue 17, Done-when 2):

- no lost acknowledged write: every observe answered 201 is in the database afterwards,
  in its scope;
- read-your-writes across processes: a write acknowledged by process A is read by id
  and found by a recall through other processes right after;
- no cross-scope read: a memory read through another scope is 404, and every memory a
  recall returned belongs to the scope asked for;
- no duplicate consolidation: no two recorded sleep cycles of one scope overlap in time,
  although the workers' rounds and the services' ``new_session`` cycles race for them;
- no outcome applied twice: one outcome posted at once through three processes is
  applied by one (the others get 409), with one event and one salience update;
- a crashed worker's scope is taken over: one worker is killed while it holds a scope's
  lease, and a new worker's round afterwards consolidates every scope.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from tests.bench_modules import load_bench
from tests.multiprocess.conftest import (
    READY_SECONDS,
    Server,
    UcmaProcess,
    ucma_command,
    ucma_environment,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SERVERS = 4
WORKERS = 2
SCOPES = 20
ROUNDS = 6
"""Rounds over every scope; each round sends about 8 requests per scope."""
CLIENT_THREADS = 8
TIMEOUT = 120.0
OVERLAP_TOLERANCE = 0.005
"""Seconds two cycles' recorded times may touch (the clock read at a cycle's start and
the duration measured apart)."""


@dataclass
class Tally:
    """What the clients saw, shared by their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    written: dict[str, str] = field(default_factory=dict)  # memory id -> user
    recalled: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    traces: list[tuple[str, str]] = field(default_factory=list)  # (trace id, user)
    statuses: Counter[str] = field(default_factory=Counter)

    def count(self, what: str, status: int) -> None:
        with self.lock:
            self.statuses[f"{what} {status}"] += 1


def _expect(response: httpx.Response, status: int, tally: Tally, what: str) -> dict[str, Any]:
    tally.count(what, response.status_code)
    assert response.status_code == status, f"{what}: {response.status_code} {response.text}"
    body: dict[str, Any] = response.json()
    return body


def _scope_work(
    user: str, number: int, servers: list[Server], lines: list[str], tally: Tally
) -> None:
    """Every round for one scope, through the processes in turn."""
    rng = random.Random(number)
    client = httpx.Client(timeout=TIMEOUT)
    try:
        for round_ in range(ROUNDS):
            a, b, c, d = (servers[(number + round_ + k) % SERVERS] for k in range(4))
            text = lines[number * ROUNDS + round_]
            written = _expect(
                client.post(f"{a.base}/v1/observe", json={"user_id": user, "content": text}),
                201,
                tally,
                "observe",
            )
            memory_id = written["id"]
            with tally.lock:
                tally.written[memory_id] = user
            # Read-your-writes: the write A acknowledged, through B by id, C by recall.
            read = _expect(
                client.get(f"{b.base}/v1/memories/{memory_id}", params={"user_id": user}),
                200,
                tally,
                "get",
            )
            assert read["id"] == memory_id
            found = _expect(
                client.post(
                    f"{c.base}/v1/recall",
                    json={"user_id": user, "query": text, "limit": 10, "kinds": ["episodic"]},
                ),
                200,
                tally,
                "recall",
            )
            ids = [hit["id"] for hit in found["results"]]
            assert memory_id in ids, (text, found["results"])
            with tally.lock:
                tally.recalled[user].update(ids)
            # Another scope never reads it.
            other = f"user{(number + 1 + rng.randrange(SCOPES - 1)) % SCOPES:02d}"
            response = client.get(f"{d.base}/v1/memories/{memory_id}", params={"user_id": other})
            tally.count("cross-scope get", response.status_code)
            assert response.status_code == 404, response.text
            if round_ % 2 == 1:  # a new session: a background sleep cycle in that process
                _expect(
                    client.post(f"{d.base}/v1/sessions", json={"user_id": user}),
                    201,
                    tally,
                    "session",
                )
            if round_ % 3 == 2:
                _outcome_race(client, user, memory_id, (a, b, c, d), tally)
    finally:
        client.close()


def _outcome_race(
    client: httpx.Client, user: str, memory_id: str, servers: tuple[Server, ...], tally: Tally
) -> None:
    """A decision through one process, its outcome posted at once through three."""
    first, *others = servers
    trace = _expect(
        client.post(
            f"{first.base}/v1/decisions",
            json={"user_id": user, "memory_ids": [memory_id], "summary": "acted on it"},
        ),
        201,
        tally,
        "decide",
    )
    with tally.lock:
        tally.traces.append((trace["id"], user))
    barrier = threading.Barrier(len(others))

    def post(server: Server) -> int:
        with httpx.Client(timeout=TIMEOUT) as own:
            barrier.wait()
            response = own.post(
                f"{server.base}/v1/decisions/{trace['id']}/outcome",
                json={"user_id": user, "quality": 0.8, "signal": "task_completed"},
            )
        tally.count("outcome", response.status_code)
        return response.status_code

    with ThreadPoolExecutor(len(others)) as pool:
        statuses = sorted(pool.map(post, others))
    assert statuses == [200] + [409] * (len(others) - 1), statuses


def _leases_of(database: str, pid: int) -> list[tuple[str, int]]:
    """The leases a process (by pid, in its owner name) holds now: (name, claims)."""
    with psycopg.connect(database) as conn:
        rows = conn.execute(
            "SELECT name, claims FROM leases WHERE owner LIKE %s", (f"%:{pid}/%",)
        ).fetchall()
    return [(str(name), int(claims)) for name, claims in rows]


def _kill_while_holding(
    worker: UcmaProcess, database: str, deadline: float
) -> list[tuple[str, int]]:
    """SIGKILL ``worker`` at a moment it holds a scope's lease (polled until then)."""
    while True:
        held = _leases_of(database, worker.pid)
        if any(name.startswith("consolidate:") for name, _ in held):
            worker.kill()
            return _leases_of(database, worker.pid)
        assert time.monotonic() < deadline, f"the worker never held a lease:\n{worker.output()}"
        time.sleep(0.005)  # polling the database for the moment to crash it


def test_four_services_and_two_workers_on_one_database(
    postgres_database: str, processes: list[UcmaProcess], tmp_path: Path
) -> None:
    database = postgres_database
    servers = [
        Server(database, tmp_path / f"serve{i}.log", "--no-maintenance") for i in range(SERVERS)
    ]
    processes.extend(servers)
    deadline = time.monotonic() + READY_SECONDS
    for server in servers:
        server.wait_ready(deadline)
    workers = [
        UcmaProcess(
            ["worker", "--database", database, "--interval", "0.05", "--json"],
            tmp_path / f"worker{i}.log",
        )
        for i in range(WORKERS)
    ]
    processes.extend(workers)

    users = [f"user{i:02d}" for i in range(SCOPES)]
    lines = load_bench("core").synthetic_texts(SCOPES * ROUNDS, seed=17)
    tally = Tally()
    with ThreadPoolExecutor(CLIENT_THREADS) as pool:
        futures = [
            pool.submit(_scope_work, user, number, servers, lines, tally)
            for number, user in enumerate(users)
        ]
        # While the clients hammer the services, one worker crashes holding a scope.
        crashed = _kill_while_holding(workers[1], database, time.monotonic() + 300)
        for future in futures:
            future.result()

    # A clean shutdown: uvicorn ends by raising the signal again, the worker exits 0.
    for server in servers:
        assert server.stop() == -signal.SIGTERM, server.output()
    assert workers[0].stop() == 0, workers[0].output()
    # A new worker's round: every scope is free again (the crashed worker's claim is
    # taken over, the stopped processes released theirs), so it consolidates them all.
    final = subprocess.run(
        ucma_command("worker", "--database", database, "--rounds", "1", "--json"),
        env=ucma_environment(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert final.returncode == 0, final.stderr
    report = json.loads(final.stdout)
    assert report["cycles"] == SCOPES and report["failed_scopes"] == [], report

    assert tally.statuses["observe 201"] == SCOPES * ROUNDS, tally.statuses
    assert not [s for s in tally.statuses if s.split()[-1].startswith("5")], tally.statuses
    with psycopg.connect(database) as conn:
        # No lost acknowledged write, each in its own scope.
        stored = dict(
            conn.execute(
                "SELECT id, user_id FROM memories WHERE id = ANY(%s)", (list(tally.written),)
            ).fetchall()
        )
        assert stored == tally.written
        # No cross-scope read: every memory a recall returned is of the scope asked for.
        for user, ids in tally.recalled.items():
            owners = {
                row[0]
                for row in conn.execute(
                    "SELECT DISTINCT user_id FROM memories WHERE id = ANY(%s)", (list(ids),)
                )
            }
            assert owners == {user}, (user, owners)
        # No duplicate consolidation: one scope's recorded cycles never overlap.
        runs: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
        for user, started, seconds, trigger in conn.execute(
            "SELECT user_id, started_at, seconds, trigger FROM sleep_runs ORDER BY started_at"
        ):
            runs[user].append((started, seconds, trigger))
        assert set(runs) == set(users)
        triggers = Counter(trigger for cycles in runs.values() for _, _, trigger in cycles)
        assert triggers["new_session"] and triggers["all_scopes"], triggers
        for user, cycles in runs.items():
            for (start, seconds, _), (after, _, _) in zip(cycles, cycles[1:], strict=False):
                assert after >= start + seconds - OVERLAP_TOLERANCE, (user, cycles)
        # No outcome applied twice: one event and one salience update per decision.
        observed = Counter(
            json.loads(payload)["trace_id"]
            for (payload,) in conn.execute(
                "SELECT payload FROM events WHERE type = 'outcome.observed'"
            )
        )
        updates = Counter(
            trace for (trace,) in conn.execute("SELECT trace_id FROM salience_updates")
        )
        traces = [trace for trace, _ in tally.traces]
        assert len(traces) == SCOPES * len(range(2, ROUNDS, 3))
        assert observed == Counter(traces) and updates == Counter(traces)
        # The crashed worker's lease was taken over and released.
        for name, claims in crashed:
            owner, now_claims = conn.execute(
                "SELECT owner, claims FROM leases WHERE name = %s", (name,)
            ).fetchone()
            assert owner is None and now_claims > claims, (name, owner, now_claims, claims)
    assert crashed, "the worker was killed while holding a lease"
