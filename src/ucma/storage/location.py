"""Where a store lives, and opening it: a plain file path or a database URL.

``parse_location`` reads what a caller names (``Memory(...)``, ``ucma --database``,
``UCMA_DATABASE``) once: a plain path is a SQLite file (the zero-configuration
default), ``sqlite:///relative/file.db`` and ``sqlite:////absolute/file.db`` name one
as a URL (SQLAlchemy's spelling, as in ``ucma.conflicts.source_file``: the path is what
follows the third slash), and ``postgresql://`` (or ``postgres://``) URLs name a
PostgreSQL database. The scheme is matched, and handed on, in lower case. ``open_storage``
imports the scheme's backend package only then (``BACKENDS``), so no backend is loaded,
and none is named by the engine, before a store of its kind is opened.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit, urlunsplit

from ucma.errors import ConfigError
from ucma.lru import SCOPES_IN_MEMORY
from ucma.storage.base import DEFAULT_ANN, AnnSettings, Storage

__all__ = [
    "BACKENDS",
    "StorageLocation",
    "StorageOpener",
    "open_storage",
    "parse_location",
    "storage_concurrency",
]

BACKENDS: dict[str, str] = {
    "sqlite": "ucma.storage.sqlite",
    "postgresql": "ucma.storage.postgres",
    "postgres": "ucma.storage.postgres",
}
"""URL scheme -> the package that opens stores of that scheme (its ``open_storage``)."""

_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
_SCHEMES = "a file path, sqlite:///<path> or postgresql://<user>@<host>/<database>"


@dataclass(frozen=True, slots=True)
class StorageLocation:
    """One store's address. ``url`` is what the backend's driver is given (a plain
    path stays the path it was); ``path`` is the local file of a file-backed store,
    None for a database server."""

    scheme: str
    url: str
    path: Path | None

    def __str__(self) -> str:
        """The address as shown in logs and output: a URL's password replaced by ***."""
        if self.path is not None and self.url == os.fspath(self.path):
            return self.url
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        host = parts.netloc.rpartition("@")[2]
        user = f"{parts.username}:***@" if parts.username else ":***@"
        return urlunsplit(parts._replace(netloc=user + host))


class StorageOpener(Protocol):
    """The hook each backend package defines as a module-level ``open_storage``."""

    def __call__(
        self,
        location: StorageLocation,
        *,
        dimension: int,
        ann: AnnSettings,
        cached_scopes: int,
    ) -> Storage: ...


def parse_location(target: str | os.PathLike[str]) -> StorageLocation:
    """The location ``target`` names; ``ConfigError`` for an unknown URL scheme, a
    SQLite URL without a file, or an empty name. Nothing is opened or created."""
    if isinstance(target, os.PathLike):
        return _file(os.fspath(target))
    if not isinstance(target, str):
        raise ConfigError(f"a database is a file path or URL string, got {type(target).__name__}")
    if not target.strip():
        raise ConfigError(f"the database name is empty; use {_SCHEMES}")
    match = _URL.match(target)
    if match is None:
        return _file(target)
    scheme = match.group(1).lower()
    if scheme not in BACKENDS:
        raise ConfigError(f"unknown database URL scheme {scheme!r}; use {_SCHEMES}")
    url = scheme + target[len(scheme) :]  # the scheme in lower case, as drivers expect it
    if scheme == "sqlite":
        return _sqlite_url(url)
    return StorageLocation(scheme, url, None)


def _file(path: str) -> StorageLocation:
    return StorageLocation("sqlite", path, Path(path))


def _sqlite_url(url: str) -> StorageLocation:
    parts = urlsplit(url)
    if parts.netloc:
        raise ConfigError(
            f"a SQLite URL names a file, not a host ({parts.hostname!r}): use "
            "sqlite:///relative/file.db or sqlite:////absolute/file.db"
        )
    if parts.query or parts.fragment:
        raise ConfigError("a SQLite URL takes no query or fragment; name the file only")
    path = unquote(parts.path[1:])
    if not path:
        raise ConfigError(
            f"{url!r} names no file: use sqlite:///relative/file.db or sqlite:////absolute/file.db"
        )
    return StorageLocation("sqlite", url, Path(path))


def open_storage(
    target: StorageLocation | str | os.PathLike[str],
    *,
    dimension: int,
    ann: AnnSettings = DEFAULT_ANN,
    cached_scopes: int = SCOPES_IN_MEMORY,
) -> Storage:
    """Open (creating or migrating as needed) the store at ``target`` through its
    scheme's backend. ``ConfigError`` when the backend is not part of this
    installation or its driver is missing; the backend's own errors otherwise."""
    location = target if isinstance(target, StorageLocation) else parse_location(target)
    opener = _opener(location.scheme)
    storage = opener(location, dimension=dimension, ann=ann, cached_scopes=cached_scopes)
    try:
        storage_concurrency(storage)
    except ConfigError:
        storage.close()
        raise
    return storage


def storage_concurrency(storage: Storage) -> int:
    """How many calls the engine may run on ``storage`` at once (``Storage.concurrency``);
    ``ConfigError`` unless a positive integer."""
    threads = storage.concurrency
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ConfigError(
            f"{type(storage).__name__}.concurrency must be a positive integer, got {threads!r}"
        )
    return threads


def _opener(scheme: str) -> StorageOpener:
    package = BACKENDS[scheme]
    try:
        module = importlib.import_module(package)
    except ModuleNotFoundError as exc:
        if exc.name is not None and package.startswith(exc.name):
            raise ConfigError(
                f"the {scheme} backend ({package}) is not part of this installation"
            ) from exc
        raise ConfigError(
            f"the {scheme} backend needs the {exc.name} package, which is not installed; "
            "install UCMA with that backend's extra"
        ) from exc
    opener = getattr(module, "open_storage", None)
    if not callable(opener):
        raise ConfigError(f"{package} defines no open_storage(location, ...) to open stores")
    found: StorageOpener = opener
    return found
