"""Detectors of secrets: API keys and tokens by their issuers' prefixes, private key
blocks, passwords and credentials in assignments, connection strings with a
password, and random-looking tokens of no known shape (by entropy).

Pure functions from a text to findings. A finding's value is never logged, never
put in an error message and never written: the guard refuses the whole write.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ucma.privacy.checksums import shannon_entropy
from ucma.privacy.kinds import ContentKind, Finding

__all__ = [
    "SECRET_DETECTORS",
    "find_assignments",
    "find_connection_strings",
    "find_high_entropy_tokens",
    "find_prefixed_keys",
    "find_private_keys",
]

_END = r"(?![A-Za-z0-9_\-])"
_START = r"(?<![A-Za-z0-9_\-])"

# Issuer prefixes, as documented by each issuer or by the secret-scanning rules of
# code hosts. Each needs enough characters after the prefix to be a key, not a word.
_PREFIXED: tuple[tuple[ContentKind, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(_START + pattern + _END))
    for kind, pattern in (
        # Cloud providers.
        (ContentKind.CLOUD_KEY, r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}"),
        (ContentKind.CLOUD_KEY, r"AIza[0-9A-Za-z_\-]{35}"),
        (ContentKind.CLOUD_KEY, r"ya29\.[0-9A-Za-z_\-]{30,}"),
        (ContentKind.CLOUD_KEY, r"do[opr]_v1_[a-f0-9]{64}"),
        (ContentKind.CLOUD_KEY, r"(?:AccountKey|SharedAccessKey)=[A-Za-z0-9+/]{30,}={0,2}"),
        (ContentKind.CLOUD_KEY, r"LTAI[A-Za-z0-9]{12,24}"),
        (ContentKind.CLOUD_KEY, r"hv[sb]\.[A-Za-z0-9_\-]{24,}"),
        # Model providers.
        (ContentKind.MODEL_KEY, r"sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_\-]{32,}"),
        (ContentKind.MODEL_KEY, r"sk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}"),
        (ContentKind.MODEL_KEY, r"hf_[A-Za-z0-9]{30,}"),
        (ContentKind.MODEL_KEY, r"gsk_[A-Za-z0-9]{40,}"),
        (ContentKind.MODEL_KEY, r"r8_[A-Za-z0-9]{30,}"),
        (ContentKind.MODEL_KEY, r"xai-[A-Za-z0-9]{40,}"),
        (ContentKind.MODEL_KEY, r"pplx-[A-Za-z0-9]{40,}"),
        (ContentKind.MODEL_KEY, r"nvapi-[A-Za-z0-9_\-]{40,}"),
        # Code hosts and package registries.
        (ContentKind.CODE_HOST_TOKEN, r"gh[pousr]_[A-Za-z0-9]{36,}"),
        (ContentKind.CODE_HOST_TOKEN, r"github_pat_[A-Za-z0-9_]{40,}"),
        (ContentKind.CODE_HOST_TOKEN, r"glpat-[A-Za-z0-9_\-]{20,}"),
        (ContentKind.CODE_HOST_TOKEN, r"gl(?:dt|ptt|rt|cbt|imt)-[A-Za-z0-9_\-]{20,}"),
        (ContentKind.CODE_HOST_TOKEN, r"ATBB[A-Za-z0-9_\-]{28,}"),
        (ContentKind.CODE_HOST_TOKEN, r"npm_[A-Za-z0-9]{36}"),
        (ContentKind.CODE_HOST_TOKEN, r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
        # Other services.
        (ContentKind.API_TOKEN, r"xox[abposr]-\d{6,}-[A-Za-z0-9\-]{10,}"),
        (ContentKind.API_TOKEN, r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{20,}"),
        (ContentKind.API_TOKEN, r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
        (ContentKind.API_TOKEN, r"eyJ[\w\-]{8,}\.eyJ[\w\-]{8,}\.[\w\-]{8,}"),
        (ContentKind.API_TOKEN, r"SK[0-9a-f]{32}"),
        (ContentKind.API_TOKEN, r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
        (ContentKind.API_TOKEN, r"key-[0-9a-f]{32}"),
        (ContentKind.API_TOKEN, r"lin_api_[A-Za-z0-9]{40}"),
    )
)


def find_prefixed_keys(text: str) -> Iterator[Finding]:
    for kind, pattern in _PREFIXED:
        for match in pattern.finditer(text):
            yield Finding(kind, match.start(), match.end(), match.group())


_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*)",
    re.DOTALL,
)


def find_private_keys(text: str) -> Iterator[Finding]:
    """PEM, OpenSSH and PGP private key blocks (to their END line, or to the end of
    the text when it was cut)."""
    for match in _PRIVATE_KEY.finditer(text):
        yield Finding(ContentKind.PRIVATE_KEY, match.start(), match.end(), match.group())


_PASSWORD_NAMES = (
    r"password|passwd|passwort|mot de passe|contraseña|pwd|pass|passcode|passphrase|"
    r"pin code|db_pass(?:word)?|admin_pass(?:word)?|root password|wifi password"
)
_TOKEN_NAMES = (
    r"api[_ -]?key|apikey|api[_ -]?secret|access[_ -]?key(?:[_ -]?id)?|secret[_ -]?access[_ -]?key|"
    r"secret[_ -]?key|client[_ -]?secret|access[_ -]?token|auth[_ -]?token|refresh[_ -]?token|"
    r"bearer[_ -]?token|private[_ -]?token|app[_ -]?secret|signing[_ -]?key|secret|token"
)
_ASSIGNMENT = re.compile(
    rf"(?i)(?<![A-Za-z])(?P<name>(?:[A-Za-z]+[_-])?(?:{_PASSWORD_NAMES}|{_TOKEN_NAMES}))"
    r"[\"']?\s*(?P<op>:=|=>|[:=]|\bis\b|\bwas\b|\bto\b|\bset to\b)\s*"
    r"(?P<quote>[\"'`]?)(?P<value>[^\s\"'`,;]{3,})"
)
_BEARER = re.compile(r"(?i)\b(?:authorization:\s*)?bearer\s+(?P<value>[A-Za-z0-9._~+/\-]{20,}=*)")
_PLACEHOLDERS = frozenset(
    {
        "none", "null", "nil", "empty", "true", "false", "required", "optional", "unknown",
        "redacted", "hidden", "secret", "password", "changeme", "example", "xxxx", "xxxxx",
        "xxxxxx", "xxxxxxxx", "****", "*****", "******", "********", "<redacted>", "tbd",
        "reset", "expired", "incorrect", "wrong", "invalid", "same", "different", "strong",
        "weak", "long", "short", "correct", "updated", "changed", "saved", "stored", "set",
        "manager", "protected", "managed", "rotated", "used", "needed", "missing",
        "token", "tokens", "key", "apikey", "value", "string",
    }
)  # fmt: skip
_PLACEHOLDER_SHAPE = re.compile(
    r"^(?:\$\{?\w+\}?|%\(?\w+\)?s?|\{\{?\s*\w+\s*\}?\}|<[^>]*>|\*+|x+|\.+)$", re.IGNORECASE
)


# Code that names a credential without holding one: a call or subscript
# (``db.Column(...)``, ``data.get('password')``), an attribute path
# (``request.form``), a snake_case variable or placeholder (``hashed_password``,
# ``'some_token'``). Measured on BEAM's coding chats, where these were most of
# what the assignment rule found.
_CODE_VALUE = re.compile(r"[(\[{<]|^[a-z_]\w*(?:\.\w+)+$|^[a-z][a-z0-9]*_[a-z0-9_]*$")
# Placeholders and sample values of tutorials: ``'YOUR_API_KEY_HERE'``,
# ``MY_API_KEY``, ``"testpassword"``, ``"mysecretpassword"``; and stored hashes
# (``pbkdf2:sha256:...``, ``$2b$...``), which are derived, not credentials.
_SAMPLE_VALUE = re.compile(
    r"^(?:your|my|the|some|example|sample|dummy|fake|test)_?[a-z0-9_]*$|"
    r"^[a-z]*(?:pass|secret|test|example|dummy|sample)[a-z0-9]*$|"
    r"(?:^|_)(?:your|my)_|_here$|^#+$|^(?:pbkdf2|scrypt|argon2|bcrypt)[:$]|^\$2[aby]?\$",
    re.IGNORECASE,
)


def _looks_real(value: str, op: str, quoted: bool) -> bool:
    """Whether an assigned value is a credential rather than a placeholder, code
    naming one, or a word of a sentence ("the password is strong", "password:
    reset required")."""
    bare = value.rstrip(".!?)]}")
    if len(bare) < 4 or bare.lower() in _PLACEHOLDERS or _PLACEHOLDER_SHAPE.match(bare):
        return False
    if _CODE_VALUE.search(value) or _CODE_VALUE.search(bare) or _SAMPLE_VALUE.search(bare):
        return False
    wordy = bare.isalpha() and (bare.islower() or op.lower() in ("is", "was", "to", "set to"))
    if op.lower() in ("is", "was", "to", "set to"):
        # In prose only a value that does not read as a word, or is quoted, counts.
        return quoted or not wordy
    if op == ":" and wordy and not quoted:
        return len(bare) >= 8
    return True


def find_assignments(text: str) -> Iterator[Finding]:
    """``password: hunter2``, ``pwd=s3cret``, ``DB_PASSWORD="..."``, ``api_key = ...``,
    "my password is Tr0ub4dor&3", ``Authorization: Bearer ...``. The finding is the
    value; its kind is ``password`` for password names, ``api_token`` otherwise."""
    for match in _ASSIGNMENT.finditer(text):
        value, op = match.group("value"), match.group("op")
        if not _looks_real(value, op, bool(match.group("quote"))):
            continue
        name = match.group("name").lower()
        kind = (
            ContentKind.API_TOKEN
            if re.search(_TOKEN_NAMES, name) and not re.search(_PASSWORD_NAMES, name)
            else ContentKind.PASSWORD
        )
        yield Finding(kind, match.start("value"), match.end("value"), value)
    for match in _BEARER.finditer(text):
        yield Finding(
            ContentKind.API_TOKEN, match.start("value"), match.end("value"), match.group("value")
        )


_CONNECTION = re.compile(
    r"\b[a-zA-Z][a-zA-Z0-9+.\-]{1,24}://(?P<user>[^\s:/@?#]*):(?P<password>[^\s@/?]+)@[^\s/?#]+"
)
_PASSWORD_PARAM = re.compile(r"(?i)[?&;](?:password|pwd|pass|secret|token)=(?P<value>[^\s&;]+)")


def find_connection_strings(text: str) -> Iterator[Finding]:
    """URLs with a password (``postgres://app:pw@db:5432/x``, ``redis://:pw@cache``)
    and connection parameters carrying one (``...?password=...``)."""
    for match in _CONNECTION.finditer(text):
        password = match.group("password")
        if password.startswith("$") or _PLACEHOLDER_SHAPE.match(password):
            continue
        yield Finding(ContentKind.CONNECTION_STRING, match.start(), match.end(), match.group())
    for match in _PASSWORD_PARAM.finditer(text):
        value = match.group("value").rstrip("\"'`.,)")
        sample = _PLACEHOLDER_SHAPE.match(value) or _SAMPLE_VALUE.search(value)
        if len(value) >= 4 and not sample:
            yield Finding(ContentKind.CONNECTION_STRING, match.start(), match.end(), match.group())


_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?![A-Za-z0-9+/_\-])")
_HEX_OR_UUID = re.compile(r"^[0-9a-fA-F\-]+$")
# A published digest (subresource integrity: ``sha384-...``) is no secret.
_DIGEST = re.compile(r"^sha(?:256|384|512)-")
MIN_ENTROPY = 4.0
"""Bits per character above which a token of letters and digits reads as random:
English identifiers stay under it, base64 and base62 keys of 24+ characters over it.
Hex (hashes, UUIDs) cannot reach it (16 symbols = 4 bits at most) and is excluded."""


def find_high_entropy_tokens(text: str) -> Iterator[Finding]:
    """Random-looking tokens of no known issuer: 24+ characters of base64/base62 mixing
    upper case, lower case and digits, at ``MIN_ENTROPY`` bits per character or more.
    Git hashes, UUIDs and other hex strings, paths and identifiers are not."""
    for match in _CANDIDATE.finditer(text):
        value = match.group()
        core = value.rstrip("=")
        if _HEX_OR_UUID.match(core) or _DIGEST.match(core):
            continue
        classes = (
            any(c.isupper() for c in core),
            any(c.islower() for c in core),
            sum(c.isdigit() for c in core) >= 2,
        )
        if all(classes) and shannon_entropy(core) >= MIN_ENTROPY:
            yield Finding(ContentKind.HIGH_ENTROPY_TOKEN, match.start(), match.end(), value)


SECRET_DETECTORS: tuple[Callable[[str], Iterator[Finding]], ...] = (
    find_private_keys,
    find_connection_strings,
    find_prefixed_keys,
    find_assignments,
    find_high_entropy_tokens,
)
"""In order of precedence: where two findings overlap, the earlier detector's wins."""
