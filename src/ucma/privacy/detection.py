"""``scan``: every detector over a text, overlapping findings settled.

Secrets outrank personal data (a connection string holds an email-like
``user:pw@host``; refusing it is what matters), then the detectors' own order
(``SECRET_DETECTORS``, ``PII_DETECTORS``), then the longer finding. Text that is
already a guard token (``[email_3f2a9c1b]``) is never found again.
"""

from __future__ import annotations

from ucma.privacy.credentials import SECRET_DETECTORS
from ucma.privacy.kinds import Finding
from ucma.privacy.pii import PII_DETECTORS
from ucma.privacy.tokens import TOKEN_PATTERN

__all__ = ["scan"]

_DETECTORS = SECRET_DETECTORS + PII_DETECTORS


def scan(text: str) -> list[Finding]:
    """The findings in ``text``, in text order, none overlapping another."""
    tokens = [(m.start(), m.end()) for m in TOKEN_PATTERN.finditer(text)]
    candidates: list[tuple[int, int, Finding]] = []
    for rank, detector in enumerate(_DETECTORS):
        for finding in detector(text):
            if any(s < finding.end and finding.start < e for s, e in tokens):
                continue
            candidates.append((rank, -(finding.end - finding.start), finding))
    chosen: list[Finding] = []
    for _, _, finding in sorted(candidates, key=lambda c: (c[0], c[1], c[2].start)):
        if not any(finding.overlaps(other) for other in chosen):
            chosen.append(finding)
    return sorted(chosen, key=lambda f: f.start)
