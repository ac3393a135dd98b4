"""Detectors of personal data: emails, phone numbers, payment cards, national ids
(US SSN, UK NINO), IBANs, street addresses and IP addresses.

Each detector is a pure function from a text to its findings. Shapes are matched
with regular expressions and then checked the way the number itself is checked
(Luhn, mod-97, SSN area rules, NINO prefixes, ``ipaddress``), so that order
numbers, versions, dates, ISBNs and hashes of the same shape are not taken for
personal data. Names of people are not PII here (DESIGN.md: memory about people is
the product).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator

from ucma.privacy.checksums import iban_valid, luhn_valid
from ucma.privacy.kinds import ContentKind, Finding

__all__ = [
    "PII_DETECTORS",
    "find_addresses",
    "find_cards",
    "find_emails",
    "find_ibans",
    "find_ips",
    "find_ninos",
    "find_phones",
    "find_ssns",
]

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])"
)


def find_emails(text: str) -> Iterator[Finding]:
    for match in _EMAIL.finditer(text):
        yield Finding(ContentKind.EMAIL, match.start(), match.end(), match.group())


# A run of digits with the separators people write numbers with. Word characters,
# "#", "/", "." or "-" glued to either end make it part of something else (an order
# number, a path, a version), so it is not a phone number.
_PHONE_INTERNATIONAL = re.compile(
    r"(?<![\w#/.+-])(?:\+|00)[1-9]\d{0,2}(?:[ .-]?\(?\d{1,5}\)?){1,6}(?![\w/-]|\.\d)"
)
_PHONE_NATIONAL = re.compile(
    r"(?<![\w#/.+-])(?:\(\d{2,5}\)[ .-]?\d{2,4}|\d{2,5}[ .-]\d{2,4}|\d{9,11})"
    r"(?:[ .-]\d{2,4}){0,3}(?![\w/-]|\.\d)"
)
_PHONE_CUES = re.compile(
    r"(?i)\b(?:phone|tel|telephone|mobile|cell|call|text|whatsapp|fax|reach|ring|number|"
    r"contact|dial|handy|portable)\b[^.\n]{0,24}$"
)
_DATE_LIKE = re.compile(r"^(?:19|20)\d\d[ .-]\d{1,2}[ .-]\d{1,2}$|^\d{1,2}[ .-]\d{1,2}[ .-]\d{4}$")


def _phone_digits(value: str) -> str:
    return re.sub(r"\D", "", value)


def find_phones(text: str) -> Iterator[Finding]:
    """International numbers (``+44 20 7946 0958``, ``0049 30 901820``) and national
    ones: a leading 0 trunk prefix (``020 7946 0958``, ``06 12 34 56 78``), the North
    American shape (``(415) 555-0132``, ``415-555-0132``), or any 9 to 11 digit number
    right after a cue word ("call", "phone", "mobile" ...)."""
    taken: list[tuple[int, int]] = []
    for match in _PHONE_INTERNATIONAL.finditer(text):
        digits = _phone_digits(match.group())
        if match.group().startswith("00"):
            digits = digits[2:]
        if 8 <= len(digits) <= 15:
            taken.append((match.start(), match.end()))
            yield Finding(ContentKind.PHONE, match.start(), match.end(), match.group())
    for match in _PHONE_NATIONAL.finditer(text):
        if any(s < match.end() and match.start() < e for s, e in taken):
            continue
        value = match.group()
        digits = _phone_digits(value)
        if not 9 <= len(digits) <= 12 or _DATE_LIKE.match(value):
            continue
        groups = re.split(r"[ .()-]+", value.strip("()"))
        cued = _PHONE_CUES.search(text[max(0, match.start() - 40) : match.start()]) is not None
        trunk = digits.startswith("0") and len(digits) in (10, 11) and len(groups) >= 2
        north_american = (
            len(digits) == 10
            and re.fullmatch(r"\(?[2-9]\d\d\)?[ .-]?[2-9]\d\d[ .-]\d{4}", value) is not None
        )
        if trunk or north_american or (cued and len(digits) in (9, 10, 11)):
            yield Finding(ContentKind.PHONE, match.start(), match.end(), value)


_CARD = re.compile(r"(?<![\w.-])(?:\d[ -]?){12,18}\d(?![\w-]|\.\d)")
# Issuer prefixes (IIN ranges) of Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay,
# Maestro: a Luhn-valid number without one is an ordinary long number.
_CARD_PREFIX = re.compile(r"^(?:4|5[1-5]|2[2-7]|3[47]|6011|64[4-9]|65|35|30[0-5]|36|38|62|67)")


def find_cards(text: str) -> Iterator[Finding]:
    for match in _CARD.finditer(text):
        value = match.group()
        digits = value.replace(" ", "").replace("-", "")
        groups = re.split(r"[ -]", value)
        if len(groups) > 1 and not all(3 <= len(g) <= 6 for g in groups):
            continue
        if 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and luhn_valid(digits):
            yield Finding(ContentKind.CARD, match.start(), match.end(), value)


_SSN = re.compile(r"(?<![\w-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\w-])")
_SSN_CUE = re.compile(r"(?i)\b(?:ssn|social security|soc\.? sec\.?|ss#|ss no)")


def find_ssns(text: str) -> Iterator[Finding]:
    """US SSNs ``123-45-6789`` (and ``123 45 6789`` after a cue word), with the
    SSA's rules: no area 000, 666 or 900-999, no group 00, no serial 0000."""
    for match in _SSN.finditer(text):
        area, sep, group, serial = match.groups()
        if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
            continue
        if sep == " " and not _SSN_CUE.search(text[max(0, match.start() - 40) : match.start()]):
            continue
        yield Finding(ContentKind.SSN, match.start(), match.end(), match.group())


