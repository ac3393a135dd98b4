# ruff: noqa: E501 - corpus templates read best one sentence to a line
"""The labelled corpus of ``bench/privacy.py``: sentences carrying one kind of PII or
secret in varied formats, and hard negatives (order numbers, versions, dates, hashes in
code, ordinary numbers, ISBNs, UUIDs in logs, prices). Its own vocabulary and number
generators (valid Luhn, mod-97, SSN and NINO rules), seeded: the same corpus each run.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

__all__ = ["Sample", "corpus"]

NAMES = ["Greta", "Omar", "Priya", "Tomasz", "Aiko", "Lucas", "Fatima", "Sven", "Maya", "Idris"]
DOMAINS = [
    "example.org",
    "mail.example.com",
    "corp.example.net",
    "uni.example.edu",
    "example.co.uk",
]
STREETS = ["Baker", "Elm", "Maple", "Oak", "Pine", "Cedar", "Harbour", "Station", "Church", "Mill"]
TYPES = ["Street", "St", "Avenue", "Ave", "Road", "Rd", "Lane", "Drive", "Boulevard", "Court"]
CITIES = ["London", "Springfield", "Leeds", "Boston", "Dublin", "Portland"]
FRAMES = [
    "{name} said to use {x} from now on.",
    "Note for later: {x} belongs to {name}.",
    "{name} updated the record with {x} yesterday.",
    "Please keep {x} on file for {name}.",
    "The form {name} sent lists {x}.",
]


@dataclass(frozen=True)
class Sample:
    text: str
    label: str  # a ContentKind value, or "negative"
    value: str = ""  # the labelled value (empty for negatives)


def _luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for d in string.digits:
        digits = body + d
        total = sum(
            (int(c) * 2 - 9 if int(c) * 2 > 9 else int(c) * 2) if i % 2 else int(c)
            for i, c in enumerate(reversed(digits))
        )
        if total % 10 == 0:
            return digits
    raise AssertionError


def _iban(country: str, length: int, rng: random.Random) -> str:
    bban = "".join(rng.choice(string.digits) for _ in range(length - 4))
    number = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def _group(s: str, size: int = 4, sep: str = " ") -> str:
    return sep.join(s[i : i + size] for i in range(0, len(s), size))


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


B62 = string.ascii_letters + string.digits


def _pii(rng: random.Random) -> list[Sample]:
    out: list[Sample] = []
    for i in range(40):
        name = rng.choice(NAMES)
        user = (
            f"{name.lower()}{rng.choice(['', '.', '_'])}{rng.choice(['k', 'smith', 'w', str(i)])}"
        )
        email = f"{user}@{rng.choice(DOMAINS)}"
        out.append(Sample(rng.choice(FRAMES).format(name=name, x=email), "email", email))
        phone = rng.choice(
            [
                f"+44 20 {rng.randint(7000, 7999)} {rng.randint(1000, 9999)}",
                f"+1 ({rng.randint(201, 989)}) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
                f"({rng.randint(201, 989)}) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
                f"{rng.randint(201, 989)}-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
                f"020 {rng.randint(7000, 7999)} {rng.randint(1000, 9999)}",
                "06 " + " ".join(f"{rng.randint(10, 99)}" for _ in range(4)),
                f"+49 30 {rng.randint(100000, 999999)}",
                f"0049 89 {rng.randint(1000000, 9999999)}",
                f"+33 6 {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)} {rng.randint(10, 99)}",
            ]
        )
        out.append(Sample(f"Call {name} on {phone} after lunch.", "phone", phone))
        card = _luhn_complete(rng.choice(["4", "51", "55", "22", "6011"]), 16, rng)
        amex = _luhn_complete(rng.choice(["34", "37"]), 15, rng)
        shown = rng.choice(
            [card, _group(card), _group(card, sep="-"), f"{amex[:4]} {amex[4:10]} {amex[10:]}"]
        )
        out.append(Sample(f"{name} paid with card {shown} at the hotel.", "card", shown))
        ssn = f"{rng.randint(1, 665):03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
        out.append(Sample(rng.choice(FRAMES).format(name=name, x=f"SSN {ssn}"), "ssn", ssn))
        nino = (
            rng.choice("ABCEHJKLMPRSTWXYZ") + rng.choice("ABCEHJKLMPRSTWXYZ")
            + " ".join(f"{rng.randint(10, 99)}" for _ in range(3)) + rng.choice("ABCD")
        )  # fmt: skip
        if nino[:2] in ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ"):
            nino = "AB" + nino[2:]
        nino = nino[:2] + " " + nino[2:10] + " " + nino[10:] if i % 2 else nino.replace(" ", "")
        out.append(Sample(f"{name}'s national insurance number is {nino}.", "nino", nino))
        country, length = rng.choice([("GB", 22), ("DE", 22), ("FR", 27), ("NL", 18), ("ES", 24)])
        iban = _iban(country, length, rng)
        shown_iban = _group(iban) if i % 2 else iban
        out.append(Sample(f"Send {name}'s refund to IBAN {shown_iban} please.", "iban", shown_iban))
        street = f"{rng.randint(1, 2400)} {rng.choice(STREETS)} {rng.choice(TYPES)}"
        address = rng.choice([street, f"{street}, {rng.choice(CITIES)}"])
        out.append(Sample(f"{name} moved to {address} last spring.", "address", address))
        ip = rng.choice(
            [
                f"{rng.randint(11, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
                f"2001:db8:{rng.randint(1, 0xFFFF):x}::{rng.randint(1, 0xFFFF):x}",
            ]
        )
        out.append(Sample(f"{name} logged in from {ip} this morning.", "ip", ip))
    return out


def _secrets(rng: random.Random) -> list[Sample]:
    out: list[Sample] = []
    for i in range(27):
        name = rng.choice(NAMES)
        keys = [
            ("cloud_key", "AKIA" + _rand(rng, string.ascii_uppercase + string.digits, 16)),
            ("cloud_key", "AIza" + _rand(rng, B62 + "-_", 35)),
            ("model_key", "sk-proj-" + _rand(rng, B62, 48)),
            ("model_key", "sk-ant-api03-" + _rand(rng, B62 + "-_", 90)),
            ("model_key", "hf_" + _rand(rng, B62, 34)),
            ("code_host_token", "ghp_" + _rand(rng, B62, 36)),
            ("code_host_token", "glpat-" + _rand(rng, B62, 20)),
            ("api_token", "xoxb-" + _rand(rng, string.digits, 12) + "-" + _rand(rng, B62, 24)),
            ("api_token", "sk_live_" + _rand(rng, B62, 24)),
        ]
        kind, key = keys[i % len(keys)]
        out.append(Sample(f"{name} shared the key {key} in chat.", kind, key))
        block = rng.choice(
            ["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY"]
        )
        pem = f"-----BEGIN {block}-----\n{_rand(rng, B62 + '+/', 64)}\n-----END {block}-----"
        out.append(Sample(f"Here is the deploy key:\n{pem}", "private_key", pem))
        pw = _rand(rng, B62, 6) + rng.choice("!@#$%&") + _rand(rng, string.digits, 2)
        shape = rng.choice(
            [f"password: {pw}", f"pwd={pw}", f"DB_PASSWORD=\"{pw}\"", f"my password is {pw}",
             f"passwd = {pw}", f"Password: {pw}"]
        )  # fmt: skip
        out.append(Sample(f"For the staging box, {shape} (do not share).", "password", pw))
        host = rng.choice(["db.internal", "10.0.3.4", "cache.example.net"])
        conn = rng.choice(
            [f"postgres://app:{pw}@{host}:5432/prod", f"mongodb+srv://admin:{pw}@{host}/users",
             f"redis://:{pw}@{host}:6379/0", f"mysql://root:{pw}@{host}/shop"]
        )  # fmt: skip
        out.append(Sample(f"The service connects with {conn} today.", "connection_string", conn))
        token = _rand(rng, B62, rng.randint(28, 48))
        out.append(Sample(f"Webhook signing value: {token}", "high_entropy_token", token))
    return out


def _negatives(rng: random.Random) -> list[Sample]:
    makers = [
        lambda: f"Order ORD-{rng.randint(2019, 2025)}-{rng.randint(100000, 999999)} shipped.",
        lambda: (
            f"Upgraded the app to v{rng.randint(1, 20)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}."
        ),
        lambda: (
            f"Release {rng.randint(1, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 9)}.{rng.randint(0, 999)} is out."
        ),
        lambda: (
            f"The meeting moved to {rng.randint(2020, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} at {rng.randint(8, 18)}:{rng.choice(['00', '30'])}."
        ),
        lambda: (
            f"Born on {rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(1950, 2010)}, as the story goes."
        ),
        lambda: f"    git checkout {_rand(rng, '0123456789abcdef', 40)}  # the fix",
        lambda: f"commit {_rand(rng, '0123456789abcdef', 7)} reverted the change",
        lambda: f"sha256: {_rand(rng, '0123456789abcdef', 64)}",
        lambda: f"We sold {rng.randint(1000, 9999999)} units and {rng.randint(10, 999)} crates.",
        lambda: (
            f"The book ISBN 978-{rng.randint(0, 1)}-{rng.randint(100, 999)}-{rng.randint(10000, 99999)}-{rng.randint(0, 9)} is on the shelf."
        ),
        lambda: f"2024-05-0{rng.randint(1, 9)}T10:15:30Z ERROR request {_uuid(rng)} timed out",
        lambda: (
            f"The jacket costs ${rng.randint(10, 2999)}.{rng.randint(0, 99):02d} or EUR {rng.randint(10, 999)},{rng.randint(0, 99):02d}."
        ),
        lambda: f"Invoice #{rng.randint(10000, 99999999)} is due in {rng.randint(2, 60)} days.",
        lambda: f"I forgot my password again, the reset link {rng.choice(['expired', 'worked'])}.",
        lambda: (
            f"Tracking number {rng.randint(10**11, 10**12 - 1)} says it is in {rng.choice(CITIES)}."
        ),
        lambda: (
            f"The function getUserAccountDetails{rng.choice(['FromCache', 'ById', 'Async'])} is slow."
        ),
        lambda: (
            f"Room {rng.randint(100, 999)} on floor {rng.randint(1, 40)} at {rng.randint(1, 12)} pm."
        ),
        lambda: (
            f"Temperature was {rng.randint(-10, 40)}.{rng.randint(0, 9)} C with {rng.randint(0, 100)}% humidity."
        ),
        lambda: (
            f"See section {rng.randint(1, 20)}.{rng.randint(1, 9)}.{rng.randint(1, 9)} of the manual."
        ),
        lambda: (
            f"Build {rng.randint(1000, 99999)} passed {rng.randint(100, 5000)} tests in {rng.randint(1, 59)} min."
        ),
        lambda: (
            f"Package lodash@{rng.randint(1, 4)}.{rng.randint(0, 17)}.{rng.randint(0, 21)} was installed."
        ),
        lambda: (
            f"{rng.choice(NAMES)} ran {rng.randint(3, 42)} km in {rng.randint(15, 240)} minutes."
        ),
    ]
    return [Sample(rng.choice(makers)(), "negative") for _ in range(300)]


def _uuid(rng: random.Random) -> str:
    h = _rand(rng, "0123456789abcdef", 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def corpus(seed: int = 13) -> list[Sample]:
    rng = random.Random(seed)
    return _pii(rng) + _secrets(rng) + _negatives(rng)
