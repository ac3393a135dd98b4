"""The one error tree of UCMA.

Every error the library raises on purpose derives from ``UCMAError``; database,
model and provider exceptions are translated at the boundary and chained with
``raise ... from exc`` so the cause stays visible::

    UCMAError
    ├── UserError                  the caller can fix it; the message says how
    │   ├── ValidationError        bad input: empty/oversized content, wrong types,
    │   │   │                      invalid UTF-8, malformed JSON, bad parameters
    │   │   ├── ScopeError         a call without user_id (or with an empty one)
    │   │   ├── InputLimitError    input beyond a LimitsConfig bound (nesting depth,
    │   │   │                      line length, line counts); names the limit
    │   │   ├── ContentRefusedError content the PrivacyConfig refuses; names the kinds
    │   │   │   └── SecretRefusedError  a secret (API key, password, private key ...)
    │   │   ├── ConflictNotPending a conflict that was already resolved
    │   │   └── OutcomeError       an outcome that cannot be recorded
    │   │       ├── OutcomeWindowClosed     after the 7-day window (seed 003 R14)
    │   │       └── OutcomeAlreadyRecorded  the trace already has its outcome
    │   ├── PrivacyThresholdError  a shared pattern below seed 003's privacy thresholds
    │   ├── NotFoundError          an id that does not exist in the caller's scope
    │   ├── AuthenticationError    a missing, malformed, unknown or revoked API key
    │   ├── ConfigError            an invalid UCMAConfig or provider string
    │   └── TargetNotEmptyError    a store copy (ucma migrate) into a database that holds
    │                              other data
    ├── EmbeddingError             the embedder failed; nothing was stored
    ├── ProviderError              an optional LLM provider failed or answered badly
    ├── SourceOfTruthError         a source of truth (the user's database) could not answer
    ├── PublishError               the event publisher could not reach or use NATS
    └── StorageError               the database failed; the transaction was rolled back
        ├── TransientStorageError  it lost to a concurrent transaction; may succeed again
        └── MigrationError         the schema could not be brought up to date

Not-found errors carry the id (``NotFoundError.memory_id``) so callers can act on it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AuthenticationError",
    "ConfigError",
    "ConflictNotPending",
    "ContentRefusedError",
    "EmbeddingError",
    "InputLimitError",
    "MigrationError",
    "NotFoundError",
    "OutcomeAlreadyRecorded",
    "OutcomeError",
    "OutcomeWindowClosed",
    "PrivacyThresholdError",
    "ProviderError",
    "PublishError",
    "ScopeError",
    "SecretRefusedError",
    "SourceOfTruthError",
    "StorageError",
    "TargetNotEmptyError",
    "TransientStorageError",
    "UCMAError",
    "UserError",
    "ValidationError",
]


class UCMAError(Exception):
    """Root of every error UCMA raises on purpose."""

    code: str = "ucma_error"


class UserError(UCMAError):
    """A misuse the caller can fix; the message says how."""

    code = "user_error"


class ValidationError(UserError):
    """Input failed validation; nothing was written."""

    code = "validation_error"


class ScopeError(ValidationError):
    """A call was made without a scope (``user_id``) or with an empty one."""

    code = "missing_scope"


class InputLimitError(ValidationError):
    """Input beyond one of ``LimitsConfig``'s bounds, refused before the work it would
    cost (deep JSON, an overlong line, too many lines). ``limit`` names the field."""

    code = "input_limit_exceeded"

    def __init__(self, message: str, limit: str) -> None:
        super().__init__(f"{message} (LimitsConfig.{limit})")
        self.limit = limit


class ContentRefusedError(ValidationError):
    """Content holding something the privacy policy refuses (``PrivacyConfig``);
    nothing of the write was stored. ``kinds`` names what was found and ``places``
    where ("content", "items[3].content"); the values themselves are never in the
    error, and never logged."""

    code = "content_refused"
    what = "content the privacy policy refuses"

    def __init__(self, kinds: Sequence[str], places: Sequence[str] = ()) -> None:
        self.kinds = tuple(sorted(set(kinds)))
        self.places = tuple(places)
        where = f" in {', '.join(self.places[:5])}" if self.places else ""
        more = f" and {len(self.places) - 5} more" if len(self.places) > 5 else ""
        super().__init__(
            f"refused: {self.what} ({', '.join(self.kinds)}){where}{more}; nothing was "
            "written. Remove it and send the rest (PrivacyConfig sets what is refused)"
        )


class SecretRefusedError(ContentRefusedError):
    """Content holding a secret: an API key or token, a private key, a password or
    a connection string with credentials. Never stored, never logged."""

    code = "secret_refused"
    what = "a secret or credential"


class ConflictNotPending(ValidationError):
    """Only a pending (ask_user) conflict can be resolved; this one is settled."""

    code = "conflict_not_pending"


class OutcomeError(ValidationError):
    """An outcome cannot be recorded for this trace; nothing was changed."""

    code = "outcome_error"


class OutcomeWindowClosed(OutcomeError):
    """The outcome arrived after the tracking window (seed 003 R14: 7 days)."""

    code = "outcome_window_closed"

    def __init__(self, trace_id: str, age_days: float, window_days: float) -> None:
        super().__init__(
            f"trace {trace_id!r} was decided {age_days:.1f} days ago; outcomes are accepted "
            f"for {window_days:g} days (SalienceConfig.outcome_window_days), so this one is "
            "refused and no salience changed"
        )
        self.trace_id = trace_id
        self.age_days = age_days


class OutcomeAlreadyRecorded(OutcomeError):
    """The trace already has an outcome; each decision is judged once."""

    code = "outcome_already_recorded"

    def __init__(self, trace_id: str) -> None:
        super().__init__(
            f"trace {trace_id!r} already has an outcome; record a new decision to learn again"
        )
        self.trace_id = trace_id


class PrivacyThresholdError(UserError):
    """A pattern may not be shared: too few instances or users (seed 003)."""

    code = "privacy_threshold"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotFoundError(UserError):
    """No record with this id exists in the caller's scope."""

    code = "not_found"

    def __init__(self, kind: str, memory_id: str) -> None:
        super().__init__(f"no {kind} with id {memory_id!r} in this scope")
        self.kind = kind
        self.memory_id = memory_id