_NINO = re.compile(
    r"(?<![\w-])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z])\s?(\d{2})\s?(\d{2})\s?(\d{2})\s?([A-D])(?![\w-])",
    re.IGNORECASE,
)
_NINO_INVALID_PREFIXES = frozenset({"BG", "GB", "NK", "KN", "TN", "NT", "ZZ"})


def find_ninos(text: str) -> Iterator[Finding]:
    """UK national insurance numbers (``QQ 12 34 56 C``; HMRC's prefix rules)."""
    for match in _NINO.finditer(text):
        if match.group(1).upper() in _NINO_INVALID_PREFIXES:
            continue
        yield Finding(ContentKind.NINO, match.start(), match.end(), match.group())


_IBAN = re.compile(r"(?<![\w-])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![\w-])")


def find_ibans(text: str) -> Iterator[Finding]:
    for match in _IBAN.finditer(text):
        value = match.group()
        if iban_valid(value):
            yield Finding(ContentKind.IBAN, match.start(), match.end(), value)


_STREET_TYPES = (
    r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Place|Pl|"
    r"Way|Terrace|Terr|Close|Crescent|Cres|Square|Sq|Parkway|Pkwy|Highway|Hwy|Circle|Cir|"
    r"Row|Mews|Gardens|Grove|Hill|Walk|Trail|Alley|Plaza|Broadway"
)
_PLACE_TAIL = (
    r"(?:,?\s*(?:Apt|Apartment|Suite|Ste|Unit|Flat|Floor|Fl)\.?\s*#?\w{1,5})?"
    r"(?:,\s*[A-Z][a-z]+(?:[ -][A-Z][a-z]+){0,2})?"
    r"(?:,?\s*[A-Z]{2}\s+\d{5}(?:-\d{4})?)?"
    r"(?:,?\s*[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2})?"
)
_ADDRESS_EN = re.compile(
    r"(?<![\w.-])\d{1,5}[A-Za-z]?,?\s+(?:[A-Z][a-zA-Z'.-]*\s+){1,4}"
    rf"(?:{_STREET_TYPES})\b\.?" + _PLACE_TAIL
)
_ADDRESS_DE = re.compile(
    # No "-ring": English gerunds ("Monitoring 1", "Scoring 92") end so too.
    r"\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|damm)"
    r"\s+\d{1,4}[a-z]?\b(?:,\s*\d{5}\s+[A-ZÄÖÜ][a-zäöüß]+)?"
)
_ADDRESS_FR = re.compile(
    r"(?<![\w.-])\d{1,4}(?:\s?(?:bis|ter))?,?\s+(?:rue|avenue|av\.|boulevard|bd|place|"
    r"chemin|allée|impasse|quai|cours)\s+(?:(?:de|du|des|la|le|l'|d')\s*)*"
    r"[A-ZÉÈ][\w'éèêàçô-]+(?:\s+[A-ZÉÈ][\w'éèêàçô-]+){0,3}"
    r"(?:,\s*\d{5}\s+[A-ZÉÈ][\w'éèêàçô-]+)?",
    re.IGNORECASE,
)


def find_addresses(text: str) -> Iterator[Finding]:
    """Street addresses: a house number, a capitalised street name and a street type
    (``221B Baker Street, London NW1 6XE``, ``1600 Pennsylvania Avenue NW``), German
    (``Hauptstraße 12, 10115 Berlin``) and French (``12 rue de la Paix``) orders."""
    for pattern in (_ADDRESS_EN, _ADDRESS_DE, _ADDRESS_FR):
        for match in pattern.finditer(text):
            value = match.group().rstrip(" ,")
            yield Finding(ContentKind.ADDRESS, match.start(), match.start() + len(value), value)


_IPV4 = re.compile(
    r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
    r"(?![\w]|\.\d)"
)
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
_VERSION_CUE = re.compile(r"(?i)\b(?:v|version|release|build|ver\.?|firmware|fw)\s*$")


def find_ips(text: str) -> Iterator[Finding]:
    """IPv4 and IPv6 addresses, except unspecified and loopback ones (``0.0.0.0``,
    ``127.0.0.1``, ``::1``) and version numbers (``v1.2.3.4``, "version 4.0.1.2")."""
    for match in _IPV4.finditer(text):
        if _VERSION_CUE.search(text[max(0, match.start() - 10) : match.start()]):
            continue
        address = ipaddress.ip_address(match.group())
        if not (address.is_loopback or address.is_unspecified):
            yield Finding(ContentKind.IP, match.start(), match.end(), match.group())
    for match in _IPV6.finditer(text):
        value = match.group()
        if sum(1 for part in value.split(":") if part) < 3:
            continue
        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            continue
        if not (address.is_loopback or address.is_unspecified):
            yield Finding(ContentKind.IP, match.start(), match.end(), value)


PII_DETECTORS: tuple[Callable[[str], Iterator[Finding]], ...] = (
    find_emails,
    find_cards,
    find_ibans,
    find_ssns,
    find_ninos,
    find_ips,
    find_phones,
    find_addresses,
)
"""In order of precedence: where two findings overlap, the earlier detector's wins."""
