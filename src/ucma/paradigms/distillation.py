"""Distilling strategies and pitfalls from one trajectory (ReasoningBank, seed 000's
post-interaction learning), by rules: offline, deterministic, no I/O.

A trajectory is a task, the steps taken, whether it succeeded and, if not, why. From a
success the rules keep the strategy that worked: its steps, titled by them, described
by the task it solved. From a failure they keep a pitfall: the step that failed (the
one the failure reason names, else the last) to avoid under the same conditions, with
the reason as its failure mode. Both take the conditions that held as preconditions.

An LLM provider with ``distill_trajectory`` may do better (up to three items, its own
titles and guards); ``parse_distilled`` checks what it returns, so a malformed answer
is a ``ProviderError``, never half an item.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ucma.errors import ProviderError
from ucma.types import Condition, ProcedureStep, ProcedureType, RiskLevel

__all__ = ["MAX_ITEMS", "DistilledItem", "distill_by_rules", "parse_distilled"]

MAX_ITEMS = 3
"""At most this many items from one trajectory (ReasoningBank's bound)."""

_TITLE_CHARS = 160
AVOID = "avoid"
"""``ProcedureStep.action_type`` of a pitfall's step: the step not to take."""


@dataclass(frozen=True, slots=True)
class DistilledItem:
    """One strategy or pitfall, before it is stored or merged."""

    procedure_type: ProcedureType
    title: str
    description: str
    steps: tuple[ProcedureStep, ...]
    preconditions: tuple[Condition, ...] = ()
    failure_modes: tuple[str, ...] = ()
    risk_level: RiskLevel = RiskLevel.LOW

    @property
    def content(self) -> str:
        """The searchable text: title, then description."""
        return f"{self.title}. {self.description}"


def _shorten(text: str, limit: int = _TITLE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _failed_step(steps: Sequence[str], failure_reason: str) -> str:
    reason = failure_reason.lower()
    named = [s for s in steps if s.strip() and s.lower() in reason]
    return max(named, key=len) if named else steps[-1]


def distill_by_rules(
    task: str,
    steps: Sequence[str],
    success: bool,
    failure_reason: str | None,
    conditions: Sequence[Condition] = (),
) -> list[DistilledItem]:
    """The strategy of a success, or the pitfall of a failure (one item)."""
    if success:
        return [
            DistilledItem(
                ProcedureType.STRATEGY,
                title=_shorten(" then ".join(steps)),
                description=f"Worked for: {task}",
                steps=tuple(ProcedureStep(description=s) for s in steps),
                preconditions=tuple(conditions),
            )
        ]
    reason = failure_reason or "it failed"
    step = _failed_step(steps, reason)
    return [
        DistilledItem(
            ProcedureType.PITFALL,
            title=_shorten(f"Avoid {step}"),
            description=f"Failed for: {task}: {reason}",
            steps=(
                ProcedureStep(
                    description=step, action_type=AVOID, success_criteria=f"not: {reason}"
                ),
            ),
            preconditions=tuple(conditions),
            failure_modes=(reason,),
            risk_level=RiskLevel.HIGH,
        )
    ]


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ProviderError(f"distilled item: {what} must be a non-empty string")
    return value.strip()


def parse_distilled(
    data: Any, success: bool, conditions: Sequence[Condition] = ()
) -> list[DistilledItem]:
    """Check an LLM's items (a list of mappings with ``title``, ``description``,
    ``steps`` and optional ``failure_modes`` and ``risk_level``): strategies from a
    success, pitfalls from a failure, at most ``MAX_ITEMS``, at least one."""
    if not isinstance(data, list) or not data:
        raise ProviderError("distillation must return a non-empty list of items")
    kind = ProcedureType.STRATEGY if success else ProcedureType.PITFALL
    items: list[DistilledItem] = []
    for raw in data[:MAX_ITEMS]:
        if not isinstance(raw, dict):
            raise ProviderError("each distilled item must be an object")
        steps = raw.get("steps")
        if not isinstance(steps, list) or not steps:
            raise ProviderError("distilled item: steps must be a non-empty list of strings")
        modes = raw.get("failure_modes", [])
        if not isinstance(modes, list):
            raise ProviderError("distilled item: failure_modes must be a list of strings")
        try:
            risk = RiskLevel(raw.get("risk_level", "low" if success else "high"))
        except ValueError as exc:
            raise ProviderError(f"distilled item: {exc}") from exc
        items.append(
            DistilledItem(
                kind,
                title=_shorten(_text(raw.get("title"), "title")),
                description=_text(raw.get("description"), "description"),
                steps=tuple(
                    ProcedureStep(
                        description=_text(s, "each step"),
                        action_type="llm_reasoning" if success else "check",
                    )
                    for s in steps
                ),
                preconditions=tuple(conditions),
                failure_modes=tuple(_text(m, "each failure mode") for m in modes),
                risk_level=risk,
            )
        )
    return items
