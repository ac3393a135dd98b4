"""The content guard's detectors and decisions (ucma.privacy), as pure functions."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ucma.config import PrivacyConfig
from ucma.errors import ConfigError, ContentRefusedError, SecretRefusedError
from ucma.privacy import ContentKind, scan
from ucma.privacy.checksums import iban_valid, luhn_valid
from ucma.privacy.guard import replace_findings, screen
from ucma.privacy.tokens import TOKEN_PATTERN, blind_index, normalise, token_text
from ucma.types import Scope


def kinds(text: str) -> list[str]:
    return [f.kind.value for f in scan(text)]


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        (
            "write to alice.smith+work@example.co.uk today",
            "email",
            "alice.smith+work@example.co.uk",
        ),
        ("call +44 20 7946 0958 after six", "phone", "+44 20 7946 0958"),
        ("ring 0049 30 901820 for Berlin", "phone", "0049 30 901820"),
        ("office: (415) 555-0132", "phone", "(415) 555-0132"),
        ("mobile 06 12 34 56 78", "phone", "06 12 34 56 78"),
        ("paid with 4111 1111 1111 1111 yesterday", "card", "4111 1111 1111 1111"),
        ("amex 3782-822463-10005", "card", "3782-822463-10005"),
        ("ssn 123-45-6789 on file", "ssn", "123-45-6789"),
        ("NI number AB 12 34 56 C", "nino", "AB 12 34 56 C"),
        ("IBAN GB82 WEST 1234 5698 7654 32 please", "iban", "GB82 WEST 1234 5698 7654 32"),
        ("iban DE89370400440532013000.", "iban", "DE89370400440532013000"),
        (
            "lives at 221B Baker Street, London NW1 6XE",
            "address",
            "221B Baker Street, London NW1 6XE",
        ),
        ("wohnt in Hauptstraße 12, 10115 Berlin", "address", "Hauptstraße 12, 10115 Berlin"),
        ("the host 192.168.1.20 is down", "ip", "192.168.1.20"),
        ("from 2001:db8:85a3::8a2e:370:7334 again", "ip", "2001:db8:85a3::8a2e:370:7334"),
    ],
)
def test_pii_is_found_with_its_kind_and_span(text: str, kind: str, value: str) -> None:
    [finding] = scan(text)
    assert (finding.kind.value, finding.value) == (kind, value)
    assert text[finding.start : finding.end] == value


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("aws AKIAIOSFODNN7EXAMPLE", "cloud_key"),
        ("gcp AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "cloud_key"),
        ("key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "model_key"),
        ("claude sk-ant-api03-" + "a1B2c3D4" * 12, "model_key"),
        ("hf hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "model_key"),
        ("token ghp_" + "A1b2C3d4E5" * 4, "code_host_token"),
        ("gitlab glpat-Xy12Ab34Cd56Ef78Gh90", "code_host_token"),
        ("slack xoxb-123456789012-abcdefABCDEF", "api_token"),
        ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "api_token"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n", "private_key"),
        ("password: hunter2", "password"),
        ("DB config pwd=Sup3r$ecret;", "password"),
        ("my password is Tr0ub4dor&3", "password"),
        ("postgres://app:s3cretpw@db.internal:5432/prod", "connection_string"),
        ("blob Zx9Qw2Er7Ty4Ui1Op0As8Df5Gh3Jk", "high_entropy_token"),
    ],
)
def test_secrets_are_found_with_their_kind(text: str, kind: str) -> None:
    assert kind in kinds(text)
    assert all(ContentKind(k).category.value == "secret" for k in kinds(text) if k == kind)


@pytest.mark.parametrize(
    "text",
    [
        "Order ORD-2024-118842 shipped on 2024-03-15",
        "Upgraded to version 4.2.1.0 and v10.0.19045",
        "commit 3f2a9c1b4d5e6f708192a3b4c5d6e7f809112233 fixed it",
        "request 123e4567-e89b-12d3-a456-426614174000 failed at 10:15:30",
        "The book is ISBN 978-3-16-148410-0 and costs $1,299.99",
        "We sold 1234567 units and 4111 crates",
        "I forgot my password yesterday, the reset link expired",
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "getUserAccountDetailsFromDatabaseQuickly",
        # Code and tutorials that name credentials without holding one (BEAM's chats).
        "    password = db.Column(db.String(120), nullable=False)",
        "    password = data.get('password')",
        "User(username=username, password=hashed_password)",
        "    return jsonify({'token': 'some_token'})",
        "const apiKey = 'YOUR_API_KEY_HERE';",
        "const apiKey = process.env.OPENWEATHER_API_KEY;",
        'curl -X POST -d "username=testuser&password=testpass" http://localhost:5000/login',
        "const web = new WebClient('xoxb-your-slack-token');",
        '<link integrity="sha384-IMqVj9dNAdCwD9lqO9yH+Y7H5HRC3b+QH6QaU1ExdTRzVXp77lXdMjX8QeEz+x">',
        "Hashed password: pbkdf2:sha256:260000$zL6yRjZtQ5vGKwFf$5b7c7b7c7b7c",
        "Password: <input type='password'>",
        "Burnout: The Secret to Unlocking your best work",
        "#### Monitoring\n\n1. Set up alerts",
        "Scoring 92 on the quiz",
    ],
)
def test_hard_negatives_are_not_flagged(text: str) -> None:
    assert scan(text) == []


def test_luhn_and_iban_checks() -> None:
    assert luhn_valid("4111111111111111")
    assert not luhn_valid("4111111111111112")
    assert iban_valid("GB82 WEST 1234 5698 7654 32")
    assert not iban_valid("GB82 WEST 1234 5698 7654 33")
    assert not scan("card 4111 1111 1111 1112")


@given(st.integers(min_value=10**14, max_value=10**15 - 1))
def test_luhn_accepts_exactly_one_check_digit(body: int) -> None:
    valid = [d for d in range(10) if luhn_valid(f"{body}{d}")]
    assert len(valid) == 1


@given(st.text(max_size=300))
def test_scan_findings_are_in_order_and_never_overlap(text: str) -> None:
    findings = scan(text)
    for a, b in zip(findings, findings[1:], strict=False):
        assert a.end <= b.start
    for f in findings:
        assert text[f.start : f.end] == f.value


def test_tokens_are_stable_per_scope_and_value_and_differ_across_scopes() -> None:
    key = b"k" * 32
    alice, bob = Scope("alice", "default"), Scope("bob", "default")
    one = blind_index(key, alice, ContentKind.EMAIL, "Alice@Example.com")
    assert one == blind_index(key, alice, ContentKind.EMAIL, "alice@example.com")
    assert one != blind_index(key, bob, ContentKind.EMAIL, "alice@example.com")
    token = token_text(ContentKind.EMAIL, one)
    assert TOKEN_PATTERN.fullmatch(token) and re.fullmatch(r"\[email_[0-9a-f]{8}\]", token)
    assert normalise(ContentKind.PHONE, "0044 20 7946 0958") == "+442079460958"
    assert scan(f"mail {token} again") == []


def test_policy_refuses_secrets_whole_batch_and_names_only_kinds() -> None:
    secret = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    with pytest.raises(SecretRefusedError) as caught:
        screen(["fine text", f"key {secret}"], PrivacyConfig(), ["items[0]", "items[1]"])
    assert caught.value.kinds == ("model_key",)
    assert caught.value.places == ("items[1]",)
    assert secret not in str(caught.value)


def test_policy_per_kind_tokenise_refuse_allow() -> None:
    text = "mail a@example.com from 10.0.0.7"
    screening = screen([text], PrivacyConfig(kinds={"ip": "allow"}))
    [found] = screening.to_tokenise
    assert [f.kind.value for f in found] == ["email"]
    assert replace_findings(text, found, {found[0]: "[email_00000000]"}) == (
        "mail [email_00000000] from 10.0.0.7"
    )
    with pytest.raises(ContentRefusedError) as caught:
        screen([text], PrivacyConfig(pii="refuse"))
    assert not isinstance(caught.value, SecretRefusedError)
    assert caught.value.kinds == ("email", "ip")
    assert screen(["key AKIAIOSFODNN7EXAMPLE"], PrivacyConfig(secrets="allow")).clean


def test_policy_config_is_validated() -> None:
    with pytest.raises(ConfigError):
        PrivacyConfig(pii="encrypt")
    with pytest.raises(ConfigError):
        PrivacyConfig(kinds={"passport": "refuse"})
    assert "s3cr3t-key" not in repr(PrivacyConfig(vault_key="s3cr3t-key"))
