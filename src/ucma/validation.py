"""Input checks run before anything is written.

Each function returns the cleaned value or raises ``ValidationError`` (or
``ScopeError``) with a message that says what to fix. The engine calls them
for every argument that comes from a caller, so a bad call writes nothing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ucma.config import LimitsConfig
from ucma.errors import InputLimitError, ScopeError, ValidationError
from ucma.types import Scope

__all__ = [
    "check_content",
    "check_fraction",
    "check_id",
    "check_json_depth",
    "check_limit",
    "check_metadata",
    "check_offset",
    "check_query",
    "check_scope",
    "check_strings",
    "check_timestamp",
    "json_depth",
]

_MAX_ID_CHARS = 256


def _check_text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a string, got {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(f"{name} is not valid UTF-8 text (position {exc.start})") from exc
    return value


def check_content(value: object, limits: LimitsConfig, name: str = "content") -> str:
    """Non-empty text within ``limits.max_content_chars``, without NUL characters."""
    text = _check_text(value, name)
    if not text.strip():
        raise ValidationError(f"{name} must not be empty")
    if len(text) > limits.max_content_chars:
        raise ValidationError(
            f"{name} has {len(text)} characters; the limit is {limits.max_content_chars}"
        )
    if "\x00" in text:
        raise ValidationError(f"{name} must not contain NUL characters")
    return text


def check_query(value: object, limits: LimitsConfig) -> str:
    """Query text within ``limits.max_query_chars``; NUL characters become spaces.

    Any other character is allowed: queries are tokenised, never parsed.
    """
    text = _check_text(value, "query")
    if len(text) > limits.max_query_chars:
        raise ValidationError(
            f"query has {len(text)} characters; the limit is {limits.max_query_chars}"
        )
    return text.replace("\x00", " ")


def check_scope(user_id: object, agent_id: object) -> Scope:
    """A scope with a non-empty ``user_id``; ``agent_id`` defaults to "default"."""
    if user_id is None:
        raise ScopeError(
            "no scope: pass user_id=... to the call, or open the memory with a default user_id"
        )
    if agent_id is None:
        agent_id = "default"
    for name, value in (("user_id", user_id), ("agent_id", agent_id)):
        if not isinstance(value, str) or not value.strip():
            raise ScopeError(f"{name} must be a non-empty string, got {value!r}")
        if len(value) > _MAX_ID_CHARS or "\x00" in value:
            raise ScopeError(f"{name} must be at most {_MAX_ID_CHARS} characters without NUL")
        _check_text(value, name)
    return Scope(user_id, agent_id)  # type: ignore[arg-type]


def check_id(value: object, name: str = "memory_id") -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_ID_CHARS:
        raise ValidationError(f"{name} must be a non-empty string of at most {_MAX_ID_CHARS} chars")
    return _check_text(value, name)


def check_timestamp(value: object, name: str = "timestamp") -> float:
    """Epoch seconds as a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(
            f"{name} must be epoch seconds (a number), got {type(value).__name__}"
        )
    if not math.isfinite(value):
        raise ValidationError(f"{name} must be finite")
    return float(value)


def check_fraction(value: object, name: str) -> float:
    """A number in [0, 1]."""
    number = check_timestamp(value, name)
    if not 0.0 <= number <= 1.0:
        raise ValidationError(f"{name} must be between 0 and 1, got {number}")
    return number


def check_limit(value: object, maximum: int, name: str = "limit") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{name} must be an integer")
    if not 1 <= value <= maximum:
        raise ValidationError(f"{name} must be between 1 and {maximum}, got {value}")
    return value


MAX_STORE_OFFSET = 2**62
"""The deepest offset into a store's records (a SQLite integer, with room for the page)."""


def check_offset(value: object, name: str = "offset") -> int:
    """A page's offset: an integer from 0 to ``MAX_STORE_OFFSET``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_STORE_OFFSET:
        raise ValidationError(f"{name} must be an integer from 0 to {MAX_STORE_OFFSET}")
    return value


def check_strings(values: Iterable[object] | None, name: str, *, max_items: int = 100) -> list[str]:
    """A list of non-empty strings (tags, participants, ids)."""
    if values is None:
        return []
    if isinstance(values, str | bytes):
        raise ValidationError(f"{name} must be a list of strings, not a single string")
    items = list(values)
    if len(items) > max_items:
        raise ValidationError(f"{name} has {len(items)} items; the limit is {max_items}")
    out = []
    for item in items:
        text = _check_text(item, name)
        if not text.strip() or len(text) > _MAX_ID_CHARS or "\x00" in text:
            raise ValidationError(
                f"{name} items must be non-empty strings of at most {_MAX_ID_CHARS} characters"
            )
        out.append(text)
    return out


def check_metadata(value: object, limits: LimitsConfig) -> dict[str, Any]:
    """A JSON-serialisable mapping with string keys, within ``max_metadata_bytes``."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"metadata must be a mapping, got {type(value).__name__}")
    try:
        encoded = json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"metadata must be JSON-serialisable: {exc}") from exc
    try:
        size = len(encoded.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise ValidationError("metadata contains invalid UTF-8 text") from exc
    if size > limits.max_metadata_bytes:
        raise ValidationError(
            f"metadata is {size} bytes as JSON; the limit is {limits.max_metadata_bytes}"
        )
    # Room for the record and the export line around it (LineReader checks those).
    check_json_depth(encoded, limits.max_json_depth - 8, "metadata")
    result: dict[str, Any] = json.loads(encoded)
    return result


# A JSON string, escapes included (possessive: linear, no backtracking).
_JSON_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_BRACKET_STEP = np.zeros(256, dtype=np.int8)
_BRACKET_STEP[[ord("["), ord("{")]] = 1
_BRACKET_STEP[[ord("]"), ord("}")]] = -1


def json_depth(text: str) -> int:
    """How deep the arrays and objects of JSON ``text`` nest (0 for a scalar), computed
    without parsing: brackets outside strings, counted in one vectorised pass.

    Cheap on any input (linear, no recursion), so it can guard ``json.loads``, which
    raises RecursionError about a thousand levels down. For text that is not valid
    JSON the answer is an upper bound of sorts, never a crash.
    """
    if "[" not in text and "{" not in text:
        return 0
    skeleton = _JSON_STRING.sub("", text) if '"' in text else text
    steps = _BRACKET_STEP[np.frombuffer(skeleton.encode("utf-8", "surrogatepass"), np.uint8)]
    return int(np.cumsum(steps, dtype=np.int64).max(initial=0))


def check_json_depth(text: str, limit: int, what: str = "JSON") -> None:
    """InputLimitError when ``text`` nests deeper than ``limit`` (see ``json_depth``)."""
    if text.count("[") + text.count("{") <= limit:  # cannot nest deeper: C-speed counts
        return
    depth = json_depth(text)
    if depth > limit:
        raise InputLimitError(
            f"{what} nests {depth} levels deep; the limit is {limit}", "max_json_depth"
        )
