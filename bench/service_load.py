"""The service under concurrent load, on loopback: ``ucma serve`` on a fresh store, one
process on SQLite, or several processes on one PostgreSQL database.

Each run starts ``ucma serve --no-auth`` (a subprocess, as a user runs it) on a fresh home in
a temporary folder, on its SQLite file, or with ``--database URL`` (a PostgreSQL server) on a
fresh database created next to the one the URL names (dropped afterwards), ``--processes``
of them on loopback ports. It seeds the store through ``POST /v1/observe/batch`` (``--seed``
memories spread over ``--users`` users), then, for each client count of ``--clients``, runs
that many concurrent clients over real HTTP (httpx, one connection each) for ``--warmup``
seconds (not counted) and ``--seconds`` seconds (counted), client ``i`` talking to process
``i mod --processes``: half of them ``POST /v1/observe`` a new chat-like line each time, the
other half ``POST /v1/recall`` a question about such lines
(``bench/core.py``'s generators: varied text, no sentence repeated). Each client sends its
next request when its last one is answered.

Measured per client count, in the same run:

- ``requests_per_s`` overall and per operation, and latency p50 / p95 / p99 (ms) overall and
  per operation; ``errors`` (a status other than 201 for observe, 200 for recall, or no
  answer), by status;
- ``server_cpu_cores``: the server processes' CPU seconds over the wall seconds of the
  counted window (2.0 is both cores of this machine), ``server_cpu_ms_per_request`` the same
  CPU time per request (what a request costs, whatever else runs on the machine), and
  ``client_cpu_cores`` the clients' own (they share the machine with the server); on
  PostgreSQL, ``database_cpu_cores`` and ``database_cpu_ms_per_request`` the same for the
  database server's processes (the postmaster and its children, found through its
  ``postmaster.pid``: when the server runs on this machine and its files are readable);
- ``rss_mb``: the server processes' resident memory (summed) at the start, middle and end
  of the counted window, and ``rss_growth_mb`` from start to end (memory flat: a growth
  near 0);
- ``observe_ratio``: observe requests per second over ``embedder_per_s``, the packaged
  embedder's own throughput (``LocalEmbedder.embed_sync`` on 1,000 lines of the same kind,
  in this process while the server is idle: the better of batches of 64 on all cores in one
  call and one call per core on one thread each; measured before each client count and at
  the end, the median of those), and ``embeddings_ratio``: all requests per second (each
  embeds about one text) over it;
- ``load_average``: the machine's 1-minute load average as the window starts and ends (the
  machine is shared; the clients themselves run in this process, on the same two cores).

With ``--steady S``, each run ends with S seconds of the first client count all recalling:
the store no longer grows, so neither should the server's memory (``steady_recall``).

With ``--compare-sqlite`` (with ``--database``), each run measures one process on a fresh
SQLite store first and then the PostgreSQL processes, at the same moment's load: the result
holds both setups and the ratio of each figure, PostgreSQL over SQLite.

With ``--runs`` above one, every run starts fresh servers and stores, and the summary holds
the median of each figure over the runs. Linux only (the servers' memory and CPU time are
read from ``/proc``).

Usage: ``python bench/service_load.py [--seconds 30] [--clients 8,32] [--runs 3]
[--database postgresql://... --processes 4 [--compare-sqlite]]
[--out bench/results/service_load.json]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from cryptography.fernet import Fernet

from ucma.embeddings import LocalEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from core import percentile, questions, synthetic_texts  # noqa: E402 - bench siblings
from process_cpu import database_cpu_seconds, postmaster_pid, process_cpu_seconds  # noqa: E402
from startup import environment, free_port, ucma_command  # noqa: E402

OPERATIONS = {"observe": ("/v1/observe", 201), "recall": ("/v1/recall", 200)}
SEED_BATCH = 100
READY_SECONDS = 120.0
REQUEST_TIMEOUT = 120.0
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(slots=True)
class Sample:
    """One answered (or failed) request of the counted window."""

    operation: str
    latency_s: float
    status: int  # 0: no answer (a transport error)


@dataclass(slots=True)
class Texts:
    """Distinct observation lines and questions, handed out in order to every client."""

    lines: list[str]
    asks: list[str]
    used: Counter[str] = field(default_factory=Counter)

    def next(self, operation: str) -> str:
        pool = self.lines if operation == "observe" else self.asks
        index = self.used[operation] % len(pool)
        self.used[operation] += 1
        return pool[index]


# ----------------------------------------------------------------------------- the server


class Server:
    """``ucma serve --no-auth`` on a free port of 127.0.0.1 over ``home`` (its SQLite file),
    or over ``database`` (a URL) when given."""

    def __init__(
        self, home: Path, database: str | None = None, name: str = "serve", vault_key: str = ""
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = (home / f"{name}.log").open("wb")
        env = environment(home)
        if vault_key:
            env["UCMA_VAULT_KEY"] = vault_key  # one key for every process of the database
        store = ["--database", database] if database is not None else []
        self.process = subprocess.Popen(
            [*ucma_command(), "serve", "--no-auth", "--port", str(self.port), *store],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    async def ready(self, client: httpx.AsyncClient) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ucma serve exited with status {self.process.returncode}")
            try:
                if (await client.get(f"{self.base}/v1/health")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.05)  # polling a process that is starting
        raise RuntimeError("ucma serve did not answer /v1/health")

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS in /proc status")

    def cpu_seconds(self) -> float:
        return process_cpu_seconds(self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


class Service:
    """The processes of one setup: one ``Server`` on a fresh SQLite file in ``home``, or
    ``processes`` of them on a fresh database of the PostgreSQL server ``database``
    names (created here, dropped by ``stop``)."""

    def __init__(self, home: Path, database: str | None = None, processes: int = 1) -> None:
        self.admin = database
        self.database: str | None = None
        vault_key = ""
        if database is not None:
            self.database = create_database(database)
            vault_key = Fernet.generate_key().decode()
        self.servers = [
            Server(home, self.database, f"serve{i}", vault_key) for i in range(processes)
        ]
        self.postmaster = postmaster_pid(database) if database is not None else None

    @property
    def bases(self) -> list[str]:
        return [server.base for server in self.servers]

    async def ready(self, client: httpx.AsyncClient) -> None:
        for server in self.servers:
            await server.ready(client)

    def rss_mb(self) -> float:
        return sum(server.rss_mb() for server in self.servers)

    def cpu_seconds(self) -> float:
        return sum(server.cpu_seconds() for server in self.servers)

    def database_cpu_seconds(self) -> float | None:
        """The database server's CPU seconds so far (None without a local PostgreSQL)."""
        return database_cpu_seconds(self.postmaster)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
        if self.admin is not None and self.database is not None:
            drop_database(self.admin, self.database)


