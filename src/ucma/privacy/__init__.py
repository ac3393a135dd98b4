"""The content guard (seed 003 R3, issue 13): personal data is replaced by reversible
per-scope tokens, secrets are refused, per ``PrivacyConfig``.

kinds.py        ContentKind (each PII and secret kind) and Finding
checksums.py    Luhn, IBAN mod-97, Shannon entropy
pii.py          detectors of personal data
credentials.py  detectors of secrets
detection.py    scan: every detector, overlaps settled
tokens.py       token text, normalisation, the keyed blind index
guard.py        the policy's decisions: refuse (typed error) or tokenise
vault.py        the vault's cipher (Fernet) and its key file

The engine's side (vault entries, reveal, query tokenisation) is ``ucma.engine.privacy``.
"""

from ucma.privacy.detection import scan
from ucma.privacy.kinds import PII_KINDS, SECRET_KINDS, Category, ContentKind, Finding

__all__ = ["PII_KINDS", "SECRET_KINDS", "Category", "ContentKind", "Finding", "scan"]
