"""The self-model's maths (seed 000's predictive paradigm), pure: no I/O.

- ``with_attempt``: one recorded attempt of a capability folded into its competence:
  attempts and successes, the success probability predicted before it (its bin of
  predicted probability, the Brier sum), a failure reason as a failure mode, and the
  outcome kept as evidence (the latest ``evidence_kept``).
- ``estimate``: the accuracy of a capability as a Beta(1, 1) posterior with its
  credible interval (``ucma.paradigms.posterior``): 0.5 and [0.025, 0.975] with no
  attempt, the observed rate and a narrow interval after many.
- ``calibration_error``: seed 000 asks that competence be calibrated from outcomes,
  predicted success against actual; this is the expected calibration error over the
  bins of predicted probability, sum over bins of (share of predictions) x |mean
  prediction - success rate|.
- ``is_weak``: a weak domain is a capability whose estimated accuracy is below
  ``PredictiveConfig.weak_below`` after at least ``weak_min_samples`` attempts.
- ``measured``: what a competence's counts say: the accuracy estimate, the actual rate,
  the mean prediction, the calibration error, the Brier score, weak or not.
- ``mode_applies``: a failure mode applies to a task when more than half of its
  content words (stemmed) are in the task's text: "recursive queries" applies to
  "a recursive SQL query", not to "an SQL query".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import snowballstemmer

from ucma.config import PredictiveConfig
from ucma.paradigms.posterior import Estimate, beta_estimate
from ucma.paradigms.predictive_records import Competence, CompetenceEvidence, FailureMode
from ucma.retrieval.terms import keyword_terms

__all__ = [
    "calibration_error",
    "content_stems",
    "estimate",
    "Measured",
    "is_weak",
    "measured",
    "mode_applies",
    "with_attempt",
    "with_failure_mode",
]


def _bin(predicted: float, count: int) -> int:
    return min(int(predicted * count), count - 1)


def with_failure_mode(competence: Competence, mode: str, now: float) -> tuple[Competence, bool]:
    """The competence with ``mode`` seen once more; True when it is a new mode
    (compared case- and space-insensitively)."""
    wanted = " ".join(mode.casefold().split())
    modes = list(competence.failure_modes)
    for i, known in enumerate(modes):
        if " ".join(known.mode.casefold().split()) == wanted:
            modes[i] = dataclasses.replace(known, count=known.count + 1, last_seen=now)
            return dataclasses.replace(competence, failure_modes=modes, updated_at=now), False
    modes.append(FailureMode(mode, 1, now, now))
    return dataclasses.replace(competence, failure_modes=modes, updated_at=now), True


def with_attempt(
    competence: Competence,
    success: bool,
    predicted: float | None,
    source: str,
    reason: str | None,
    now: float,
    config: PredictiveConfig,
) -> tuple[Competence, bool]:
    """The competence after one attempt; True when ``reason`` is a new failure mode."""
    updated = dataclasses.replace(
        competence,
        attempts=competence.attempts + 1,
        successes=competence.successes + (1 if success else 0),
        updated_at=now,
    )
    if predicted is not None:
        count = config.calibration_bins
        bins = [list(b) for b in competence.bins] or [[0.0, 0.0, 0.0] for _ in range(count)]
        row = bins[_bin(predicted, len(bins))]
        row[0] += 1
        row[1] += predicted
        row[2] += 1 if success else 0
        updated = dataclasses.replace(
            updated,
            predicted_count=competence.predicted_count + 1,
            predicted_sum=competence.predicted_sum + predicted,
            brier_sum=competence.brier_sum + (predicted - (1.0 if success else 0.0)) ** 2,
            bins=bins,
        )
    novel = False
    if reason:
        updated, novel = with_failure_mode(updated, reason, now)
    entry = CompetenceEvidence(success, predicted, source, reason, now)
    kept = [*competence.evidence, entry][-config.evidence_kept :]
    return dataclasses.replace(updated, evidence=kept), novel


def estimate(successes: int, attempts: int, mass: float = 0.95) -> Estimate:
    """The posterior accuracy after ``successes`` in ``attempts``."""
    if not 0 <= successes <= attempts:
        raise ValueError(f"successes must be in [0, {attempts}], got {successes}")
    return beta_estimate(successes, attempts - successes, mass)


def calibration_error(bins: Sequence[Sequence[float]]) -> float | None:
    """Expected calibration error over (count, sum of predictions, successes) bins;
    None when no prediction was made."""
    total = sum(b[0] for b in bins)
    if total <= 0:
        return None
    error = 0.0
    for count, predicted, successes in bins:
        if count > 0:
            error += count / total * abs(predicted / count - successes / count)
    return error


def is_weak(successes: int, attempts: int, config: PredictiveConfig) -> bool:
    """Whether the capability is a weak domain (see the module docstring)."""
    if attempts < config.weak_min_samples:
        return False
    return estimate(successes, attempts, config.interval).mean < config.weak_below


@dataclass(frozen=True, slots=True)
class Measured:
    """What one competence's counts say (``measured``); the rates are None without an
    attempt, the prediction figures None when no prediction was made before one."""

    accuracy: Estimate
    actual_rate: float | None
    mean_predicted: float | None
    calibration_error: float | None
    brier: float | None
    is_weak: bool


def measured(competence: Competence, config: PredictiveConfig) -> Measured:
    """The accuracy estimate (``config.interval``), actual rate, mean prediction,
    calibration error, Brier score and weakness of ``competence``."""
    attempts, predicted = competence.attempts, competence.predicted_count
    return Measured(
        accuracy=estimate(competence.successes, attempts, config.interval),
        actual_rate=competence.successes / attempts if attempts else None,
        mean_predicted=competence.predicted_sum / predicted if predicted else None,
        calibration_error=calibration_error(competence.bins),
        brier=competence.brier_sum / predicted if predicted else None,
        is_weak=is_weak(competence.successes, attempts, config),
    )


def content_stems(text: str) -> set[str]:
    """The stems of the content words of ``text`` (stopwords left out)."""
    stemmer = snowballstemmer.stemmer("english")
    return {stemmer.stemWord(w) for w in keyword_terms(text) if not w.isdigit() or len(w) > 1}


def mode_applies(mode: str, text: str) -> bool:
    """Whether failure mode ``mode`` applies to a task described by ``text``."""
    wanted = content_stems(mode)
    if not wanted:
        return False
    return 2 * len(wanted & content_stems(text)) > len(wanted)
