"""What the content guard finds: the kinds of personal data and of secrets, and a
finding (a kind at a span of a text).

Kinds are named after what they are, never after the detector that found them: the
policy (``PrivacyConfig``), the typed error (``SecretRefusedError.kinds``), the tokens
(``[email_3f2a9c1b]``) and the benchmark all speak of these names.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["PII_KINDS", "SECRET_KINDS", "Category", "ContentKind", "Finding"]


class Category(StrEnum):
    PII = "pii"
    SECRET = "secret"


class ContentKind(StrEnum):
    """Every kind the guard detects; ``category`` says whether it is PII or a secret."""

    # Personal data: replaced by reversible tokens by default.
    EMAIL = "email"
    PHONE = "phone"
    CARD = "card"  # payment card numbers, Luhn-checked
    SSN = "ssn"  # US social security numbers
    NINO = "nino"  # UK national insurance numbers
    IBAN = "iban"  # mod-97 checked
    ADDRESS = "address"  # street addresses
    IP = "ip"  # IPv4 and IPv6 addresses
    # Secrets: refused by default.
    CLOUD_KEY = "cloud_key"  # AWS, Google Cloud, Azure, DigitalOcean ...
    MODEL_KEY = "model_key"  # OpenAI, Anthropic, Hugging Face, Groq ...
    CODE_HOST_TOKEN = "code_host_token"  # GitHub, GitLab, Bitbucket, npm, PyPI
    API_TOKEN = "api_token"  # Slack, Stripe, SendGrid, JWTs, "api_key = ..." assignments
    PRIVATE_KEY = "private_key"  # PEM / OpenSSH / PGP private key blocks
    PASSWORD = "password"  # "password: ...", "pwd=..."
    CONNECTION_STRING = "connection_string"  # scheme://user:password@host
    HIGH_ENTROPY_TOKEN = "high_entropy_token"  # a random-looking token of no known shape

    @property
    def category(self) -> Category:
        return Category.PII if self in PII_KINDS else Category.SECRET


PII_KINDS = frozenset(
    {
        ContentKind.EMAIL,
        ContentKind.PHONE,
        ContentKind.CARD,
        ContentKind.SSN,
        ContentKind.NINO,
        ContentKind.IBAN,
        ContentKind.ADDRESS,
        ContentKind.IP,
    }
)
SECRET_KINDS = frozenset(set(ContentKind) - PII_KINDS)


@dataclass(frozen=True, slots=True)
class Finding:
    """``kind`` found at ``text[start:end]``. ``value`` is that text: a finding is
    never logged or put in an error message."""

    kind: ContentKind
    start: int
    end: int
    value: str

    def overlaps(self, other: Finding) -> bool:
        return self.start < other.end and other.start < self.end
