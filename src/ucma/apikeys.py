"""API key tokens: how they are made, parsed and checked (pure functions, no I/O).

A token reads ``ucma_<key id>_<secret>``: the key id (12 hex digits) finds the stored
row, the secret (32 random bytes, URL-safe base64) is what makes it unguessable. Only
``sha256(token)`` is stored; a presented token is hashed and compared with the stored hash
in constant time (``hmac.compare_digest``), so neither a database leak nor response
timing gives a usable token away. A fast hash is enough for a 256-bit random secret:
slow password hashes exist for low-entropy passwords.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

__all__ = ["TOKEN_PREFIX", "hash_token", "new_key_id", "new_token", "parse_key_id", "token_matches"]

TOKEN_PREFIX = "ucma_"
_TOKEN = re.compile(r"ucma_([0-9a-f]{12})_[A-Za-z0-9_-]{43}")


def new_key_id() -> str:
    return secrets.token_hex(6)


def new_token(key_id: str) -> str:
    """A fresh token for ``key_id``: shown once, never stored."""
    return f"{TOKEN_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def parse_key_id(token: str) -> str | None:
    """The key id inside a well-formed token; None for anything else."""
    match = _TOKEN.fullmatch(token)
    return match.group(1) if match else None


def token_matches(token: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_token(token).encode("ascii"), stored_hash.encode("ascii"))