class AuthenticationError(UserError):
    """A request to the service without a valid API key (missing, unknown or revoked)."""

    code = "unauthorized"


class ConfigError(UserError):
    """An invalid configuration value or provider string."""

    code = "config_error"


class TargetNotEmptyError(UserError):
    """A store copy (``ucma migrate``) into a database that holds memories, events or
    keys and no earlier run of the same copy; nothing was written."""

    code = "target_not_empty"


class EmbeddingError(UCMAError):
    """The embedder failed. UCMA never substitutes a zero vector; nothing was stored."""

    code = "embedding_error"


class ProviderError(UCMAError):
    """An optional LLM provider failed, timed out or returned malformed output."""

    code = "provider_error"


class SourceOfTruthError(UCMAError):
    """A registered source of truth failed (missing database, bad query); the read
    that consulted it fails rather than silently trusting memory."""

    code = "source_of_truth_error"


class PublishError(UCMAError):
    """Forwarding events to NATS JetStream failed; the cursor was not advanced
    past what the server acknowledged, so a restart resumes without loss."""

    code = "publish_error"


class StorageError(UCMAError):
    """The storage backend failed; the surrounding transaction was rolled back."""

    code = "storage_error"


class TransientStorageError(StorageError):
    """A transaction lost to a concurrent one (a deadlock, a serialization failure):
    it was rolled back and wrote nothing, so the same call may succeed when made
    again. The engine makes again the calls that are one transaction."""

    code = "storage_conflict"


class MigrationError(StorageError):
    """The database schema could not be migrated to the version this code expects."""

    code = "migration_error"