def create_database(admin: str) -> str:
    """A new database on the server the URL ``admin`` names; its URL."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"ucma_service_load_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    info = conninfo_to_dict(admin)
    login = str(info.get("user", "")) + (f":{info['password']}" if info.get("password") else "")
    return f"postgresql://{login}@{info.get('host', '127.0.0.1')}:{info.get('port', 5432)}/{name}"


def drop_database(admin: str, url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[-1]
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


# ----------------------------------------------------------------------------- load


async def seed(client: httpx.AsyncClient, base: str, users: list[str], texts: list[str]) -> None:
    """Store ``texts`` round-robin over ``users``, ``SEED_BATCH`` per request."""
    per_user: dict[str, list[str]] = {user: [] for user in users}
    for index, text in enumerate(texts):
        per_user[users[index % len(users)]].append(text)
    for user, lines in per_user.items():
        for start in range(0, len(lines), SEED_BATCH):
            items = [{"content": line} for line in lines[start : start + SEED_BATCH]]
            response = await client.post(
                f"{base}/v1/observe/batch", json={"user_id": user, "items": items}
            )
            if response.status_code != 201:
                raise RuntimeError(f"seeding failed: {response.status_code} {response.text}")


def body(operation: str, user: str, text: str) -> dict[str, Any]:
    if operation == "observe":
        return {"user_id": user, "content": text}
    return {"user_id": user, "query": text, "limit": 5}


async def client_loop(
    client: httpx.AsyncClient,
    base: str,
    operation: str,
    user: str,
    texts: Texts,
    until: float,
    samples: list[Sample] | None,
) -> None:
    """Send ``operation`` requests one after another until ``until`` (monotonic)."""
    path, expected = OPERATIONS[operation]
    while time.monotonic() < until:
        started = time.perf_counter()
        try:
            response = await client.post(
                f"{base}{path}", json=body(operation, user, texts.next(operation))
            )
            status = response.status_code
        except httpx.HTTPError:
            status = 0
        if samples is not None:
            latency = time.perf_counter() - started
            samples.append(Sample(operation, latency, status if status != expected else -1))


async def window(
    service: Service,
    clients: int,
    users: list[str],
    texts: Texts,
    seconds: float,
    counted: bool,
    recall_only: bool = False,
) -> dict[str, Any] | None:
    """``clients`` concurrent clients for ``seconds``, half observing and half recalling
    (all recalling with ``recall_only``), client ``i`` on the service's process ``i``
    modulo their number; the figures when ``counted``."""
    samples: list[Sample] | None = [] if counted else None
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=REQUEST_TIMEOUT) as client:
        operations = [
            "observe" if i < clients // 2 and not recall_only else "recall" for i in range(clients)
        ]
        rss = [service.rss_mb()]
        load = [os.getloadavg()[0]]
        cpu_before = service.cpu_seconds()
        database_before = service.database_cpu_seconds()
        client_before = time.process_time()
        started = time.perf_counter()
        until = time.monotonic() + seconds
        tasks = [
            asyncio.create_task(
                client_loop(
                    client,
                    service.bases[i % len(service.bases)],
                    op,
                    users[i % len(users)],
                    texts,
                    until,
                    samples,
                )
            )
            for i, op in enumerate(operations)
        ]
        await asyncio.sleep(seconds / 2)  # the middle of the window, for a memory sample
        rss.append(service.rss_mb())
        await asyncio.gather(*tasks)
        elapsed = time.perf_counter() - started
        cpu = service.cpu_seconds() - cpu_before
        database_after = service.database_cpu_seconds()
        client_cpu = time.process_time() - client_before
        rss.append(service.rss_mb())
        load.append(os.getloadavg()[0])
    if samples is None:
        return None
    database_cpu = None
    if database_before is not None and database_after is not None:
        database_cpu = database_after - database_before
    return summarise(samples, elapsed, (cpu, client_cpu), rss, load, database_cpu)


def latency_ms(latencies: list[float]) -> dict[str, float]:
    if not latencies:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    return {
        name: round(percentile(latencies, q) * 1000, 1)
        for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))
    }


def summarise(
    samples: list[Sample],
    elapsed: float,
    cpu: tuple[float, float],
    rss: list[float],
    load: list[float],
    database_cpu: float | None = None,
) -> dict[str, Any]:
    """Throughput, latency, errors, CPU (the servers', the clients', the database
    server's when measured) and memory of one counted window."""
    server_cpu, client_cpu = cpu
    ok = [s for s in samples if s.status == -1]
    errors = Counter(str(s.status) for s in samples if s.status != -1)
    per_operation = {
        operation: {
            "requests_per_s": round(sum(s.operation == operation for s in ok) / elapsed, 1),
            "latency_ms": latency_ms([s.latency_s for s in ok if s.operation == operation]),
        }
        for operation in OPERATIONS
    }
    database = {}
    if database_cpu is not None:
        database = {
            "database_cpu_cores": round(database_cpu / elapsed, 2),
            "database_cpu_ms_per_request": round(1000 * database_cpu / max(1, len(samples)), 1),
        }
    # What a request costs the machine: the servers' CPU and the database server's.
    total_cpu = server_cpu + (database_cpu or 0.0)
    return {
        "seconds": round(elapsed, 2),
        "requests": len(samples),
        "requests_per_s": round(len(ok) / elapsed, 1),
        "latency_ms": latency_ms([s.latency_s for s in ok]),
        "operations": per_operation,
        "errors": sum(errors.values()),
        "errors_by_status": dict(errors),
        "server_cpu_cores": round(server_cpu / elapsed, 2),
        "server_cpu_ms_per_request": round(1000 * server_cpu / max(1, len(samples)), 1),
        "client_cpu_cores": round(client_cpu / elapsed, 2),
        **database,
        "total_cpu_ms_per_request": round(1000 * total_cpu / max(1, len(samples)), 1),
        "rss_mb": {"start": round(rss[0]), "middle": round(rss[1]), "end": round(rss[2])},
        "rss_growth_mb": round(rss[2] - rss[0], 1),
        "load_average": {"start": round(load[0], 2), "end": round(load[1], 2)},
    }


# ----------------------------------------------------------------------------- runs


class EmbedderAlone:
    """The packaged embedder alone in this process, measured while the server is idle."""

    def __init__(self, sentences: int = 1_000) -> None:
        self.texts = synthetic_texts(sentences, seed=99)
        self.whole = LocalEmbedder()  # one call at a time on every core (its default)
        self.per_core = LocalEmbedder(intra_op_threads=1)  # one call per core, as served
        self.cores = os.cpu_count() or 1
        for embedder in (self.whole, self.per_core):
            embedder.embed_sync(self.texts[:64])  # load the model and warm the session
        self.samples: list[float] = []

    def measure(self) -> float:
        """Sentences/s, the better of the embedder's two ways of using the cores: batches
        of 64 in one call on all cores, or one call per core on one thread each."""
        started = time.perf_counter()
        self.whole.embed_sync(self.texts)
        whole = len(self.texts) / (time.perf_counter() - started)
        shares = [self.texts[i :: self.cores] for i in range(self.cores)]
        started = time.perf_counter()
        with ThreadPoolExecutor(self.cores) as pool:
            list(pool.map(self.per_core.embed_sync, shares))
        per_core = len(self.texts) / (time.perf_counter() - started)
        self.samples.append(max(whole, per_core))
        return self.samples[-1]


@dataclass(frozen=True, slots=True)
class Setup:
    """Where the service runs: its database server (None: a fresh SQLite file) and how
    many ``ucma serve`` processes share it."""

    database: str | None
    processes: int

    @property
    def name(self) -> str:
        kind = "sqlite" if self.database is None else "postgresql"
        return f"{kind}, {self.processes} process{'es' if self.processes > 1 else ''}"


async def one_run(
    args: argparse.Namespace, run: int, setup: Setup, alone: EmbedderAlone
) -> dict[str, Any]:
    users = [f"user{i}" for i in range(args.users)]
    total = args.seconds + args.warmup
    requests = int(max(args.clients) * total * 200) + 1_000  # more than can be sent
    texts = Texts(
        lines=synthetic_texts(requests, seed=1_000 + run),
        asks=questions(requests, seed=2_000 + run),
    )
    samples_before = len(alone.samples)
    with tempfile.TemporaryDirectory(prefix="ucma-service-load-") as home:
        service = Service(Path(home), setup.database, setup.processes)
        try:
            async with httpx.AsyncClient(timeout=REQUEST_TIMEOUT) as client:
                await service.ready(client)
                await seed(client, service.bases[0], users, synthetic_texts(args.seed, seed=run))
            levels: dict[str, Any] = {}
            for clients in args.clients:
                alone.measure()  # the servers idle, just before the clients start
                await window(service, clients, users, texts, args.warmup, counted=False)
                figures = await window(service, clients, users, texts, args.seconds, counted=True)
                assert figures is not None
                levels[str(clients)] = figures
            alone.measure()
            steady = None
            if args.steady:
                # The store no longer grows: the servers' memory should not either.
                steady = await window(
                    service, args.clients[0], users, texts, args.steady, True, recall_only=True
                )
        finally:
            service.stop()
    # The machine is shared: the embedder's figure is the median of its measurements
    # around the windows, and each ratio is to that.
    samples = alone.samples[samples_before:]
    embedder_per_s = statistics.median(samples)
    for clients, figures in levels.items():
        observe = figures["operations"]["observe"]["requests_per_s"]
        figures["observe_ratio"] = round(observe / embedder_per_s, 3)
        figures["embeddings_ratio"] = round(figures["requests_per_s"] / embedder_per_s, 3)
        print(f"run {run}, {setup.name}, {clients} clients: {json.dumps(figures)}", flush=True)
    return {
        "embedder_per_s": round(embedder_per_s, 1),
        "embedder_samples": [round(sample, 1) for sample in samples],
        "clients": levels,
        **({"steady_recall": steady} if steady is not None else {}),
    }


RATIO_FIGURES = ("requests_per_s", "server_cpu_ms_per_request", "total_cpu_ms_per_request")


def ratios(setups: dict[str, dict[str, Any]], over: str, of: str) -> dict[str, Any]:
    """Per client count, the median over runs of each run's ratio ``of`` / ``over`` (same
    run, same moment's load) of requests/s, latency p50 / p95 / p99, and CPU per request
    (the servers', and theirs with the database server's)."""
    result: dict[str, Any] = {}
    for clients in setups[over]["runs"][0]["clients"]:
        pairs = zip(setups[of]["runs"], setups[over]["runs"], strict=True)
        per_run: dict[str, list[float]] = {}
        for new, base in pairs:
            mine, theirs = new["clients"][clients], base["clients"][clients]
            for name in RATIO_FIGURES:
                per_run.setdefault(name, []).append(mine[name] / theirs[name])
            for name in ("p50", "p95", "p99"):
                per_run.setdefault(f"latency_{name}", []).append(
                    mine["latency_ms"][name] / theirs["latency_ms"][name]
                )
        result[clients] = {name: round(statistics.median(v), 3) for name, v in per_run.items()}
    return result


def median_figures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The median over runs of every number in the runs' figures (same shape); lists of
    samples are kept, one per run."""

    def merge(values: list[Any]) -> Any:
        first = values[0]
        if isinstance(first, list):
            return values  # samples: each run's, as they were
        if isinstance(first, dict):
            keys = {key for value in values for key in value}
            return {key: merge([v.get(key, 0) for v in values]) for key in sorted(keys)}
        return round(statistics.median(values), 3)

    return merge(runs)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="counted seconds per level")
    parser.add_argument("--warmup", type=float, default=5.0, help="uncounted seconds first")
    parser.add_argument(
        "--clients",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[8, 32],
        help="comma-separated client counts",
    )
    parser.add_argument("--users", type=int, default=8, help="users the clients act for")
    parser.add_argument("--seed", type=int, default=2_000, help="memories stored first")
    parser.add_argument(
        "--steady",
        type=float,
        default=0.0,
        help="then seconds of the first client count all recalling (memory of a store "
        "that no longer grows)",
    )
    parser.add_argument("--runs", type=int, default=1, help="fresh servers; medians reported")
    parser.add_argument(
        "--database",
        default=None,
        help="a PostgreSQL server (postgresql://user@host:port/db): each run serves a fresh "
        "database created beside the one named [default: a fresh SQLite file]",
    )
    parser.add_argument(
        "--processes", type=int, default=1, help="ucma serve processes on that database"
    )
    parser.add_argument(
        "--compare-sqlite",
        action="store_true",
        help="each run also measures one process on a fresh SQLite file first, with ratios",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or args.warmup < 0 or args.runs < 1 or args.users < 1:
        parser.error("--seconds must be positive, --warmup not negative, --runs and --users >= 1")
    if any(clients < 2 for clients in args.clients):
        parser.error("--clients must be at least 2 each (half observe, half recall)")
    if args.processes < 1:
        parser.error("--processes must be at least 1")
    if args.database is not None and not args.database.startswith(("postgresql://", "postgres://")):
        parser.error("--database names a PostgreSQL server: postgresql://user@host:port/db")
    if args.compare_sqlite and args.database is None:
        parser.error("--compare-sqlite compares with the --database setup: give --database")
    return args


def setups_of(args: argparse.Namespace) -> list[Setup]:
    """The setups each run measures, in order."""
    measured = Setup(args.database, args.processes)
    return [Setup(None, 1), measured] if args.compare_sqlite else [measured]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    setups = setups_of(args)
    alone = EmbedderAlone()
    runs: dict[str, list[dict[str, Any]]] = {setup.name: [] for setup in setups}
    for run in range(args.runs):
        for setup in setups:
            runs[setup.name].append(asyncio.run(one_run(args, run, setup, alone)))
    results = {name: {"median": median_figures(each), "runs": each} for name, each in runs.items()}
    result = {
        "benchmark": "service_load",
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        "settings": {
            "seconds": args.seconds,
            "warmup": args.warmup,
            "clients": args.clients,
            "users": args.users,
            "seed_memories": args.seed,
            "steady_recall_seconds": args.steady,
            "runs": args.runs,
            "setups": [setup.name for setup in setups],
        },
        "setups": results,
    }
    if len(setups) == 2:
        result["ratios"] = {
            "of": setups[1].name,
            "over": setups[0].name,
            "clients": ratios(results, setups[0].name, setups[1].name),
        }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
