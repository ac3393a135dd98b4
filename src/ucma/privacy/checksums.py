"""The checks that tell a real number from one of the same shape: Luhn for payment
cards, ISO 13616 mod-97 for IBANs, and Shannon entropy for random-looking tokens.
Pure functions."""

from __future__ import annotations

import math
from collections import Counter

__all__ = ["IBAN_LENGTHS", "iban_valid", "luhn_valid", "shannon_entropy"]


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (ISO/IEC 7812)."""
    if not digits.isdigit() or len(digits) < 2:
        return False
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char)
        if i % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


# ISO 13616 lengths of the countries most often seen; an IBAN of another country is
# accepted on its checksum alone (length 15 to 34).
IBAN_LENGTHS = {
    "AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22,
    "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27, "HR": 21,
    "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
    "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24,
    "SI": 19, "SK": 24, "SM": 27, "TR": 26,
}  # fmt: skip


def iban_valid(iban: str) -> bool:
    """Whether ``iban`` (spaces allowed) has a valid mod-97 checksum and a
    plausible length for its country."""
    compact = iban.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34 or not compact.isalnum():
        return False
    country = compact[:2]
    if not country.isalpha() or not compact[2:4].isdigit():
        return False
    expected = IBAN_LENGTHS.get(country)
    if expected is not None and len(compact) != expected:
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(char, 36)) for char in rearranged)
    return int(number) % 97 == 1


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text``'s own character distribution (0 for empty)."""
    if not text:
        return 0.0
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in Counter(text).values())
