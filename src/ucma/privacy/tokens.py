"""Reversible tokens for personal data: ``[email_3f2a9c1b]``.

A token names its kind and a keyed hash of the normalised value, so the same value
in the same scope always gets the same token (retrieval works on tokens: a query
naming the original is tokenised the same way), different scopes get unrelated
tokens, and nothing about the value can be read from the token without the vault
key. Pure functions; the keyed hash is HMAC-SHA256 with the vault's index key.
"""

from __future__ import annotations

import hashlib
import hmac
import re

from ucma.privacy.kinds import PII_KINDS, ContentKind
from ucma.types import Scope

__all__ = ["TOKEN_HEX", "TOKEN_LENGTHS", "TOKEN_PATTERN", "blind_index", "normalise", "token_text"]

TOKEN_HEX = 8
"""Hex digits of the hash a token shows; a collision within one scope and kind takes
more (``token_text(..., length=12)``), the vault keeps tokens unique."""
TOKEN_LENGTHS = (8, 12, 16, 24, 32, 64)
"""The lengths a token's hash is shown at, shortest first (64: the whole digest)."""

TOKEN_PATTERN = re.compile(
    r"\[(?P<kind>" + "|".join(sorted(k.value for k in PII_KINDS)) + r")_(?P<hash>[0-9a-f]{8,64})\]"
)


def normalise(kind: ContentKind, value: str) -> str:
    """The form two spellings of one value share: emails and IBANs without case or
    spaces, numbers as their digits (an international prefix ``00`` read as ``+``),
    addresses with case and runs of spaces folded."""
    text = value.strip()
    if kind in (ContentKind.EMAIL, ContentKind.IP):
        return text.lower()
    if kind in (ContentKind.IBAN, ContentKind.NINO):
        return re.sub(r"\s", "", text).upper()
    if kind is ContentKind.PHONE:
        digits = re.sub(r"\D", "", text)
        if text.startswith("00"):
            digits = digits[2:]
        return ("+" if text.startswith(("+", "00")) else "") + digits
    if kind in (ContentKind.CARD, ContentKind.SSN):
        return re.sub(r"\D", "", text)
    return re.sub(r"[\s,]+", " ", text).lower()


def blind_index(key: bytes, scope: Scope, kind: ContentKind, value: str) -> str:
    """The keyed hash (hex) of a value in a scope: the vault looks tokens up by it,
    and a token shows its first ``TOKEN_HEX`` digits."""
    message = "\x00".join((scope.user_id, scope.agent_id, kind.value, normalise(kind, value)))
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).hexdigest()


def token_text(kind: ContentKind, digest: str, length: int = TOKEN_HEX) -> str:
    return f"[{kind.value}_{digest[:length]}]"
