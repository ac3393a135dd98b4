"""Records to and from JSON-ready dicts (API responses, export and import).

``record_to_dict`` adds ``"kind"`` so ``record_from_dict`` can rebuild the
right class; enums become their string values and back. Unknown keys or a
missing required field raise ``ValidationError`` rather than a TypeError.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ucma.errors import ValidationError
from ucma.types import (
    Episode,
    Fact,
    FactStatus,
    GraphEdge,
    Hit,
    Learning,
    LearningType,
    MemoryKind,
    MemoryRecord,
    Procedure,
    ProcedureStatus,
    ProcedureStep,
    Provenance,
    RetentionInfo,
    Tier,
)

__all__ = [
    "edge_from_dict",
    "edge_to_dict",
    "hit_to_dict",
    "record_from_dict",
    "record_to_dict",
    "retention_from_dict",
    "retention_to_dict",
]

_CLASSES: dict[MemoryKind, type[MemoryRecord]] = {
    MemoryKind.EPISODIC: Episode,
    MemoryKind.SEMANTIC: Fact,
    MemoryKind.PROCEDURAL: Procedure,
    MemoryKind.LEARNING: Learning,
}
_ENUM_FIELDS = {
    "provenance": Provenance,
    "tier": Tier,
    "learning_type": LearningType,
}
# ``status`` means a different thing per kind.
_STATUS_ENUM: dict[type[MemoryRecord], type[ProcedureStatus] | type[FactStatus]] = {
    Procedure: ProcedureStatus,
    Fact: FactStatus,
}


def record_to_dict(record: MemoryRecord) -> dict[str, Any]:
    """A JSON-ready dict of every field, plus ``kind`` and ``effective_salience``."""
    data = dataclasses.asdict(record)
    for name, value in data.items():
        if isinstance(value, ProcedureStatus | FactStatus | Provenance | Tier | LearningType):
            data[name] = value.value
    data["kind"] = record.kind.value
    data["effective_salience"] = record.effective_salience
    return data


def record_from_dict(data: dict[str, Any]) -> MemoryRecord:
    """Rebuild a record from ``record_to_dict`` output."""
    fields = dict(data)
    try:
        kind = MemoryKind(fields.pop("kind"))
    except (KeyError, ValueError) as exc:
        raise ValidationError(f"record has no valid kind: {data.get('kind')!r}") from exc
    fields.pop("effective_salience", None)
    cls = _CLASSES[kind]
    try:
        enums: dict[str, Any] = dict(_ENUM_FIELDS)
        if cls in _STATUS_ENUM:
            enums["status"] = _STATUS_ENUM[cls]
        for name, enum in enums.items():
            if name in fields and fields[name] is not None:
                fields[name] = enum(fields[name])
        if cls is Procedure and "steps" in fields:
            fields["steps"] = [ProcedureStep(**step) for step in fields["steps"]]
        return cls(**fields)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"invalid {kind.value} record: {exc}") from exc


def hit_to_dict(hit: Hit) -> dict[str, Any]:
    return {
        "id": hit.id,
        "kind": hit.kind.value,
        "content": hit.content,
        "score": hit.score,
        "relevance": hit.relevance,
        "source": hit.source,
        "graph_distance": hit.graph_distance,
        "channels": dict(hit.channels),
        "needs_review": hit.needs_review,
        "memory": record_to_dict(hit.memory),
    }


def edge_to_dict(edge: GraphEdge) -> dict[str, Any]:
    return dataclasses.asdict(edge)


def edge_from_dict(data: dict[str, Any]) -> GraphEdge:
    try:
        return GraphEdge(**data)
    except TypeError as exc:
        raise ValidationError(f"invalid edge: {exc}") from exc


def retention_to_dict(state: RetentionInfo) -> dict[str, Any]:
    return dataclasses.asdict(state)


def retention_from_dict(data: dict[str, Any]) -> RetentionInfo:
    try:
        return RetentionInfo(**data)
    except TypeError as exc:
        raise ValidationError(f"invalid retention state: {exc}") from exc
