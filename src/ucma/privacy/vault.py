"""The vault's cipher and key: originals of tokenised values are encrypted at rest
with Fernet (AES-128-CBC with HMAC-SHA256, from the maintained ``cryptography``
package) under a key the operator controls.

Where the key comes from (``PrivacyConfig``): ``vault_key`` when given (the CLI and
the server fill it from ``UCMA_VAULT_KEY``); otherwise a key file, ``vault_key_file``
or ``<database>.vault-key`` beside the database, created on first use with
permissions 0600 (owner read/write only). Keep the key file out of backups of the
database, or the encryption protects nothing; lose it and the originals cannot be
revealed (docs/privacy.md). From the one key two more are derived with HMAC-SHA256: the index
key of tokens and blind indexes, and a fingerprint the store keeps so a wrong key is
refused instead of silently writing a second, unreadable vault.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import stat
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from ucma.errors import ConfigError, StorageError

__all__ = ["KEY_FILE_SUFFIX", "VaultCipher", "default_key_path", "load_or_create_key"]

logger = logging.getLogger(__name__)

KEY_FILE_SUFFIX = ".vault-key"


class VaultCipher:
    """Encrypts and decrypts vault entries; derives the index key and fingerprint."""

    def __init__(self, key: bytes) -> None:
        try:
            self._fernet = Fernet(key)
        except (ValueError, TypeError) as exc:
            raise ConfigError(
                "the vault key must be a Fernet key: 32 random bytes, urlsafe base64 "
                "(create one with `python -c 'from cryptography.fernet import Fernet; "
                "print(Fernet.generate_key().decode())'`)"
            ) from exc
        self.index_key = hmac.new(key, b"ucma vault index key", hashlib.sha256).digest()
        self.fingerprint = hmac.new(key, b"ucma vault fingerprint", hashlib.sha256).hexdigest()[:32]

    def encrypt(self, value: str) -> bytes:
        return self._fernet.encrypt(value.encode("utf-8"))

    def decrypt(self, blob: bytes) -> str:
        try:
            return self._fernet.decrypt(blob).decode("utf-8")
        except InvalidToken as exc:
            raise StorageError("a vault entry cannot be decrypted with this key") from exc


def default_key_path(database: Path) -> Path:
    return database.with_name(database.name + KEY_FILE_SUFFIX)


def load_or_create_key(path: Path, key: bytes | None = None) -> bytes:
    """The key in ``path``, or ``key`` (a new random key by default) written there with
    mode 0600.

    Created atomically (a private temporary file hard-linked into place), so two
    processes opening the same database at once agree on one key."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write((key or Fernet.generate_key()) + b"\n")
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
                logger.info("created the vault key file %s (mode 0600)", path)
        finally:
            temporary.unlink(missing_ok=True)
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        logger.warning("the vault key file %s is readable by others; chmod 600 it", path)
    return path.read_bytes().strip()
