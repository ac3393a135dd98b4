"""Parsing where a store lives (``ucma.storage.location``): paths, SQLite URLs, server URLs
and the refusals, all without opening anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from ucma.errors import ConfigError
from ucma.storage import BACKENDS, StorageLocation, parse_location


@pytest.mark.parametrize(
    ("target", "path"),
    [
        ("ucma.db", Path("ucma.db")),
        ("/var/lib/ucma/ucma.db", Path("/var/lib/ucma/ucma.db")),
        (Path("data/ucma.db"), Path("data/ucma.db")),
        (":memory:", Path(":memory:")),
        ("sqlite:///relative/ucma.db", Path("relative/ucma.db")),
        ("sqlite:////absolute/ucma.db", Path("/absolute/ucma.db")),
        ("SQLite:///Mixed.db", Path("Mixed.db")),
        ("SQLITE:////Upper/Case.db", Path("/Upper/Case.db")),
        ("sqlite:///with%20space.db", Path("with space.db")),
        ("sqlite:///:memory:", Path(":memory:")),
    ],
)
def test_a_path_or_sqlite_url_is_a_sqlite_file(target: str | Path, path: Path) -> None:
    location = parse_location(target)
    assert location.scheme == "sqlite"
    assert location.path == path


def test_a_plain_path_is_kept_as_given() -> None:
    assert parse_location("data/ucma.db") == StorageLocation(
        "sqlite", "data/ucma.db", Path("data/ucma.db")
    )


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "PostgreSQL"])
def test_a_server_url_has_no_local_file(scheme: str) -> None:
    location = parse_location(f"{scheme}://ucma@127.0.0.1:5432/memories")
    assert location == StorageLocation(
        scheme.lower(), f"{scheme.lower()}://ucma@127.0.0.1:5432/memories", None
    )
    assert BACKENDS[location.scheme] == "ucma.storage.postgres"


def test_a_password_never_shows() -> None:
    location = parse_location("postgresql://ucma:s3cret@db.internal:5432/memories?sslmode=require")
    assert "s3cret" not in str(location)
    assert str(location) == "postgresql://ucma:***@db.internal:5432/memories?sslmode=require"
    assert location.url.count("s3cret") == 1
    assert str(parse_location("postgresql://ucma@db/memories")) == "postgresql://ucma@db/memories"
    assert str(parse_location("/tmp/ucma:x@y.db")) == "/tmp/ucma:x@y.db"


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("mysql://root@localhost/ucma", "unknown database URL scheme 'mysql'"),
        ("file:///tmp/ucma.db", "unknown database URL scheme 'file'"),
        ("sqlite://", "names no file"),
        ("sqlite:///", "names no file"),
        ("sqlite://host/ucma.db", "not a host"),
        ("sqlite://me:pw@host/ucma.db", r"not a host \('host'\)"),
        ("sqlite:///ucma.db?mode=ro", "no query"),
        ("", "empty"),
        ("   ", "empty"),
    ],
)
def test_a_bad_location_is_a_config_error(target: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        parse_location(target)


def test_a_location_is_a_string_or_path() -> None:
    with pytest.raises(ConfigError, match="file path or URL"):
        parse_location(42)  # type: ignore[arg-type]
