"""Storage backends behind the ABCs in ``ucma.storage.base``, opened by location.

``open_storage(target, dimension=..., ann=..., cached_scopes=...)`` opens the store a
file path or database URL names (``ucma.storage.location``): a plain path or
``sqlite:///<path>`` is the embedded SQLite backend (``ucma.storage.sqlite``), the
zero-configuration default; ``postgresql://...`` (or ``postgres://``) is
``ucma.storage.postgres``. The engine calls only this, so it names no backend.

Adding a backend: a package ``ucma.storage.<name>``, one entry in
``ucma.storage.location.BACKENDS`` per URL scheme it answers, and a module-level hook
in the package's ``__init__``::

    def open_storage(
        location: StorageLocation,  # .scheme, .url (the URL as given), .path (None)
        *,
        dimension: int,             # the embedder's dimension; refuse a store made for another
        ann: AnnSettings,           # when a scope's dense search turns approximate
        cached_scopes: int,         # how many scopes' search caches stay loaded
    ) -> Storage: ...

It returns an open ``Storage`` (schema created or migrated) whose ``concurrency`` says
how many calls the engine may run on it at once (``Storage.concurrency``: SQLite 1, a
pool of N connections N). Its errors are the UCMA error tree (``ConfigError`` for a bad
URL, ``StorageError`` for the database). The package is imported only when a store of
its scheme is opened, so its driver may be an optional extra: a missing driver becomes
a ``ConfigError`` naming it.
``ucma.storage.index`` holds the backend-neutral search caches a backend may reuse.
"""

from ucma.storage.location import (
    BACKENDS,
    StorageLocation,
    StorageOpener,
    open_storage,
    parse_location,
    storage_concurrency,
)

__all__ = [
    "BACKENDS",
    "StorageLocation",
    "StorageOpener",
    "open_storage",
    "parse_location",
    "storage_concurrency",
]
