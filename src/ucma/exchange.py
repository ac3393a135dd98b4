"""Export and import of one scope as JSON Lines, streamed a chunk at a time.

Format (one JSON object a line, UTF-8)::

    {"type": "header", "format": "ucma-jsonl", "version": 1, "model": ..., "dimension": ...}
    {"type": "vault", ...}                      (only with a transfer key, ``ucma.exchange_vault``)
    {"type": "memory", "record": {...record_to_dict...}, "vector": "<base64 float32>"}
    {"type": "retention", "memory_id": ..., "stability": ..., "last_reviewed": ...}
    {"type": "edge", "source_id": ..., "target_id": ..., "edge_type": ..., "weight": ...}
    {"type": "history" | "decision" | "conflict" | "review_flag" | "supersession" |
     "pagerank", ...}                           (``ucma.exchange_records``)

The exporter writes each memory's retention and history lines right after it, then the
edges, then the decisions, conflicts, review flags, supersessions and graph importance, so
neither side ever holds a whole scope in memory: export reads the store a page at a time,
import cuts the input into chunks of ``CHUNK`` memories. The reader accepts the lines in
any order after the header and the vault lines (older files put every retention line at
the end). Memories are written in the order the store received them and imported in file
order, so the keyword context of an episode (its session's preceding episode when it was
stored, ``ucma.storage.index.search_context``) is the same in both stores when episodes
share a timestamp; an import writes each chunk's episodes as one batch, so a session told
out of time order (an older turn stored after a newer one) is read in time order there.
Vault lines, the originals of the scope's tokens sealed with a transfer key,
are written only when the caller asks for them (``ucma.exchange_vault``).

Archived memories are exported too. Vectors travel with their records so an import needs
no embedding when the model matches; otherwise the engine re-embeds.

Ids (``ScopeIds``, ``ucma.memory_ids``): import keeps the ids the caller's scope owns (its
sealed ids and its facts' deterministic ids, so a scope's export imported into the same
scope of another database comes back with the same ids) and gives every other record an
id derived from the scope and the original, the same on every run. References (edges,
retention, a fact's sources and replacement, a lesson's evidence) follow their records.
The outcome depends on the file and the caller's scope only: an import never reads,
refuses or takes an id of another scope, so it cannot tell whether another tenant holds
one. Records already in the scope are skipped, so an interrupted import is resumed by
running it again; each chunk is written in one transaction. Functions taking a
``Storage`` run on the storage thread.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from cryptography.fernet import Fernet

from ucma.config import LimitsConfig
from ucma.errors import InputLimitError, ValidationError
from ucma.events.log import EventType, StrategyState
from ucma.events.log import record as log_event
from ucma.exchange_records import RECORD_TYPES, ScopeRecords, export_history, export_records
from ucma.exchange_vault import VaultValue, read_vault_line
from ucma.memory_ids import foreign_id
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
    ProcedureType,
    RetentionInfo,
    Scope,
    fact_id_for,
)
from ucma.validation import check_json_depth

__all__ = [
    "CHUNK",
    "ExportPage",
    "ImportChunk",
    "LineReader",
    "ScopeIds",
    "export_edges",
    "export_header",
    "export_page",
    "export_scope",
    "iter_lines",
    "new_ids",
    "write_chunk",
    "write_edges",
]

FORMAT = "ucma-jsonl"
VERSION = 1
#: Memories per export page and per import chunk (one transaction each).
CHUNK = 500


def _encode_vector(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _decode_vector(text: object) -> np.ndarray:
    if not isinstance(text, str):
        raise TypeError("a vector is a base64 string")
    return np.frombuffer(base64.b64decode(text, validate=True), dtype="<f4").astype(np.float32)


# ------------------------------------------------------------------------------- export


def export_header(scope: Scope, model: str, dimension: int) -> str:
    header = {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "model": model,
        "dimension": dimension,
        "user_id": scope.user_id,
        "agent_id": scope.agent_id,
    }
    return json.dumps(header) + "\n"


@dataclass(frozen=True, slots=True)
class ExportPage:
    """Memory and retention lines of one page of records; ``count`` records in it."""

    lines: list[str]
    count: int


def export_page(storage: Storage, scope: Scope, offset: int, size: int = CHUNK) -> ExportPage:
    """Lines for the records ``[offset, offset + size)`` of the scope (archived included),
    in the order the store received them, which an import then repeats."""
    with storage.transaction():  # one consistent view of the records and their vectors
        records = storage.memories.list(
            scope, limit=size, offset=offset, include_archived=True, in_insertion_order=True
        )
        ids = [r.id for r in records]
        vectors = storage.memories.vectors(scope, ids)
        states = storage.retention.get_many(scope, ids)
        history = {}
        for line in export_history(storage, scope, ids):
            history.setdefault(json.loads(line)["memory_id"], []).append(line)
    lines = []
    for record in records:
        line: dict[str, Any] = {"type": "memory", "record": record_to_dict(record)}
        if record.id in vectors:
            line["vector"] = _encode_vector(vectors[record.id])
        lines.append(json.dumps(line, ensure_ascii=False) + "\n")
        if record.id in states:
            lines.append(json.dumps({"type": "retention", **retention_to_dict(states[record.id])}))
            lines[-1] += "\n"
        lines.extend(history.get(record.id, ()))
    return ExportPage(lines, len(records))


def export_edges(storage: Storage, scope: Scope) -> list[str]:
    """The edge lines, then the lines of the records beside memories (decisions,
    conflicts, review flags, supersessions, graph importance)."""
    edges = [
        json.dumps({"type": "edge", **edge_to_dict(e)}) + "\n"
        for e in storage.graph.all_edges(scope)
    ]
    return edges + export_records(storage, scope)


def export_scope(
    storage: Storage,
    scope: Scope,
    path: Path,
    model: str,
    dimension: int,
    vault: Sequence[dict[str, Any]] = (),
) -> int:
    """Write the scope to ``path`` (atomically, via a temporary file beside it), the
    ``vault`` lines (``ucma.exchange_vault.export_vault``) right after the header;
    returns the number of memories exported."""
    tmp = path.with_name(path.name + ".partial")
    try:
        out = tmp.open("w", encoding="utf-8")
    except OSError as exc:
        raise ValidationError(f"cannot write {path}: {exc.strerror}") from exc
    total = 0
    with out:
        out.write(export_header(scope, model, dimension))
        out.writelines(json.dumps(line) + "\n" for line in vault)
        while True:
            page = export_page(storage, scope, total)
            out.writelines(page.lines)
            total += page.count
            if page.count < CHUNK:
                break
        out.writelines(export_edges(storage, scope))
    tmp.replace(path)
    return total


# ------------------------------------------------------------------------------- import


@dataclass
class ImportChunk:
    """Validated lines ready to be written: up to ``CHUNK`` memories, plus what hangs off them."""

    records: list[MemoryRecord] = field(default_factory=list)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    retention: dict[str, RetentionInfo] = field(default_factory=dict)
    edges: list[GraphEdge] = field(default_factory=list)

    def needing_vectors(
        self, records: Sequence[MemoryRecord], same_model: bool, dimension: int
    ) -> list[MemoryRecord]:
        """Of ``records``, those whose vector is missing or from another model or width."""
        if not same_model:
            return list(records)
        return [
            r
            for r in records
            if r.id not in self.vectors or self.vectors[r.id].shape != (dimension,)
        ]


class LineReader:
    """Parses an export line by line and hands out a chunk every ``CHUNK`` memories.

    Vault lines (``ucma.exchange_vault``) come right after the header and are opened
    with ``transfer``, the export's transfer key; they collect in ``vault``.

    ``feed`` returns a full chunk when one is ready (cut just before the memory line that
    would overflow it, so a memory's retention line lands in its chunk); ``finish``
    returns the rest and every edge. ValidationError names the bad line.

    Work per line is bounded before parsing (``LimitsConfig``): a line's length, the
    nesting of its JSON (checked without recursion, ``ucma.validation.json_depth``), the
    number of lines and of blank lines; beyond one, InputLimitError names the limit.
    """

    def __init__(
        self,
        limits: LimitsConfig,
        *,
        source: str = "input",
        chunk: int = CHUNK,
        transfer: Fernet | None = None,
    ) -> None:
        self.limits = limits
        self.transfer = transfer
        self.vault: list[VaultValue] = []
        self._vault_tokens: set[str] = set()
        self._body = False  # a line other than the header and vault lines was read
        self.source = source
        self.chunk_size = chunk
        self.model: str | None = None
        self.dimension: int | None = None
        self.number = 0
        self.blank = 0
        self._header = False
        self._current = ImportChunk()
        self._edges: list[GraphEdge] = []
        self.records = ScopeRecords()

    def feed(self, raw: str | bytes) -> ImportChunk | None:
        limits = self.limits
        self.number += 1
        where = f"{self.source}:{self.number}"
        if self.number > limits.max_import_lines:
            raise InputLimitError(
                f"{where}: more than {limits.max_import_lines} lines; split the export",
                "max_import_lines",
            )
        size = len(raw) - (raw[-1:] in ("\n", b"\n"))  # a str's characters: <= its bytes
        if size > limits.max_import_line_bytes:
            raise InputLimitError(
                f"{where}: a line is longer than {limits.max_import_line_bytes} bytes",
                "max_import_line_bytes",
            )
        if isinstance(raw, bytes):
            try:
                raw = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValidationError(f"{where}: invalid UTF-8") from exc
        if not raw.strip():
            self.blank += 1
            if self.blank > limits.max_blank_lines:
                raise InputLimitError(
                    f"{where}: more than {limits.max_blank_lines} blank lines; an export has none",
                    "max_blank_lines",
                )
            return None
        check_json_depth(raw, limits.max_json_depth, f"{where}: the line")
        try:
            line = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValidationError(f"{where}: invalid JSON ({exc.msg})") from exc
        if not isinstance(line, dict):
            raise ValidationError(f"{where}: each line must be a JSON object")
        kind = line.pop("type", None)
        if not self._header:
            self._read_header(kind, line, where)
            return None
        ready = None
        self._body = self._body or kind != "vault"
        if kind == "memory":
            if len(self._current.records) >= self.chunk_size:
                ready, self._current = self._current, ImportChunk()
            self._read_memory(line, where)
        elif kind == "edge":
            self._edges.append(_checked(edge_from_dict, line, where, "edge"))
        elif kind == "retention":
            state = _checked(retention_from_dict, line, where, "retention")
            self._current.retention[state.memory_id] = state
        elif kind == "vault":
            if self._body:
                raise ValidationError(f"{where}: vault lines come right after the header")
            value = _checked(
                lambda data: read_vault_line(data, self.transfer), line, where, "vault"
            )
            if value.token in self._vault_tokens:
                raise ValidationError(f"{where}: a vault line repeats the token {value.token}")
            self._vault_tokens.add(value.token)
            self.vault.append(value)
            return None
        elif kind in RECORD_TYPES:
            _checked(lambda data: self.records.read(str(kind), data), line, where, str(kind))
        else:
            raise ValidationError(f"{where}: unknown line type {kind!r}")
        return ready

    def finish(self) -> ImportChunk:
        if not self._header:
            raise ValidationError(f"{self.source}: empty input, expected a {FORMAT} header")
        last, self._current = self._current, ImportChunk()
        last.edges, self._edges = self._edges, []
        return last

    def _read_header(self, kind: object, line: dict[str, Any], where: str) -> None:
        if kind != "header" or line.get("format") != FORMAT:
            raise ValidationError(f"{where}: not a {FORMAT} file (first line must be its header)")
        if line.get("version") != VERSION:
            raise ValidationError(f"{where}: unsupported version {line.get('version')!r}")
        model, dimension = line.get("model"), line.get("dimension")
        self.model = model if isinstance(model, str) else None
        self.dimension = dimension if isinstance(dimension, int) else None
        self._header = True

    def _read_memory(self, line: dict[str, Any], where: str) -> None:
        data = line.get("record")
        if not isinstance(data, dict):
            raise ValidationError(f"{where}: memory line without a record object")
        try:
            record = record_from_dict(data)
        except ValidationError as exc:
            raise ValidationError(f"{where}: {exc}") from exc
        content = record.content
        if not isinstance(content, str) or not content.strip():
            raise ValidationError(f"{where}: record content is empty")
        if len(content) > self.limits.max_content_chars:
            raise ValidationError(
                f"{where}: record content has {len(content)} characters; "
                f"the limit is {self.limits.max_content_chars}"
            )
        if not isinstance(record.id, str) or not record.id.strip() or len(record.id) > 256:
            raise ValidationError(f"{where}: record id must be a non-empty string")
        self._current.records.append(record)
        if "vector" in line:
            try:
                self._current.vectors[record.id] = _decode_vector(line["vector"])
            except (ValueError, TypeError) as exc:
                raise ValidationError(f"{where}: invalid vector encoding") from exc


def _checked(build: Any, line: dict[str, Any], where: str, what: str) -> Any:
    try:
        return build(line)
    except ValidationError as exc:
        raise ValidationError(f"{where}: {exc}") from exc
    except (TypeError, ValueError, KeyError) as exc:
        raise ValidationError(f"{where}: invalid {what} line: {exc!r}") from exc


_KIND_PREFIX: dict[type[MemoryRecord], str] = {
    Episode: "ep",
    Fact: "fact",
    Procedure: "proc",
    Learning: "lrn",
}
# A fact's deterministic id (``fact_id_for``): a reference to one is kept as it is, since
# only the record (with its triple) can tell whose it is. A reference that names another
# scope's fact then names nothing: every read is scoped.
_FACT_ID = re.compile(r"fact_[0-9a-f]{32}")


class ScopeIds:
    """The ids one import's records and references get in the caller's scope.

    A record keeps its id when the scope owns it (``ucma.memory_ids.owned_by``, or a
    fact whose id is ``fact_id_for`` of its triple in this scope); any other gets
    ``foreign_id``. A reference maps as its record did; only records whose id is not the
    one a bare reference would get are remembered, so the map stays small.
    """

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self._renamed: dict[str, str] = {}

    def reference(self, memory_id: str) -> str:
        found = self._renamed.get(memory_id)
        if found is not None:
            return found
        if _FACT_ID.fullmatch(memory_id):
            return memory_id
        return foreign_id(memory_id, self.scope)

    def record(self, record: MemoryRecord) -> MemoryRecord:
        """``record`` moved into the scope, under its id there, references mapped."""
        scope = self.scope
        if isinstance(record, Fact) and record.id == fact_id_for(
            scope, record.subject, record.predicate, record.object
        ):
            new_id = record.id
        else:
            new_id = foreign_id(record.id, scope, _KIND_PREFIX[type(record)])
        if new_id != self.reference(record.id):
            self._renamed[record.id] = new_id
        changes: dict[str, Any] = {"id": new_id, "user_id": scope.user_id}
        changes["agent_id"] = scope.agent_id
        if isinstance(record, Fact):
            changes["source_episode_ids"] = [self.reference(i) for i in record.source_episode_ids]
            if record.superseded_by is not None:
                changes["superseded_by"] = self.reference(record.superseded_by)
        elif isinstance(record, Learning):
            changes["evidence"] = [self.reference(i) for i in record.evidence]
        return replace(record, **changes)

    def chunk(self, chunk: ImportChunk) -> ImportChunk:
        """The chunk's records, vectors and retention states under their ids in the scope
        (its edges are mapped with ``edge`` once every record has been read)."""
        records = [self.record(r) for r in chunk.records]
        vectors = {
            new.id: chunk.vectors[old.id]
            for old, new in zip(chunk.records, records, strict=True)
            if old.id in chunk.vectors
        }
        retention = {
            self.reference(memory_id): replace(state, memory_id=self.reference(memory_id))
            for memory_id, state in chunk.retention.items()
        }
        return ImportChunk(records, vectors, retention)

    def edge(self, edge: GraphEdge) -> GraphEdge:
        return replace(
            edge, source_id=self.reference(edge.source_id), target_id=self.reference(edge.target_id)
        )


def new_ids(storage: Storage, scope: Scope, chunk: ImportChunk) -> list[MemoryRecord]:
    """The chunk's records (already under their ids in ``scope``, ``ScopeIds.chunk``)
    that the scope does not hold yet. Only the caller's scope is read."""
    present = storage.memories.get_many(scope, [r.id for r in chunk.records])
    return [r for r in chunk.records if r.id not in present]


def write_chunk(
    storage: Storage,
    scope: Scope,
    records: Sequence[MemoryRecord],
    vectors: dict[str, np.ndarray],
    retention: Sequence[RetentionInfo],
) -> int:
    """Write new records (with vectors) and retention states in one transaction.

    ``retention`` may name records written by earlier chunks of the same import (older
    files put retention lines last); the caller passes only states of records it wrote.
    """
    with storage.transaction():
        episodes = [r for r in records if isinstance(r, Episode)]
        if episodes:
            storage.episodes.add(episodes, np.stack([vectors[e.id] for e in episodes]))
        for record in records:
            if isinstance(record, Fact):
                storage.facts.add(record, vectors[record.id])
            elif isinstance(record, Procedure):
                storage.procedures.add(record, vectors[record.id])
                if record.procedure_type is not ProcedureType.WORKFLOW:
                    _log_imported_strategy(storage, scope, record)
            elif isinstance(record, Learning):
                storage.learnings.add(record, vectors[record.id])
        if retention:
            storage.retention.put_many(scope, list(retention))
        for record in records:
            if record.archived_at is not None:
                storage.memories.set_archived(scope, [record.id], record.archived_at)
    return len(records)


def _log_imported_strategy(storage: Storage, scope: Scope, procedure: Procedure) -> None:
    """A learned strategy or pitfall arrives whole: its ``strategy.learned`` event
    carries its state, so replaying the log rebuilds it (``replay_strategies``)."""
    state = StrategyState.of(procedure)
    log_event(
        storage,
        scope,
        EventType.STRATEGY_LEARNED,
        {
            "memory_id": procedure.id,
            "procedure_type": procedure.procedure_type.value,
            "domain": procedure.domain,
            "imported": True,
            **asdict(state),
        },
        procedure.updated_at or procedure.created_at,
    )


def write_edges(storage: Storage, scope: Scope, edges: Sequence[GraphEdge]) -> int:
    """Upsert edges whose two ends are in the scope, a chunk per transaction."""
    written = 0
    for start in range(0, len(edges), CHUNK * 10):
        with storage.transaction():
            written += storage.graph.add_edges(scope, edges[start : start + CHUNK * 10])
    return written


def iter_lines(path: Path, max_line_bytes: int) -> Iterator[bytes]:
    """The lines of a file, as bytes (decoded by ``LineReader``, which names bad lines).

    A line is read at most ``max_line_bytes + 2`` bytes at a time, so an overlong one is
    handed on (and refused by ``LineReader``) without being read whole.
    """
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise ValidationError(f"cannot read {path}: {exc.strerror}") from exc
    with handle:
        while line := handle.readline(max_line_bytes + 2):
            yield line
