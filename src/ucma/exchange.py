"""Export and import of one scope as JSON Lines.

Format (one JSON object a line, UTF-8)::

    {"type": "header", "format": "ucma-jsonl", "version": 1, "model": ..., "dimension": ...}
    {"type": "memory", "record": {...record_to_dict...}, "vector": "<base64 float32>"}
    {"type": "edge", "source_id": ..., "target_id": ..., "edge_type": ..., "weight": ...}
    {"type": "retention", "memory_id": ..., "stability": ..., "last_reviewed": ...}

Archived memories are exported too. Vectors travel with their records so an
import needs no embedding when the model matches; otherwise the engine
re-embeds. Import keeps ids, skips records that already exist (so an
interrupted import can simply be run again) and writes in chunks of one
transaction each. These functions run on the storage thread.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ucma.config import LimitsConfig
from ucma.errors import ValidationError
from ucma.serialization import (
    edge_from_dict,
    edge_to_dict,
    record_from_dict,
    record_to_dict,
    retention_from_dict,
    retention_to_dict,
)
from ucma.storage.base import Storage
from ucma.types import (
    Episode,
    Fact,
    GraphEdge,
    Learning,
    MemoryRecord,
    Procedure,
    RetentionInfo,
    Scope,
)

__all__ = ["ParsedExport", "export_scope", "import_scope", "read_export"]

FORMAT = "ucma-jsonl"
VERSION = 1
_PAGE = 1000
_CHUNK = 500


def _encode_vector(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _decode_vector(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4").astype(np.float32)


def _records(storage: Storage, scope: Scope) -> Iterator[MemoryRecord]:
    offset = 0
    while True:
        page = storage.memories.list(scope, limit=_PAGE, offset=offset, include_archived=True)
        yield from page
        if len(page) < _PAGE:
            return
        offset += _PAGE


def export_scope(storage: Storage, scope: Scope, path: Path, model: str) -> int:
    """Write the scope to ``path`` (atomically, via a temporary file beside it);
    returns the number of memories exported."""
    dimension = None
    tmp = path.with_name(path.name + ".partial")
    try:
        out = tmp.open("w", encoding="utf-8")
    except OSError as exc:
        raise ValidationError(f"cannot write {path}: {exc.strerror}") from exc
    with out:
        records = list(_records(storage, scope))
        ids = [r.id for r in records]
        vectors: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), _PAGE):
            vectors.update(storage.memories.vectors(scope, ids[start : start + _PAGE]))
        if vectors:
            dimension = int(next(iter(vectors.values())).shape[0])
        header = {
            "type": "header",
            "format": FORMAT,
            "version": VERSION,
            "model": model,
            "dimension": dimension,
            "user_id": scope.user_id,
            "agent_id": scope.agent_id,
        }
        out.write(json.dumps(header) + "\n")
        for record in records:
            line: dict[str, Any] = {"type": "memory", "record": record_to_dict(record)}
            if record.id in vectors:
                line["vector"] = _encode_vector(vectors[record.id])
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
        for edge in storage.graph.all_edges(scope):
            out.write(json.dumps({"type": "edge", **edge_to_dict(edge)}) + "\n")
        states: dict[str, RetentionInfo] = {}
        for start in range(0, len(ids), _PAGE):
            states.update(storage.retention.get_many(scope, ids[start : start + _PAGE]))
        for state in states.values():
            out.write(json.dumps({"type": "retention", **retention_to_dict(state)}) + "\n")
    tmp.replace(path)
    return len(records)


@dataclass
class ParsedExport:
    """A validated export file, ready to be written into a scope."""

    model: str | None
    dimension: int | None
    records: list[MemoryRecord] = field(default_factory=list)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    edges: list[GraphEdge] = field(default_factory=list)
    retention: list[RetentionInfo] = field(default_factory=list)

    def records_needing_vectors(self, model: str, dimension: int) -> list[MemoryRecord]:
        """Records whose vector is missing or from another model or width."""
        if self.model != model:
            return list(self.records)
        return [
            r
            for r in self.records
            if r.id not in self.vectors or self.vectors[r.id].shape != (dimension,)
        ]

    def set_vectors(self, records: Sequence[MemoryRecord], vectors: np.ndarray) -> None:
        for record, vector in zip(records, vectors, strict=True):
            self.vectors[record.id] = vector


def read_export(path: Path, limits: LimitsConfig) -> ParsedExport:
    """Parse and validate an export; ValidationError names the bad line."""
    try:
        handle = path.open("r", encoding="utf-8", errors="strict")
    except OSError as exc:
        raise ValidationError(f"cannot read {path}: {exc.strerror}") from exc
    parsed: ParsedExport | None = None
    with handle:
        number = 0
        try:
            for number, raw in enumerate(handle, start=1):  # noqa: B007 - used in errors
                if not raw.strip():
                    continue
                try:
                    line = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise ValidationError(f"{path}:{number}: invalid JSON ({exc.msg})") from exc
                if not isinstance(line, dict):
                    raise ValidationError(f"{path}:{number}: each line must be a JSON object")
                parsed = _take(parsed, line, f"{path}:{number}", limits)
        except UnicodeDecodeError as exc:
            raise ValidationError(f"{path}: invalid UTF-8 after line {number}") from exc
    if parsed is None:
        raise ValidationError(f"{path}: empty file, expected a {FORMAT} header")
    return parsed


def _take(
    parsed: ParsedExport | None, line: dict[str, Any], where: str, limits: LimitsConfig
) -> ParsedExport:
    kind = line.pop("type", None)
    if parsed is None:
        if kind != "header" or line.get("format") != FORMAT:
            raise ValidationError(f"{where}: not a {FORMAT} file (first line must be its header)")
        if line.get("version") != VERSION:
            raise ValidationError(f"{where}: unsupported version {line.get('version')!r}")
        return ParsedExport(model=line.get("model"), dimension=line.get("dimension"))
    if kind == "memory":
        data = line.get("record")
        if not isinstance(data, dict):
            raise ValidationError(f"{where}: memory line without a record object")
        record = record_from_dict(data)
        if (
            not isinstance(record.content, str)
            or not record.content.strip()
            or (len(record.content) > limits.max_content_chars)
        ):
            raise ValidationError(f"{where}: record content is empty or too long")
        parsed.records.append(record)
        if "vector" in line:
            try:
                parsed.vectors[record.id] = _decode_vector(line["vector"])
            except (ValueError, TypeError) as exc:
                raise ValidationError(f"{where}: invalid vector encoding") from exc
    elif kind == "edge":
        parsed.edges.append(edge_from_dict(line))
    elif kind == "retention":
        parsed.retention.append(retention_from_dict(line))
    else:
        raise ValidationError(f"{where}: unknown line type {kind!r}")
    return parsed


def import_scope(storage: Storage, scope: Scope, parsed: ParsedExport) -> int:
    """Write parsed records into ``scope``; returns how many were new."""
    written = 0
    records = [replace(r, user_id=scope.user_id, agent_id=scope.agent_id) for r in parsed.records]
    for start in range(0, len(records), _CHUNK):
        chunk = records[start : start + _CHUNK]
        present = storage.memories.get_many(scope, [r.id for r in chunk])
        new = [r for r in chunk if r.id not in present]
        if not new:
            continue
        with storage.transaction():
            episodes = [r for r in new if isinstance(r, Episode)]
            if episodes:
                storage.episodes.add(episodes, np.stack([parsed.vectors[e.id] for e in episodes]))
            for record in new:
                vector = parsed.vectors[record.id]
                if isinstance(record, Fact):
                    storage.facts.add(record, vector)
                elif isinstance(record, Procedure):
                    storage.procedures.add(record, vector)
                elif isinstance(record, Learning):
                    storage.learnings.add(record, vector)
            ids = {r.id for r in new}
            storage.retention.put_many(scope, [s for s in parsed.retention if s.memory_id in ids])
        written += len(new)
    with storage.transaction():
        storage.graph.add_edges(scope, parsed.edges)
        archived = [r for r in records if r.archived_at is not None]
        for record in archived:
            storage.memories.set_archived(scope, [record.id], record.archived_at)
    return written
