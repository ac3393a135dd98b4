"""SIGKILL trials and backups taken during writes (issue 13, done-when 5).

Crash trials. Each trial starts a child process (``python bench/crash.py child ...``) that
opens the engine in-process on a real SQLite file and writes in a loop, one operation kind
per store: ``observe`` one text, ``observe_many`` a batch of 8, a ``sleep`` cycle after six
observations (on a simulated clock moved 2.5 days a cycle, so compression, abstraction and
forgetting have work), or ``decide`` then ``outcome`` over 24 memories. Before each call the
child prints a ``begin`` line; after the call returns it prints an ``ack`` line naming what
was written (and how long the call took) and flushes it: that line is the acknowledgement.
The parent picks a random call of the trial's kind, waits until that call's ``begin`` is the
last line printed (the child is inside it), waits a random time up to about one typical call
(``SPAN``) and SIGKILLs the child: the kill lands at a random point inside the call or
shortly after it. Acks still in the pipe were printed before the kill, so they count. Then
it checks the file:

- ``PRAGMA integrity_check`` is ok; every memory has its vector, of the model's width, and
  the row of its kind, and no vector is left without its memory (the keyword and vector
  indexes are in-process, rebuilt from these rows when a store opens: the search below
  checks them);
- the event log (written by triggers in each write's transaction) replays to exactly the
  memories the table holds;
- every acknowledged write is there: ``get`` returns it and a search by its text finds it in
  the top 10 (except memories archived by forgetting or superseded by a later statement
  about the same person, which recall demotes by design); an outcome's trace carries its
  quality. Each store is checked against every acknowledgement of every trial so far,
  except that in the sleep store a memory a later cycle purged (archived 30 days before on
  its simulated clock, which moves 30 days a trial) counts as purged when the event log
  records its deletion, and as lost otherwise;
- no half-written batch: each batch found has all its items (``observe_many`` is atomic);
- the event log replays to the live salience state (``AsyncMemory.replay``).

Backup trials. A child observes in a loop; after a random number of acknowledgements the
parent notes them and runs ``ucma backup`` (the CLI: a third process) while the child goes on
writing, waits for one more acknowledgement (the writer was live during the backup), kills the
writer, restores the backup with ``ucma.restore_backup`` into a new file and checks that file
as above against every write acknowledged before the backup began.

Prints a table and writes bench/results/crash.json.
Run: python bench/crash.py [--trials 100] [--backup-trials 5] [--seed 13]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import select
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from ucma import restore_backup
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError
from ucma.lifecycle.clock import SimulatedClock

RESULTS = Path(__file__).parent / "results"
OPERATIONS = ("observe", "batch", "sleep", "outcome")
USER = "crash"
BATCH = 8
#: Memories one decision of the outcome trials draws on; observations per sleep cycle.
DECISION_MEMORIES = 24
CYCLE = 6
#: About 1.5 times the median length of a call of each kind on a 2-core machine
#: (``call_seconds_median`` in the results): the kill lands up to this long after the
#: parent saw the call begin (inside it, or after it returned and into the next).
SPAN = {"observe": 0.06, "batch": 1.2, "sleep": 0.02, "outcome": 0.0035}
#: The call of the trial's kind at which the kill is aimed, drawn from 1..MOST.
MOST = {"observe": 10, "batch": 4, "sleep": 3, "outcome": 10}
SLEEP_START = 1_800_000_000.0
_BATCH_TAG = re.compile(r"^Batch (b\d+-\d+) item (\d+):")

NAMES = [
    "Maya",
    "Rui",
    "Ana",
    "Tomas",
    "Ines",
    "Joao",
    "Lena",
    "Omar",
    "Priya",
    "Kofi",
    "Sven",
    "Hana",
    "Diego",
    "Yuki",
    "Farah",
]
DOINGS = [
    "booked a table at",
    "left a laptop charger at",
    "is meeting the landlord at",
    "ordered new tyres from",
    "starts pottery lessons at",
    "lost a blue umbrella near",
    "moved the team offsite to",
    "renewed the gym membership at",
    "is volunteering every week at",
    "bought concert tickets for a show at",
]
PLACES = [
    "the harbour market",
    "Alfama's old bakery",
    "the north library",
    "Parque das Nacoes",
    "the riverside clinic",
    "the climbing gym on Rua Augusta",
    "the airport hotel",
    "the community garden",
    "the jazz cellar downtown",
    "the ferry terminal",
    "the ceramics studio in Graca",
    "the co-working loft",
]
# No weekdays or clock times: a search by a text naming "Monday" is read as a question
# about last Monday (``ucma.retrieval.timeparse``) and would skip today's memories.
WITH = [
    "a cousin",
    "two colleagues",
    "the neighbours",
    "an old friend",
    "the whole choir",
    "a client",
]


def sentence(rng: random.Random, prefix: str) -> str:
    return (
        f"{prefix} {rng.choice(NAMES)} {rng.choice(DOINGS)} {rng.choice(PLACES)} with "
        f"{rng.choice(WITH)}, reference {rng.randint(1000, 9999)}."
    )


# ------------------------------------------------------------------------------- child


_BEGAN = [0.0]


def _say(**line: Any) -> None:
    """Print a begin or ack line (an ack says how long its call took) and flush it."""
    now = time.perf_counter()
    if line["kind"] == "begin":
        _BEGAN[0] = now
    else:
        line["seconds"] = round(now - _BEGAN[0], 4)
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


async def child(operation: str, db: str, seed: int, start: float) -> None:
    """Write ``operation`` in a loop until killed, announcing and acknowledging each call."""
    rng = random.Random(seed)
    clock = SimulatedClock(start) if operation == "sleep" else None
    async with AsyncMemory(db, user_id=USER, clock=clock) as mem:
        ids: list[str] = []
        if operation == "outcome":  # each decision draws on many memories: an outcome
            # updates the salience of each, with its events, in one transaction
            items = [sentence(rng, f"Advice {seed}-{i}:") for i in range(DECISION_MEMORIES)]
            _say(kind="begin", op="batch", tag=f"advice {seed}")
            observations = await mem.observe_many(items)
            _say(
                kind="ack",
                op="batch",
                tag=f"advice {seed}",
                items=[
                    {"id": o.id, "content": c, "merged": o.merged_into is not None}
                    for o, c in zip(observations, items, strict=True)
                    if o.stored
                ],
            )
            ids = list(dict.fromkeys(o.id for o in observations if o.stored))
        n = 0
        while True:
            if operation in ("observe", "sleep"):
                content = sentence(rng, f"Note {seed}-{n}:")
                _say(kind="begin", op="observe")
                observation = await mem.observe(content)
                if observation.stored:
                    _say(kind="ack", op="observe", id=observation.id, content=content)
                if operation == "sleep" and n % CYCLE == CYCLE - 1:
                    assert clock is not None
                    clock.advance(days=2.5)
                    _say(kind="begin", op="sleep")
                    report = await mem.sleep()
                    listed = await mem.list(limit=10_000, include_archived=True)
                    _say(
                        kind="ack",
                        op="sleep",
                        ids=[r.id for r in listed],
                        phases=report.phases,
                        clock=clock.now(),
                    )
            elif operation == "batch":
                tag = f"b{seed}-{n}"
                items = [sentence(rng, f"Batch {tag} item {i}:") for i in range(BATCH)]
                _say(kind="begin", op="batch", tag=tag)
                observations = await mem.observe_many(items)
                _say(
                    kind="ack",
                    op="batch",
                    tag=tag,
                    items=[
                        {"id": o.id, "content": c, "merged": o.merged_into is not None}
                        for o, c in zip(observations, items, strict=True)
                        if o.stored
                    ],
                )
            elif operation == "outcome":
                scores = [rng.random() + 0.1 for _ in ids]
                _say(kind="begin", op="decide")
                trace = await mem.decide(ids, scores, summary=f"decision {seed}-{n}")
                _say(kind="ack", op="decide", trace=trace.id)
                quality = round(rng.uniform(-1.0, 1.0), 3)
                _say(kind="begin", op="outcome", trace=trace.id)
                await mem.outcome(trace.id, quality, "task_completed")
                _say(kind="ack", op="outcome", trace=trace.id, quality=quality)
            n += 1


# ------------------------------------------------------------------------------- checks


@dataclass
class Acknowledged:
    """What a store must hold: memory id -> text, outcomes, whole batches."""

    memories: dict[str, str] = field(default_factory=dict)
    outcomes: dict[str, float] = field(default_factory=dict)
    decisions: set[str] = field(default_factory=set)
    batches: dict[str, int] = field(default_factory=dict)  # tag -> items stored unmerged
    present: set[str] = field(default_factory=set)  # ids a sleep cycle listed

    def add(self, ack: dict[str, Any]) -> int:
        """Record one ack line; returns the writes it acknowledges."""
        op = ack["op"]
        if op == "observe":
            self.memories[ack["id"]] = ack["content"]
            return 1
        if op == "batch":
            for item in ack["items"]:
                self.memories[item["id"]] = item["content"]
            self.batches[ack["tag"]] = sum(not i["merged"] for i in ack["items"])
            return len(ack["items"])
        if op == "sleep":
            self.present.update(ack["ids"])
            return 1
        if op == "decide":
            self.decisions.add(ack["trace"])
            return 1
        self.outcomes[ack["trace"]] = ack["quality"]
        return 1


def file_problems(db: Path, dimension: int) -> list[str]:
    """Integrity, vectors and kind rows, straight from SQLite."""
    problems = []
    conn = sqlite3.connect(db)
    try:
        result = [row[0] for row in conn.execute("PRAGMA integrity_check")]
        if result != ["ok"]:
            problems.append(f"integrity_check: {result[:3]}")
        checks = {
            "memories without a vector": "SELECT count(*) FROM memories m "
            "WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.seq = m.seq)",
            "vectors of the wrong width": "SELECT count(*) FROM vectors "
            f"WHERE length(vector) != {dimension * 4}",
            "vectors without a memory": "SELECT count(*) FROM vectors v "
            "WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.seq = v.seq)",
        }
        for kind, table in (
            ("episodic", "episodes"),
            ("semantic", "facts"),
            ("procedural", "procedures"),
            ("learning", "learnings"),
        ):
            checks[f"{kind} memories without their row"] = (
                f"SELECT count(*) FROM memories m WHERE kind = '{kind}' "
                f"AND NOT EXISTS (SELECT 1 FROM {table} t WHERE t.seq = m.seq)"
            )
        for name, sql in checks.items():
            count = conn.execute(sql).fetchone()[0]
            if count:
                problems.append(f"{name}: {count}")
        # The event log (written by triggers in each write's transaction) replays to the
        # memories the table holds.
        alive: set[str] = set()
        for kind, payload in conn.execute(
            "SELECT type, payload FROM events "
            "WHERE type IN ('memory.stored', 'memory.deleted') ORDER BY position"
        ):
            memory_id = json.loads(payload)["memory_id"]
            (alive.add if kind == "memory.stored" else alive.discard)(memory_id)
        live = {row[0] for row in conn.execute("SELECT id FROM memories")}
        if alive != live:
            problems.append(
                f"the event log replays to {len(alive - live)} memories the table lacks "
                f"and lacks {len(live - alive)} it holds"
            )
    finally:
        conn.close()
    return problems


def superseded(db: Path) -> set[str]:
    conn = sqlite3.connect(db)
    try:
        return {row[0] for row in conn.execute("SELECT memory_id FROM supersessions")}
    finally:
        conn.close()


def deleted(db: Path) -> set[str]:
    """Memories whose deletion the event log records (a sleep cycle purges memories
    archived for 30 days: the sleep store's clock moves 30 days a trial)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT json_extract(payload, '$.memory_id') FROM events WHERE type = 'memory.deleted'"
        )
        return {row[0] for row in rows}
    finally:
        conn.close()


