"""Hostile input against a real ``ucma serve``: no server error, no hang, flat memory.

Starts ``ucma serve`` (a subprocess, as a user runs it) on a fresh data folder with API keys
for two users, and sends at least ``--requests`` requests of these kinds:

- ``schemathesis``: cases generated from the service's own OpenAPI document (served at
  ``/openapi.json``) by schemathesis's public API, valid and invalid ones, sent with either
  user's key (or none);
- ``deep_json_body`` / ``deep_json_import``: JSON nested 1,000 to 400,000 levels, as a
  request body and as an import line;
- ``huge_array`` / ``huge_string``: arrays and strings up to and past the body limit;
- ``invalid_utf8``, ``nul_bytes``, ``wrong_content_type``: malformed bodies;
- ``stalled_body``: headers and a few bytes of body, then nothing (slowloris), over a raw
  socket; ``stalled_headers``: part of the headers, then nothing;
- ``flood``: many connections at once, each with a request (some get 503 ``overloaded``);
- ``batch_2000``: a 2,000-item batch observe; ``batch_accepted``: the largest batch the
  service accepts, of real sentences (it runs the embedding model);
- ``blank_import``: megabytes of blank import lines; ``huge_headers``: headers of 20 KB to
  1 MB.

A request that gets no answer within ``--deadline`` seconds is a hang. Reported: total
requests, server errors (5xx other than 503 ``overloaded``, which is the documented answer
to a full service) and hangs (both must be 0), the server's resident memory after a
warm-up round of every kind against the end (must stay within 20%), and per kind the
count of each status. Written to ``--out`` (default bench/results/hostile.json).

Usage: ``python bench/hostile.py [--requests 10000] [--deadline 120] [--out ...]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode

MEMORY_GROWTH_LIMIT = 0.20
OVERLOADED = "overloaded"
PROSE = (
    "the staging database moved to port 5433 after the migration and deploys are frozen on "
    "fridays because alice prefers the dark theme while bob reviews the retry budget of the "
    "billing service each morning before the standup"
)
WORDS = tuple(PROSE.split())


class Tally:
    """Per kind, the count of each outcome: a status code, ``hang`` or ``closed``."""

    def __init__(self) -> None:
        self.by_kind: dict[str, Counter[str]] = defaultdict(Counter)
        self.server_errors: list[dict[str, Any]] = []

    def add(self, kind: str, outcome: str, detail: str = "") -> None:
        self.by_kind[kind][outcome] += 1
        if outcome.isdigit() and int(outcome) >= 500 and OVERLOADED not in detail:
            self.server_errors.append({"kind": kind, "status": outcome, "body": detail[:300]})

    @property
    def total(self) -> int:
        return sum(sum(c.values()) for c in self.by_kind.values())

    def count(self, outcome: str) -> int:
        return sum(c[outcome] for c in self.by_kind.values())


def ucma_command() -> list[str]:
    script = Path(sys.executable).with_name("ucma")
    found = str(script) if script.is_file() else shutil.which("ucma")
    if found is None:
        sys.exit("the ucma console script is not installed: pip install -e '.[dev]'")
    return [found]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc status")


def create_key(home: Path, user: str, env: dict[str, str]) -> str:
    out = subprocess.run(
        [*ucma_command(), "keys", "create", "--user", user, "--home", str(home), "--json"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    return str(json.loads(out)["token"])


def sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


Thunk = Callable[[], Awaitable[None]]


class Attack:
    """The hand-made requests, each recorded in the tally under its kind."""

    def __init__(self, url: str, tokens: list[str], tally: Tally, deadline: float) -> None:
        self.url = url
        self.host, port = url.removeprefix("http://").split(":")
        self.port = int(port)
        self.tokens = tokens
        self.tally = tally
        self.deadline = deadline
        self.rng = random.Random(13)
        self.client = httpx.AsyncClient(
            base_url=url,
            timeout=deadline,
            limits=httpx.Limits(max_connections=400, max_keepalive_connections=20),
        )

    def auth(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.rng.choice(self.tokens)}"}

    async def send(self, kind: str, method: str, path: str, **kwargs: Any) -> None:
        headers = {**self.auth(), **kwargs.pop("headers", {})}
        try:
            response = await self.client.request(method, path, headers=headers, **kwargs)
        except httpx.TimeoutException:
            self.tally.add(kind, "hang")
            return
        except httpx.TransportError as exc:  # the server closed the connection
            self.tally.add(kind, "closed", repr(exc))
            return
        self.tally.add(kind, str(response.status_code), response.text)

    async def raw(self, kind: str, data: bytes, *, stall: bool) -> None:
        """Send ``data`` over a fresh socket; with ``stall``, send nothing more. The answer
        must come (and the connection close) within the deadline."""
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port)
        except OSError as exc:
            self.tally.add(kind, "closed", repr(exc))
            return
        try:
            writer.write(data)
            await writer.drain()
            if not stall:
                writer.write_eof()
            answer = await asyncio.wait_for(reader.read(), self.deadline)
        except TimeoutError:
            self.tally.add(kind, "hang")
            return
        except OSError as exc:
            self.tally.add(kind, "closed", repr(exc))
            return
        finally:
            writer.close()
        status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/") else "closed"
        self.tally.add(kind, status, answer.decode("utf-8", "replace"))

    def json_post(self, kind: str, path: str, body: bytes, ctype: str = "application/json"):
        return self.send(kind, "POST", path, content=body, headers={"content-type": ctype})

    def deep(self, depth: int) -> bytes:
        return b"[" * depth + b"]" * depth

    def round(self, batch_items: int) -> tuple[list[Thunk], list[Thunk]]:
        """One of every hand-made kind, each still to be sent: (the mix, then the flood, sent
        apart so that the flood's 503s do not stand in for the mix's answers)."""
        rng = self.rng
        header = b'{"type": "header", "format": "ucma-jsonl", "version": 1}\n'
        work: list[Thunk] = []
        flood: list[Thunk] = []
        for depth in (1_000, 10_000, 100_000, 400_000):
            body = b'{"content": ' + self.deep(depth) + b"}"
            work.append(partial(self.json_post, "deep_json_body", "/v1/observe", body))
            work.append(partial(self.json_post, "deep_json_body", "/v1/facts", self.deep(depth)))
            line = header + self.deep(depth) + b"\n"
            work.append(
                partial(
                    self.json_post, "deep_json_import", "/v1/import", line, "application/x-ndjson"
                )
            )
        items = b",".join([b'{"content": "x"}'] * 60_000)
        work.append(
            partial(
                self.json_post, "huge_array", "/v1/observe/batch", b'{"items": [' + items + b"]}"
            )
        )
        work.append(
            partial(
                self.json_post,
                "huge_array",
                "/v1/remember",
                b'{"query": "x", "tags": [' + b'"a",' * 200_000 + b'"a"]}',
            )
        )
        for size in (40_000, 900_000, 3_000_000):
            body = json.dumps({"content": "word " * (size // 5)}).encode()
            work.append(partial(self.json_post, "huge_string", "/v1/observe", body))
        for body in (
            b'{"content": "caf\xe9 \xff\xfe rules"}',
            b"\xc3\x28\xa0\xa1",
            b'{"query": "\xed\xa0\x80"}',
        ):
            work.append(partial(self.json_post, "invalid_utf8", "/v1/observe", body))
        for body in (
            b'{"content": "a\x00b is a nul"}',
            b'{"content": "a\\u0000b is a nul"}',
            b"\x00" * 1000,
        ):
            work.append(partial(self.json_post, "nul_bytes", "/v1/observe", body))
        for ctype in ("text/plain", "application/xml", "multipart/form-data; boundary=x", ""):
            body = b'{"content": "The deploy window is Tuesday at noon."}'
            work.append(partial(self.json_post, "wrong_content_type", "/v1/observe", body, ctype))
        work.append(
            partial(self.json_post, "wrong_content_type", "/v1/import", header, "application/json")
        )
        items_2000 = [{"content": sentence(rng, 60)} for _ in range(2_000)]
        work.append(
            partial(
                self.json_post,
                "batch_2000",
                "/v1/observe/batch",
                json.dumps({"items": items_2000}).encode(),
            )
        )
        work.append(
            partial(
                self.json_post,
                "blank_import",
                "/v1/import",
                header + b"\n" * 10_000_000,
                "application/x-ndjson",
            )
        )
        work.append(
            partial(
                self.json_post,
                "blank_import",
                "/v1/import",
                header + b"\r\n \t\n" * 500_000,
                "application/x-ndjson",
            )
        )
        for size in (20_000, 200_000, 1_000_000):
            work.append(
                partial(
                    self.send, "huge_headers", "GET", "/v1/stats", headers={"x-pad": "a" * size}
                )
            )
        token = self.tokens[0].encode()
        for _ in range(8):
            start = (
                b"POST /v1/observe HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                b"authorization: Bearer " + token + b"\r\ncontent-length: 5000\r\n\r\n"
            )
            work.append(partial(self.raw, "stalled_body", start + b'{"content": "he', stall=True))
            work.append(
                partial(
                    self.raw,
                    "stalled_headers",
                    b"POST /v1/observe HTTP/1.1\r\nhost: x\r\nx-a: ",
                    stall=True,
                )
            )
        for _ in range(100):
            flood.append(partial(self.send, "flood", "GET", "/v1/memories", params={"limit": 5}))
            flood.append(
                partial(
                    self.json_post,
                    "flood",
                    "/v1/remember",
                    b'{"query": "which port does staging use?"}',
                )
            )
        rng.shuffle(work)
        work.append(
            partial(self.json_post, "batch_accepted", "/v1/observe/batch", self.batch(batch_items))
        )
        return work, flood

    def batch(self, items: int) -> bytes:
        return json.dumps(
            {"items": [{"content": sentence(self.rng, 60)} for _ in range(items)]}
        ).encode()


@schemathesis.serializer("application/x-ndjson", "application/jsonl", "application/json-lines")
def jsonl(ctx: schemathesis.SerializationContext, value: object) -> bytes:
    """Import bodies are JSON Lines text; generated strings are sent as UTF-8."""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


def generated_cases(schema_url: str, count: int) -> list[schemathesis.Case]:
    """``count`` cases from the service's schema, valid and invalid, over every operation."""
    schema = schemathesis.openapi.from_url(schema_url)
    cases: list[schemathesis.Case] = []
    per_mode = max(1, count // 2)
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

        @given(case=schema.as_strategy(generation_mode=mode))
        @settings(
            max_examples=per_mode,
            database=None,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def collect(case: schemathesis.Case) -> None:
            cases.append(case)

        collect()
    return cases


def call_case(
    case: schemathesis.Case, url: str, headers: dict[str, str], deadline: float, tally: Tally
) -> None:
    import requests

    try:
        response = case.call(base_url=url, headers=headers, timeout=deadline)
    except requests.Timeout:
        tally.add("schemathesis", "hang")
        return
    except requests.ConnectionError as exc:
        tally.add("schemathesis", "closed", repr(exc))
        return
    tally.add("schemathesis", str(response.status_code), response.text)


async def run_cases(cases: list[schemathesis.Case], attack: Attack, workers: int = 6) -> None:
    queue = list(cases)

    async def worker() -> None:
        while queue:
            case = queue.pop()
            choice = attack.rng.random()
            headers = {} if choice < 0.05 else attack.auth()
            await asyncio.to_thread(
                call_case, case, attack.url, headers, attack.deadline, attack.tally
            )

    await asyncio.gather(*(worker() for _ in range(workers)))


async def one_round(attack: Attack, cases: list[schemathesis.Case], batch_items: int) -> None:
    """The mix (a dozen at a time) beside the generated cases, then the flood (all at once)."""
    mix, flood = attack.round(batch_items)
    gate = asyncio.Semaphore(12)

    async def gated(send: Thunk) -> None:
        async with gate:
            await send()

    await asyncio.gather(*(gated(send) for send in mix), run_cases(cases, attack))
    await asyncio.gather(*(send() for send in flood))


async def bombard(
    attack: Attack, requests: int, batch_items: int, pid: int, report: Callable[[str], None]
) -> dict[str, float]:
    schema_url = f"{attack.url}/openapi.json"
    report("warm-up: one round of every kind and 100 generated cases")
    await one_round(attack, generated_cases(schema_url, 100), batch_items)
    warm_mb = resident_mb(pid)
    peak_mb = warm_mb
    report(f"after warm-up: {attack.tally.total} requests, resident {warm_mb:.0f} MB")
    hand_made = attack.tally.total - attack.tally.by_kind["schemathesis"].total()
    rounds = 0
    while attack.tally.total < requests:
        remaining = requests - attack.tally.total - hand_made
        cases = generated_cases(schema_url, min(1_000, max(100, remaining)))
        await one_round(attack, cases, batch_items)
        rounds += 1
        now_mb = resident_mb(pid)
        peak_mb = max(peak_mb, now_mb)
        report(f"round {rounds}: {attack.tally.total} requests, resident {now_mb:.0f} MB")
    return {"warm_mb": warm_mb, "peak_mb": peak_mb, "end_mb": resident_mb(pid), "rounds": rounds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--deadline", type=float, default=120.0, help="seconds before a hang")
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "hostile.json"
    )
    parser.add_argument("--batch-items", type=int, default=256, help="the accepted batch's size")
    args = parser.parse_args()
    started = time.perf_counter()
    home = Path(tempfile.mkdtemp(prefix="ucma-hostile-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("UCMA_")}
    tokens = [create_key(home, user, env) for user in ("alice", "bob")]
    port = free_port()
    log = (home / "serve.log").open("wb")
    server = subprocess.Popen(
        [*ucma_command(), "serve", "--home", str(home), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, server)
        start_mb = resident_mb(server.pid)
        tally = Tally()

        async def run() -> dict[str, float]:
            attack = Attack(url, tokens, tally, args.deadline)
            try:
                return await bombard(attack, args.requests, args.batch_items, server.pid, print)
            finally:
                await attack.client.aclose()

        memory = asyncio.run(run())
        alive = server.poll() is None
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    growth = memory["end_mb"] / memory["warm_mb"] - 1
    result = {
        "requests": tally.total,
        "server_errors": len(tally.server_errors),
        "hangs": tally.count("hang"),
        "connections_closed_without_answer": tally.count("closed"),
        "answered_503": tally.count("503"),
        "server_alive_at_end": alive,
        "resident_mb": {
            "after_start": round(start_mb, 1),
            "after_warm_up": round(memory["warm_mb"], 1),
            "peak_after_warm_up": round(memory["peak_mb"], 1),
            "end": round(memory["end_mb"], 1),
            "growth_after_warm_up": round(growth, 3),
        },
        "by_kind": {kind: dict(sorted(c.items())) for kind, c in sorted(tally.by_kind.items())},
        "server_error_samples": tally.server_errors[:10],
        "passed": {
            "no_server_errors": not tally.server_errors,
            "no_hangs": tally.count("hang") == 0,
            "memory_within_20_percent": abs(growth) <= MEMORY_GROWTH_LIMIT,
        },
        "settings": {
            "requests": args.requests,
            "deadline_s": args.deadline,
            "batch_items": args.batch_items,
        },
        "wall_s": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    shutil.rmtree(home, ignore_errors=True)
    print(json.dumps(result, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    if not all(result["passed"].values()):
        sys.exit(1)


def wait_for_health(url: str, server: subprocess.Popen[bytes], give_up: float = 120.0) -> None:
    stop = time.monotonic() + give_up
    while time.monotonic() < stop:
        if server.poll() is not None:
            sys.exit(f"ucma serve exited with status {server.returncode}")
        try:
            if httpx.get(f"{url}/v1/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    sys.exit("ucma serve did not answer /v1/health")


if __name__ == "__main__":
    main()
