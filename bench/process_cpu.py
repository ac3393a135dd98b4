"""CPU seconds of processes on this machine, read from ``/proc``, for the benchmarks
that count what a server costs beside its latency (bench/service_load.py, bench/scale.py):
a process's own, with the children it reaped, and a local PostgreSQL server's whole
(its postmaster and every backend it started)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["database_cpu_seconds", "postmaster_pid", "process_cpu_seconds"]

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int, *, children: bool = False) -> float:
    """utime + stime of a process from ``/proc`` (0 when it is gone), with ``children``
    also those of its children it reaped (cutime + cstime)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICKS


def postmaster_pid(admin: str) -> int | None:
    """The pid of the PostgreSQL server the URL names, from its data directory's
    ``postmaster.pid``; None when that file is not readable here (another machine)."""
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        row = conn.execute("SHOW data_directory").fetchone()
    try:
        first = (Path(str(row[0])) / "postmaster.pid").read_text().split("\n", 1)[0]
    except (OSError, TypeError):
        return None
    return int(first) if first.strip().isdigit() else None


def database_cpu_seconds(postmaster: int | None) -> float | None:
    """The database server's CPU seconds so far: its postmaster's own and reaped
    children's, and its live children's. None without a local PostgreSQL."""
    if postmaster is None:
        return None
    total = process_cpu_seconds(postmaster, children=True)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == postmaster:
                total += process_cpu_seconds(int(entry.name))
    return total