def batch_counts(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT content FROM memories WHERE content LIKE 'Batch %'").fetchall()
    finally:
        conn.close()
    counts: dict[str, int] = {}
    for (content,) in rows:
        if found := _BATCH_TAG.match(content):
            counts[found.group(1)] = counts.get(found.group(1), 0) + 1
    return counts


async def lost_writes(
    db: Path, embedder: LocalEmbedder, expected: Acknowledged, searched: dict[str, str]
) -> tuple[list[str], list[str], int]:
    """(writes lost, consistency problems, acknowledged memories a later sleep cycle
    purged) of the store against what was acknowledged;
    ``searched`` are the memories whose text must also find them in a search."""
    lost: list[str] = []
    problems: list[str] = []
    gone: list[str] = []  # deleted by a later sleep cycle, as its event says
    demoted, purged = superseded(db), deleted(db)
    async with AsyncMemory(db, user_id=USER, embedder=embedder) as mem:
        for memory_id in sorted(expected.memories.keys() | expected.present):
            try:
                await mem.get(memory_id)
            except NotFoundError:
                if memory_id in purged:
                    gone.append(memory_id)
                else:
                    lost.append(f"memory {memory_id}")
        for trace_id in sorted(expected.decisions | expected.outcomes.keys()):
            try:
                trace = await mem.trace(trace_id)
            except NotFoundError:
                lost.append(f"decision {trace_id}")
                continue
            if trace_id in expected.outcomes and (
                not trace.outcome_observed
                or abs((trace.outcome_quality or 0.0) - expected.outcomes[trace_id]) > 1e-9
            ):
                lost.append(f"outcome of {trace_id}")
        for memory_id, content in searched.items():
            if f"memory {memory_id}" in lost or memory_id in gone:
                continue
            record = await mem.get(memory_id)
            if record.archived_at is not None or memory_id in demoted:
                continue
            hits = await mem.remember(content, limit=10)
            if memory_id not in {h.id for h in hits}:
                problems.append(f"memory {memory_id} not found by its own text")
        projection = await mem.replay()
        if not projection.matches_live:
            problems.append(f"replay differs from live state: {len(projection.mismatches)}")
    return lost, problems, len(gone)


# ------------------------------------------------------------------------------- parent


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def spawn(operation: str, db: Path, seed: int, start: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, __file__, "child", operation, str(db), str(seed), repr(start)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )


class Pipe:
    """The child's stdout read as it comes, so the parent knows when it has caught up.

    A line cut short by the kill (a long sleep ack is more than one atomic pipe write)
    was never acknowledged, and is dropped."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.fd = stream.fileno()
        self.closed = False
        self._buffer = b""

    def read(self, timeout: float | None) -> list[dict[str, Any]]:
        """The complete lines that arrive within ``timeout`` seconds (None: wait for some)."""
        if self.closed or not select.select([self.fd], [], [], timeout)[0]:
            return []
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.closed = True
            self.stream.close()
            return []
        *complete, self._buffer = (self._buffer + chunk).split(b"\n")
        return [json.loads(line) for line in complete if line]

    def waiting(self) -> bool:
        return not self.closed and bool(select.select([self.fd], [], [], 0)[0])

    def rest(self) -> Iterator[dict[str, Any]]:
        """Every line still to come, until the child's end of the pipe closes."""
        while not self.closed:
            yield from self.read(None)


def kill(process: subprocess.Popen[bytes]) -> str:
    """SIGKILL the child; returns its stderr (for a child that died on its own)."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert process.stderr is not None
    with process.stderr:
        return process.stderr.read().decode("utf-8", "replace")


@dataclass
class TrialResult:
    operation: str
    acknowledged: int
    killed_inside: str | None  # the call the kill interrupted, None between calls
    lost: list[str]
    integrity: list[str]
    half_batches: list[str]
    purged: int  # acknowledged, then deleted by a later sleep cycle (its event recorded)


class Store:
    """One store file per operation kind, its acknowledgements accumulated over trials."""

    def __init__(self, folder: Path, operation: str) -> None:
        self.db = folder / f"{operation}.db"
        self.operation = operation
        self.expected = Acknowledged()
        self.clock = SLEEP_START
        self.seconds: dict[str, list[float]] = {}  # how long acknowledged calls took

    def trial(self, rng: random.Random, seed: int, embedder: LocalEmbedder) -> TrialResult:
        op = self.operation
        target = rng.randint(1, MOST[op])
        expected = self.expected
        mine = Acknowledged()  # this trial's: searched for by their text
        process = spawn(op, self.db, seed, self.clock)
        assert process.stdout is not None
        acknowledged = 0
        begun = 0
        last: dict[str, Any] = {}
        pipe = Pipe(process.stdout)

        def take(line: dict[str, Any]) -> None:
            nonlocal acknowledged
            if line["kind"] == "ack":
                acknowledged += expected.add(line)
                mine.add(line)
                self.seconds.setdefault(line["op"], []).append(line["seconds"])
                if line["op"] == "sleep":
                    self.clock = max(self.clock, line["clock"])

        # Aim at a call of the trial's kind the child is in right now: its begin line is
        # the last one printed and nothing follows yet. Then wait a random part of a
        # typical call's length and kill.
        while True:
            arrived = pipe.read(None)
            if pipe.closed and not arrived:
                raise RuntimeError(f"the {op} child died on its own:\n{kill(process)}")
            for line in arrived:
                last = line
                take(line)
                begun += line["kind"] == "begin" and line["op"] == op
            aimed = last == {**last, "kind": "begin", "op": op}
            if begun >= target and aimed and not pipe.waiting():
                break
        time.sleep(rng.uniform(0.0, SPAN[op]))
        kill(process)
        for line in pipe.rest():  # printed (acknowledged) before the kill
            last = line
            take(line)
        if op == "sleep":  # the next trial's clock starts well after this one's
            self.clock += 30 * 86_400.0

        integrity = file_problems(self.db, embedder.dimension)
        half = []
        if op == "batch":
            found = batch_counts(self.db)
            for tag, count in found.items():
                whole = expected.batches.get(tag, BATCH)
                if count not in (0, whole):
                    half.append(f"batch {tag}: {count} of {whole} items")
            half += [
                f"batch {t} missing" for t, n in expected.batches.items() if n and t not in found
            ]
        lost, problems, purged = asyncio.run(
            lost_writes(self.db, embedder, expected, mine.memories)
        )
        # The child's last line says where the kill landed: inside a call (it had begun
        # and was not acknowledged) or between two.
        inside = last["op"] if last.get("kind") == "begin" else None
        return TrialResult(op, acknowledged, inside, lost, integrity + problems, half, purged)


def backup_trial(
    folder: Path, rng: random.Random, seed: int, embedder: LocalEmbedder
) -> dict[str, Any]:
    home = folder / f"backup-{seed}"
    home.mkdir()
    db = home / "ucma.db"
    process = spawn("observe", db, seed, 0.0)
    assert process.stdout is not None
    before = Acknowledged()
    wanted = rng.randint(5, 40)
    pipe = Pipe(process.stdout)
    count = 0
    while count < wanted and not pipe.closed:
        for line in pipe.read(None):
            if line["kind"] == "ack":
                count += before.add(line)  # acknowledged before the backup begins
    backup = folder / f"backup-{seed}.db"
    command = [sys.executable, "-c", "from ucma.cli.main import app; app()", "backup"]
    done = subprocess.run(
        [*command, str(backup), "--home", str(home), "--json"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    if done.returncode != 0:
        kill(process)
        raise RuntimeError(f"ucma backup failed: {done.stderr}")
    during = 0
    while not during and not pipe.closed:  # the writer kept going during the backup
        during += sum(line["kind"] == "ack" for line in pipe.read(None))
    kill(process)
    during += sum(line["kind"] == "ack" for line in pipe.rest())
    restored = folder / f"restored-{seed}.db"
    restore_backup(backup, restored)
    integrity = file_problems(restored, embedder.dimension)
    lost, problems, _ = asyncio.run(lost_writes(restored, embedder, before, dict(before.memories)))
    return {
        "acknowledged_before_backup": count,
        "acknowledged_after_backup_began": during,
        "lost": lost,
        "integrity": integrity + problems,
    }


def run(trials: int, backup_trials: int, seed: int, folder: Path) -> dict[str, Any]:
    rng = random.Random(seed)
    embedder = LocalEmbedder()
    embedder.load()
    stores = {op: Store(folder, op) for op in OPERATIONS}
    per_op: dict[str, dict[str, Any]] = {
        op: {
            "trials": 0,
            "acknowledged": 0,
            "killed_inside_call": 0,
            "killed_inside_own_call": 0,
            "lost": 0,
            "integrity_failures": 0,
            "half_written_batches": 0,
            "purged_by_a_later_sleep": 0,
        }
        for op in OPERATIONS
    }
    failures: list[dict[str, Any]] = []
    started = time.perf_counter()
    for number in range(trials):
        op = OPERATIONS[number % len(OPERATIONS)]
        result = stores[op].trial(rng, seed * 1000 + number, embedder)
        row = per_op[op]
        row["trials"] += 1
        row["acknowledged"] += result.acknowledged
        row["killed_inside_call"] += result.killed_inside is not None
        row["killed_inside_own_call"] += result.killed_inside == op
        row["lost"] += len(result.lost)
        row["integrity_failures"] += bool(result.integrity)
        row["half_written_batches"] += len(result.half_batches)
        # Each trial checks every acknowledgement so far: the last count is the store's.
        row["purged_by_a_later_sleep"] = result.purged
        if result.lost or result.integrity or result.half_batches:
            failures.append(asdict(result))
        print(
            f"trial {number + 1:3d} {op:8s} acked {result.acknowledged:3d} "
            f"{'inside ' + result.killed_inside if result.killed_inside else 'between'} "
            f"lost {len(result.lost)} problems {len(result.integrity) + len(result.half_batches)}",
            flush=True,
        )
    backups = []
    for number in range(backup_trials):
        backups.append(backup_trial(folder, rng, seed * 1000 + 900 + number, embedder))
        print(f"backup {number + 1}: {backups[-1]}", flush=True)
    totals = {key: sum(row[key] for row in per_op.values()) for key in per_op[OPERATIONS[0]]}
    return {
        "benchmark": "crash",
        "seed": seed,
        "operations": per_op,
        "totals": totals,
        "store_sizes": {op: s.db.stat().st_size for op, s in stores.items() if s.db.exists()},
        # How long acknowledged calls took here (medians): against SPAN, how far in the
        # random kill delay reaches.
        "call_seconds_median": {
            call: round(statistics.median(seconds), 4)
            for call, seconds in sorted(
                (c, [x for s in stores.values() for x in s.seconds.get(c, [])])
                for c in ("observe", "batch", "sleep", "decide", "outcome")
            )
            if seconds
        },
        "kill_delay_max_seconds": SPAN,
        "failures": failures[:20],
        "backup": {
            "trials": len(backups),
            "acknowledged_before_backup": sum(b["acknowledged_before_backup"] for b in backups),
            "writes_after_backup_began": sum(b["acknowledged_after_backup_began"] for b in backups),
            "lost": sum(len(b["lost"]) for b in backups),
            "integrity_failures": sum(bool(b["integrity"]) for b in backups),
            "runs": backups,
        },
        "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        _, _, operation, db, seed, start = sys.argv
        asyncio.run(child(operation, db, int(seed), float(start)))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--backup-trials", type=int, default=5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", type=Path, default=RESULTS / "crash.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ucma-crash-") as folder:
        result = run(args.trials, args.backup_trials, args.seed, Path(folder))
    print()
    print(
        f"{'operation':10s} {'trials':>6s} {'acked':>6s} {'inside':>6s} {'own':>4s} "
        f"{'lost':>5s} {'integrity':>9s} {'half':>5s} {'purged':>6s}"
    )
    for op, row in [*result["operations"].items(), ("total", result["totals"])]:
        print(
            f"{op:10s} {row['trials']:6d} {row['acknowledged']:6d} {row['killed_inside_call']:6d} "
            f"{row['killed_inside_own_call']:4d} "
            f"{row['lost']:5d} {row['integrity_failures']:9d} {row['half_written_batches']:5d} "
            f"{row['purged_by_a_later_sleep']:6d}"
        )
    b = result["backup"]
    print(
        f"backup during writes: {b['trials']} trials, {b['acknowledged_before_backup']} writes "
        f"acknowledged before, {b['lost']} lost, {b['integrity_failures']} integrity failures"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
