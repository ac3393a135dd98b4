"""Start-up cost as a user meets it: process wall times, medians of several runs.

Each run starts a fresh process (and, for the service and MCP, a fresh data folder), so
nothing is warm but the operating system's file cache. Measured:

- ``import_ucma_s``: ``python -c "import ucma"`` (target under 0.3 s), and
  ``import_memory_s``: ``python -c "from ucma import Memory"`` (no target: what a library
  user pays before the first call);
- ``cli_help_s``: ``ucma --help`` (target under 0.5 s) and ``cli_version_s``: ``ucma --version``;
- ``serve_first_answer_s``: from starting ``ucma serve`` to its first 200 on ``/v1/health``
  (target under 3 s; polled every 10 ms);
- ``serve_first_observe_s``: the first ``POST /v1/observe`` sent the moment health answers,
  its own latency (target under 0.5 s; the worst case: it waits for whatever of the model's
  background loading is left), and ``serve_start_to_observed_s``: from start to its answer;
- ``serve_first_observe_after_2s_s``: the first observe of another fresh service, sent 2 s
  after health answered (what the background loading buys a client that is not instant);
- ``mcp_stdio_ready_s``: from starting ``ucma mcp`` to the answer of ``tools/list`` after
  the ``initialize`` handshake, over raw JSON-RPC on stdin/stdout (target under 2 s);
- ``cli_observe_s``: one ``ucma observe`` from start to exit (no target: a process that
  opens the database and loads the model once).

Usage: ``python bench/startup.py [--runs 5] [--out bench/results/startup.json]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

TARGETS = {
    "import_ucma_s": 0.3,
    "cli_help_s": 0.5,
    "serve_first_answer_s": 3.0,
    "serve_first_observe_s": 0.5,
    "mcp_stdio_ready_s": 2.0,
}
POLL_SECONDS = 0.01
GIVE_UP_SECONDS = 120.0


def ucma_command() -> list[str]:
    """The installed console script beside this interpreter (as a user runs it)."""
    script = Path(sys.executable).with_name("ucma")
    if script.is_file():
        return [str(script)]
    found = shutil.which("ucma")
    if found is None:
        sys.exit("the ucma console script is not installed: pip install -e '.[dev]'")
    return [found]


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UCMA_")}
    env["UCMA_HOME"] = str(home)
    return env


def timed_process(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - start


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def request(url: str, body: dict | None = None) -> int:
    data = None if body is None else json.dumps(body).encode()
    headers = {} if body is None else {"content-type": "application/json"}
    req = urllib.request.Request(url, data=data, headers=headers)
    with urllib.request.urlopen(req, timeout=GIVE_UP_SECONDS) as response:
        response.read()
        return int(response.status)


def serve_run(pause: float = 0.0) -> dict[str, float]:
    """Start ``ucma serve`` on a fresh home; time its first answer and its first observe,
    sent ``pause`` seconds after that answer."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="ucma-startup-") as home:
        start = time.perf_counter()
        server = subprocess.Popen(
            [*ucma_command(), "serve", "--port", str(port)],
            env=environment(Path(home)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while True:
                if server.poll() is not None:
                    raise RuntimeError(f"ucma serve exited with status {server.returncode}")
                try:
                    if request(f"{base}/v1/health") == 200:
                        break
                except (urllib.error.URLError, ConnectionError):
                    pass
                if time.perf_counter() - start > GIVE_UP_SECONDS:
                    raise RuntimeError("ucma serve did not answer")
                time.sleep(POLL_SECONDS)
            answered = time.perf_counter()
            if pause:
                time.sleep(pause)
            sent = time.perf_counter()
            request(
                f"{base}/v1/observe",
                {"user_id": "bench", "content": "Alice prefers dark mode in every editor."},
            )
            observed = time.perf_counter()
        finally:
            server.terminate()
            server.wait(timeout=30)
    if pause:
        return {f"serve_first_observe_after_{pause:g}s_s": observed - sent}
    return {
        "serve_first_answer_s": answered - start,
        "serve_first_observe_s": observed - answered,
        "serve_start_to_observed_s": observed - start,
    }


def mcp_run() -> dict[str, float]:
    """Start ``ucma mcp`` on stdio; time until ``tools/list`` answers after initialize."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench-startup", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with tempfile.TemporaryDirectory(prefix="ucma-startup-") as home:
        start = time.perf_counter()
        client = subprocess.Popen(
            [*ucma_command(), "mcp", "--user", "bench"],
            env=environment(Path(home)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert client.stdin is not None and client.stdout is not None
        try:
            client.stdin.write(json.dumps(messages[0]) + "\n")
            client.stdin.flush()
            _read_answer(client.stdout.readline, 1)
            for message in messages[1:]:
                client.stdin.write(json.dumps(message) + "\n")
            client.stdin.flush()
            tools = _read_answer(client.stdout.readline, 2)
            ready = time.perf_counter()
        finally:
            client.stdin.close()
            client.terminate()
            client.wait(timeout=30)
    if not tools.get("result", {}).get("tools"):
        raise RuntimeError(f"tools/list answered without tools: {tools}")
    return {"mcp_stdio_ready_s": ready - start}


def _read_answer(readline: Callable[[], str], request_id: int) -> dict:
    while True:
        line = readline()
        if not line:
            raise RuntimeError("ucma mcp closed stdout before answering")
        message = json.loads(line)
        if message.get("id") == request_id:
            return message


def median_of(runs: int, measure: Callable[[], dict[str, float]]) -> dict[str, dict]:
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        for name, value in measure().items():
            samples.setdefault(name, []).append(value)
    return {
        name: {
            "median": round(statistics.median(values), 3),
            "min": round(min(values), 3),
            "max": round(max(values), 3),
            "runs": len(values),
        }
        for name, values in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement (median)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    ucma = ucma_command()
    python = sys.executable
    measurements: dict[str, dict] = {}

    def once(name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        measurements.update(median_of(args.runs, lambda: {name: timed_process(argv, env)}))
        print(f"{name:32} {measurements[name]['median']:.3f} s", flush=True)

    once("import_ucma_s", [python, "-c", "import ucma"])
    once("import_memory_s", [python, "-c", "from ucma import Memory"])
    once("cli_help_s", [*ucma, "--help"])
    once("cli_version_s", [*ucma, "--version"])
    with tempfile.TemporaryDirectory(prefix="ucma-startup-") as home:
        observe = [*ucma, "observe", "Alice prefers dark mode in every editor.", "--user", "b"]
        once("cli_observe_s", observe, environment(Path(home)))
    for measure in (serve_run, lambda: serve_run(pause=2.0), mcp_run):
        found = median_of(args.runs, measure)
        measurements.update(found)
        for name, numbers in found.items():
            print(f"{name:32} {numbers['median']:.3f} s", flush=True)

    result = {
        "benchmark": "startup",
        "runs": args.runs,
        "machine": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "measurements": measurements,
        "targets_s": TARGETS,
        "met": {name: measurements[name]["median"] < limit for name, limit in TARGETS.items()},
    }
    print(json.dumps(result["met"], indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
