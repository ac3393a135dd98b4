"""Claims on the database's leases while maintenance works (``LeaseStore``).

Several processes may open one database (``ucma serve`` processes and ``ucma worker``
processes on PostgreSQL, or on one SQLite file). Whatever consolidates a scope or
forwards the event log first claims that work's lease, so no two processes do it at
once:

- ``hold`` claims a lease for the length of a block. Without ``wait`` it gives up at
  once when another process holds it (a worker moves on to the next scope); with
  ``wait`` it polls until the holder releases it or its claim expires.
- While the block runs, a heartbeat renews the claim every third of
  ``lease_seconds``. A process that dies stops renewing, and another process takes
  the work over once the claim expires. A holder whose renewal fails (the claim was
  taken over after its event loop stalled past the expiry, or the database is
  unreachable) sets ``Claim.lost``; a sleep cycle then stops before its next phase.
- A holder that died on this machine (same host and process namespace, its process
  gone) is recognised from its owner name (``process_owner``) and its claim taken
  over at once instead of at its expiry.
- Leaving the block releases the claim; a block that ended without an exception
  records the work as finished then (``finished_before`` of a later claim compares
  with it).

A scope's lease is named after a digest of the scope (``scope_lease_name``), so the
lease table names no user.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import os
import re
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ucma.errors import UCMAError
from ucma.lifecycle.clock import Clock
from ucma.storage.base import Storage
from ucma.types import Scope

__all__ = [
    "SCOPE_LEASE_PREFIX",
    "Claim",
    "Leases",
    "owner_is_gone",
    "process_owner",
    "scope_lease_name",
]

logger = logging.getLogger(__name__)

SCOPE_LEASE_PREFIX = "consolidate:"
"""The name of every scope's consolidation lease starts with this."""

Runner = Callable[..., Awaitable[Any]]
_OWNER = re.compile(r"[^@]*@(?P<host>[^:/]*):(?P<namespace>[^:/]*):(?P<pid>\d+)/")


def scope_lease_name(scope: Scope) -> str:
    """The consolidation lease of ``scope``: the prefix and a digest of its ids."""
    digest = hashlib.sha256(f"{scope.user_id}\x1f{scope.agent_id}".encode()).hexdigest()
    return SCOPE_LEASE_PREFIX + digest[:32]


def _process_namespace() -> str:
    """This process's PID namespace (Linux), "" where there is none to read: two
    processes with one host name but different namespaces (containers) never
    judge each other's pids."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def process_owner(kind: str = "ucma") -> str:
    """A name for one holder of leases, unique across processes and machines, that
    says where it runs: ``<kind>@<host>:<pid namespace>:<pid>/<random>``."""
    where = f"{socket.gethostname()}:{_process_namespace()}:{os.getpid()}"
    return f"{kind}@{where}/{uuid.uuid4().hex[:8]}"


def owner_is_gone(owner: str) -> bool:
    """True only when ``owner`` (a ``process_owner`` name) ran on this host, in this
    process namespace, in a process that no longer exists. Any other owner, or a
    name of another form, may be alive: False."""
    match = _OWNER.match(owner)
    here = _process_namespace()
    if match is None or not here or match["host"] != socket.gethostname():
        return False
    pid = int(match["pid"])
    if match["namespace"] != here or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists (another user's process)
        return False
    return False


@dataclass(slots=True)
class Claim:
    """A lease held for the length of a ``Leases.hold`` block."""

    name: str
    owner: str
    lost: asyncio.Event = field(default_factory=asyncio.Event)


class Leases:
    """One holder's claims on a database's leases, through the engine's storage
    threads (``run``) and clock."""

    def __init__(
        self,
        *,
        storage: Storage,
        run: Runner,
        clock: Clock,
        owner: str,
        lease_seconds: float,
        poll_seconds: float = 0.25,
    ) -> None:
        self._storage = storage
        self._run = run
        self._clock = clock
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.poll_seconds = poll_seconds

    @contextlib.asynccontextmanager
    async def hold(
        self, name: str, *, wait: bool, finished_before: float = math.inf
    ) -> AsyncIterator[Claim | None]:
        """Claim ``name`` for the block: the ``Claim``, or None when another holder has
        it (without ``wait``) or finished it after ``finished_before``."""
        while not await self._claim(name, finished_before):
            if not wait:
                yield None
                return
            await asyncio.sleep(self.poll_seconds)
        claim = Claim(name, self.owner)
        heartbeat = asyncio.create_task(self._renew(claim), name=f"ucma-lease-{name}")
        finished = False
        try:
            yield claim
            finished = True
        finally:
            heartbeat.cancel()
            await asyncio.gather(heartbeat, return_exceptions=True)
            try:
                await self._run(
                    self._storage.leases.release,
                    name,
                    self.owner,
                    self._clock.now(),
                    finished=finished and not claim.lost.is_set(),
                )
            except UCMAError:
                # The claim then expires by itself; the work is done again next time.
                logger.exception("could not release lease %s", name)

    async def _claim(self, name: str, finished_before: float) -> bool:
        if await self._try(name, finished_before):
            return True
        # A holder on this machine whose process is gone will never release it.
        held = await self._run(self._storage.leases.list, name)
        dead = [lease.owner for lease in held if lease.name == name and lease.owner]
        if not dead or not owner_is_gone(dead[0]):
            return False
        logger.warning("lease %s: its holder %s is gone; taking its work over", name, dead[0])
        await self._run(
            self._storage.leases.release, name, dead[0], self._clock.now(), finished=False
        )
        return await self._try(name, finished_before)

    async def _try(self, name: str, finished_before: float) -> bool:
        taken: bool = await self._run(
            self._storage.leases.claim,
            name,
            self.owner,
            self._clock.now(),
            lease_seconds=self.lease_seconds,
            finished_before=finished_before,
        )
        return taken

    async def _renew(self, claim: Claim) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                kept = await self._run(
                    self._storage.leases.renew,
                    claim.name,
                    claim.owner,
                    self._clock.now(),
                    lease_seconds=self.lease_seconds,
                )
            except UCMAError:
                logger.exception("could not renew lease %s", claim.name)
                kept = False
            if not kept:
                logger.warning("lost lease %s: another process may take its work over", claim.name)
                claim.lost.set()
                return
