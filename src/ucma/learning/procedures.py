"""Procedure executions and the status they earn (seed 001 chapter 14).

Every recorded execution, whether through ``record_procedure_outcome`` or as
part of a decision's outcome (``ucma.learning.decisions``), goes through
``record_execution``: the running success rate is updated, the outcome is
logged (``procedure.outcome_recorded``), and the status is re-judged by
``evidence_status`` under ``ProcedureConfig``. A status change is an event
(``procedure.status_changed``) and a lifecycle history entry
(``status_changed``), both with the evidence that caused it. Runs on the
storage thread inside the caller's transaction.
"""

from __future__ import annotations

from dataclasses import replace

from ucma.config import ProcedureConfig
from ucma.events.log import EventType, record
from ucma.storage.base import Storage
from ucma.types import (
    HistoryEntry,
    Procedure,
    ProcedureStatus,
    ProcedureType,
    RiskLevel,
    Scope,
)

__all__ = ["evidence_status", "log_status_change", "record_execution", "risk_for"]

_RISK_ORDER = [RiskLevel.LOW, RiskLevel.MEDIUM, RiskLevel.HIGH]


def risk_for(procedure: Procedure, failure_modes: list[str]) -> RiskLevel:
    """A pitfall keeps its level; a strategy or workflow is at least medium risk with
    one or two known failure modes and high with three or more."""
    if procedure.procedure_type is ProcedureType.PITFALL:
        return procedure.risk_level
    count = len(failure_modes)
    floor = RiskLevel.LOW if count == 0 else RiskLevel.MEDIUM if count < 3 else RiskLevel.HIGH
    return max(procedure.risk_level, floor, key=_RISK_ORDER.index)


def evidence_status(procedure: Procedure, config: ProcedureConfig) -> ProcedureStatus:
    """The status ``procedure``'s statistics support; its current one until
    ``min_executions`` runs, and between the two thresholds (hysteresis)."""
    if procedure.execution_count < config.min_executions:
        return procedure.status
    if procedure.success_rate >= config.activate_success_rate:
        return ProcedureStatus.ACTIVE
    if procedure.success_rate < config.deprecate_success_rate:
        return ProcedureStatus.DEPRECATED
    return procedure.status


def record_execution(
    storage: Storage,
    scope: Scope,
    procedure: Procedure,
    success: bool,
    now: float,
    config: ProcedureConfig,
    *,
    trace_id: str | None = None,
    failure_reason: str | None = None,
) -> Procedure:
    """Fold one execution into ``procedure``, store it with its events, return it.

    A failure's reason not seen before becomes one more failure mode, and raises the
    risk level of a strategy or workflow by ``risk_for``."""
    updated = procedure.with_outcome(success, now)
    new_mode = (
        not success and failure_reason is not None and failure_reason not in procedure.failure_modes
    )
    if new_mode:
        assert failure_reason is not None
        modes = [*procedure.failure_modes, failure_reason]
        updated = replace(updated, failure_modes=modes, risk_level=risk_for(updated, modes))
    status = evidence_status(updated, config)
    changed = status != updated.status
    if changed:
        updated = replace(updated, status=status)
    storage.procedures.update(updated)
    outcome = {
        "memory_id": updated.id,
        "success": success,
        "success_rate": updated.success_rate,
        "execution_count": updated.execution_count,
        "success_count": updated.success_count,
    }
    if new_mode:
        outcome["failure_modes"] = list(updated.failure_modes)
    if trace_id is not None:
        outcome["trace_id"] = trace_id
    record(storage, scope, EventType.PROCEDURE_OUTCOME, outcome, now)
    if changed:
        log_status_change(
            storage,
            scope,
            updated,
            procedure.status,
            now,
            {
                "success_rate": round(updated.success_rate, 4),
                "execution_count": updated.execution_count,
                "reason": _reason(status, updated, config),
            },
        )
    return updated


def log_status_change(
    storage: Storage,
    scope: Scope,
    procedure: Procedure,
    before: ProcedureStatus,
    now: float,
    evidence: dict[str, object],
) -> None:
    """Log that ``procedure`` (already stored with its new status) moved from
    ``before``: a ``procedure.status_changed`` event and a ``status_changed`` history
    entry, both with the evidence."""
    details = {"from": before.value, "to": procedure.status.value, **evidence}
    record(
        storage,
        scope,
        EventType.PROCEDURE_STATUS_CHANGED,
        {"memory_id": procedure.id, **details},
        now,
    )
    storage.lifecycle.add_history(
        scope, [HistoryEntry(procedure.id, "status_changed", now, details)]
    )


def _reason(status: ProcedureStatus, procedure: Procedure, config: ProcedureConfig) -> str:
    rate = f"success rate {procedure.success_rate:.2f} over {procedure.execution_count} runs"
    if status is ProcedureStatus.ACTIVE:
        return f"{rate} is at least {config.activate_success_rate:g}"
    return f"{rate} is below {config.deprecate_success_rate:g}"
