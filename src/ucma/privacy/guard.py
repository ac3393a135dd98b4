"""The content guard's decisions, as pure functions: which findings of a text the
policy refuses, which it tokenises, and the text with tokens put in.

The engine (``ucma.engine.privacy``) adds what needs I/O: the vault, the key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ucma.config import PrivacyConfig
from ucma.errors import ContentRefusedError, SecretRefusedError
from ucma.privacy.detection import scan
from ucma.privacy.kinds import Category, ContentKind, Finding

__all__ = ["Screening", "replace_findings", "screen"]


@dataclass(frozen=True, slots=True)
class Screening:
    """What the policy makes of a batch of texts: per text, the findings to tokenise."""

    to_tokenise: list[list[Finding]]

    @property
    def clean(self) -> bool:
        return not any(self.to_tokenise)


def screen(texts: Sequence[str], policy: PrivacyConfig, where: Sequence[str] = ()) -> Screening:
    """Scan every text; raise if the policy refuses anything found in any of them
    (``SecretRefusedError`` when a secret is among it, ``ContentRefusedError`` for
    refused personal data), so a batch is refused whole. ``where`` names each text
    for the message ("items[3].content"); values are never in the message."""
    to_tokenise: list[list[Finding]] = []
    refused: dict[str, list[str]] = {}
    for i, text in enumerate(texts):
        keep = []
        for finding in scan(text):
            action = policy.action(finding.kind)
            if action == "refuse":
                label = where[i] if i < len(where) else f"text {i}"
                refused.setdefault(finding.kind.value, []).append(label)
            elif action == "tokenise":
                keep.append(finding)
        to_tokenise.append(keep)
    if refused:
        places = sorted({label for labels in refused.values() for label in labels})
        kinds = sorted(refused)
        secret = any(ContentKind(kind).category is Category.SECRET for kind in kinds)
        error = SecretRefusedError if secret else ContentRefusedError
        raise error(kinds, places)
    return Screening(to_tokenise)


def replace_findings(text: str, findings: Sequence[Finding], tokens: Mapping[Finding, str]) -> str:
    """``text`` with each finding replaced by its token (findings do not overlap)."""
    out = []
    position = 0
    for finding in sorted(findings, key=lambda f: f.start):
        out.append(text[position : finding.start])
        out.append(tokens[finding])
        position = finding.end
    out.append(text[position:])
    return "".join(out)
