"""The clock the engine reads for every notion of "now".

``AsyncMemory(clock=...)`` takes a ``Clock`` object or any zero-argument
callable returning epoch seconds. The default is ``SystemClock`` (wall time).
``SimulatedClock`` lets tests and benchmarks run months of memory life in
seconds: decay, TTLs, the gardener's schedule and archive retention all follow
it, because nothing in the engine calls ``time.time()`` directly.

A clock is itself callable (``clock()`` is ``clock.now()``), so components that
take a plain callable (the sensory buffer, working memory) accept it as is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from ucma.errors import ValidationError

__all__ = ["Clock", "FunctionClock", "SimulatedClock", "SystemClock", "as_clock"]

_DAY = 86_400.0


@runtime_checkable
class Clock(Protocol):
    """Anything that tells the time in epoch seconds (UTC)."""

    def now(self) -> float: ...

    def __call__(self) -> float: ...


class SystemClock:
    """Wall-clock time (``time.time``)."""

    def now(self) -> float:
        return time.time()

    def __call__(self) -> float:
        return time.time()

    def __repr__(self) -> str:
        return "SystemClock()"


class FunctionClock:
    """Adapts a zero-argument callable returning epoch seconds."""

    def __init__(self, function: Callable[[], float]) -> None:
        self._function = function

    def now(self) -> float:
        return float(self._function())

    def __call__(self) -> float:
        return self.now()

    def __repr__(self) -> str:
        return f"FunctionClock({self._function!r})"


class SimulatedClock:
    """A clock that moves only when told to; thread-safe.

    ``advance(days=1.5)`` or ``advance(seconds=60)`` moves it forward; time
    never goes backwards (``set`` to an earlier time raises).
    """

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = _finite(start, "start")
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def __call__(self) -> float:
        return self.now()

    def advance(self, *, seconds: float = 0.0, hours: float = 0.0, days: float = 0.0) -> float:
        """Move forward by the sum of the arguments (each >= 0); returns the new time."""
        step = _finite(seconds, "seconds") + _finite(hours, "hours") * 3600.0
        step += _finite(days, "days") * _DAY
        if step < 0:
            raise ValidationError("a simulated clock only moves forward")
        with self._lock:
            self._now += step
            return self._now

    def set(self, timestamp: float) -> None:
        """Jump to ``timestamp`` (not earlier than the current time)."""
        value = _finite(timestamp, "timestamp")
        with self._lock:
            if value < self._now:
                raise ValidationError("a simulated clock only moves forward")
            self._now = value

    def __repr__(self) -> str:
        return f"SimulatedClock({self.now()!r})"


def _finite(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise ValidationError(f"{name} must be a number, got {value!r}")
    if value in (float("inf"), float("-inf")):
        raise ValidationError(f"{name} must be finite")
    return float(value)


def as_clock(value: Clock | Callable[[], float] | None) -> Clock:
    """The ``Clock`` for ``value``: itself, a wrapped callable, or the system clock."""
    if value is None:
        return SystemClock()
    if isinstance(value, SystemClock | SimulatedClock | FunctionClock):
        return value
    if hasattr(value, "now") and callable(value.now):
        return value
    if callable(value):
        return FunctionClock(value)
    raise ValidationError(f"clock must be a Clock or a callable, got {type(value).__name__}")
