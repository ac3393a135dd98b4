"""Sources of truth read from a configuration file, for the service.

``ucma serve --sources sources.toml`` (or ``$UCMA_SOURCES``) attaches the databases
that answer for some facts, so a service user gets the memory-versus-database
conflicts a Python caller gets from ``add_source_of_truth``. The file is TOML:

.. code-block:: toml

    [[source]]
    name = "sales_db"
    url = "sqlite:///shop.db"            # relative to this file; sqlite://// + absolute path
    subject_pattern = "sales_order_(?P<id>so_\\d+)"    # optional: the whole subject as :id
    [source.queries]                     # predicate -> query whose first column is the value
    status = "SELECT status FROM sales_orders WHERE id = :id"

URLs follow the SQLAlchemy convention (three slashes and a relative path, four and
an absolute one). Each lookup opens the database read-only. Only SQLite is
supported here: a server database needs its driver, which this package does not
ship. Every mistake is a ``ConfigError`` naming the file and the entry.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from ucma.conflicts.sources import SQLSourceOfTruth
from ucma.errors import ConfigError, ValidationError

__all__ = ["load_sources"]

_SQLITE = "sqlite:///"


def load_sources(path: str | Path) -> list[SQLSourceOfTruth]:
    """The sources of truth the TOML file at ``path`` describes (module docstring)."""
    file = Path(path).expanduser()
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the sources file {file}: {exc.strerror}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"the sources file {file} is not valid TOML: {exc}") from exc
    entries = data.get("source")
    if not isinstance(entries, list) or not entries or set(data) != {"source"}:
        raise ConfigError(f"{file}: expected one or more [[source]] tables and nothing else")
    sources = [_source(file, index, entry) for index, entry in enumerate(entries, start=1)]
    names = [s.name for s in sources]
    if len(set(names)) != len(names):
        raise ConfigError(f"{file}: two sources share a name ({sorted(names)})")
    return sources


def _source(file: Path, index: int, entry: Any) -> SQLSourceOfTruth:
    where = f"{file}, source {index}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected a table")
    unknown = set(entry) - {"name", "url", "subject_pattern", "queries"}
    if unknown:
        raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")
    name, url, queries = entry.get("name"), entry.get("url"), entry.get("queries")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: 'name' must be a non-empty string")
    if not isinstance(url, str) or not url.startswith(_SQLITE):
        raise ConfigError(
            f"{where} ({name}): 'url' must be a sqlite:/// URL (the only database this "
            f"package can open), got {url!r}"
        )
    database = Path(url[len(_SQLITE) :])
    if not database.is_absolute():
        database = file.parent / database
    if not database.is_file():
        raise ConfigError(f"{where} ({name}): no database file at {database}")
    if not isinstance(queries, dict) or not all(isinstance(q, str) for q in queries.values()):
        raise ConfigError(f"{where} ({name}): [source.queries] must map predicates to SQL")
    pattern = entry.get("subject_pattern", r"(?P<id>.+)")
    if not isinstance(pattern, str):
        raise ConfigError(f"{where} ({name}): 'subject_pattern' must be a string")
    try:
        return SQLSourceOfTruth.sqlite(database, queries, subject_pattern=pattern, name=name)
    except ValidationError as exc:
        raise ConfigError(f"{where} ({name}): {exc}") from exc
