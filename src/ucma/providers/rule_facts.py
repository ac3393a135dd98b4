"""The offline fact extractor: English statements to triples by rules, no model.

``RuleFactExtractor.claims`` reads a text sentence by sentence (clauses joined
by "and"/"but" are read apart; a clause that starts with a verb keeps the
subject of the one before) and returns ``Claim`` records:

    "My X is Y", "Dana's X is (on/in/at) Y"     -> (owner, X, Y)         confidence 0.8
    "I prefer / like / love Y"                  -> (speaker, prefers ..., Y)
    "X works at / for Y", "X joined Acme",
    "X started working at Y", "X has worked at Y" -> (X, works_at, Y)
    "X lives in Y", "X moved / relocated to Berlin" -> (X, lives_in, Y)
    "X is married to Y", "X is 34 years old"    -> (X, married_to, Y), (X, age, 34)
    "X is building / using Y"                   -> (X, building, Y)     (any "is <verb>ing")
    "X is set to Y", "X wants to Y", "X uses / needs / ... Y"
    "X is (a) Y", "X is in / at / on Y"         -> (X, is, Y), (X, is_in, Y) ...
    dated events: "On 3 May 2024 X visited Y"   -> (X, visited, Y), valid_from the date

and two kinds of change:

- a claim is a ``change`` when its text says the value is new: "now", "these
  days", "as of <date>", "moved to", "switched", "joined", "no longer",
  "anymore", "instead", "from now on" ... (``CHANGE_CUE``);
- a claim is ``negated`` when it says a value stopped holding: "X no longer
  likes Y", "X doesn't live in Y anymore", "X left / quit Y" (the employer).

Objects are cleaned of what qualifies rather than names the value: a trailing
role ("as a firmware engineer"), duration ("for 5 years"), start ("since
2020"), time adverb ("now", "these days", "last week") or "instead ...", and a
leading article or "now". "Acme Robotics as a firmware engineer" is
"Acme Robotics": one employer, whatever the role.

Subjects are proper names, possessive owners or "the/our ..." noun phrases;
"I"/"my" mean the speaker ("user" for the generic sources) and "he/she/they",
"his/her/their" the last name mentioned in the same text. An object "A with
B" also yields (A, uses, B). Rule facts are ``inferred``, confidence 0.6
unless stated above. ``extract`` (the ``FactExtractor`` protocol) returns the
facts of the claims that are not negated.
"""

from __future__ import annotations

import calendar
import dataclasses
import re
from dataclasses import dataclass
from datetime import UTC, datetime

from ucma.people import named_relations, related_name, without_relations
from ucma.providers.base import ExtractedFact

__all__ = [
    "CHANGE_CUE",
    "GENERIC_SPEAKERS",
    "Claim",
    "RuleFactExtractor",
    "has_change_cue",
    "is_role",
]

GENERIC_SPEAKERS = frozenset({"user", "system", "assistant", "tool_result", "environment", "tool"})
"""Sources that are roles, not people: their "I" is the user."""


def is_role(source: str) -> bool:
    """Whether the source ``source`` (any case, spaces around) is a role of
    ``GENERIC_SPEAKERS``, not a person."""
    return source.strip().lower() in GENERIC_SPEAKERS


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(r",?\s+(?:and|but)\s+(?=(?:I|[Hh]e|[Ss]he|[Tt]hey|[Ww]e|[Mm]y)\b)")
_CONTINUED_VERBS = (
    "works?|worked|lives?|lived|moved|relocated|joined|left|quit|switched|started|likes?|"
    "loves?|prefers?|owns?|has|uses?|is|was|no longer|now"
)
# "Dana quit Acme and joined Globex": the second clause is Dana's too.
_CONTINUATION = re.compile(rf",?\s+(?:and|but)\s+(?:then\s+)?(?=(?:{_CONTINUED_VERBS})\b)")
_LABEL = re.compile(r"^[A-Z][\w -]{0,20}:\s+")
_LEAD_IN = re.compile(
    r"^(?:(?:please\s+)?(?:remember|note|recall)(?:\s+that)?|don'?t\s+(?:let\s+me\s+)?forget(?:\s+that)?|"
    r"do\s+not\s+forget(?:\s+that)?|fyi|btw|by\s+the\s+way|just\s+so\s+you\s+know|"
    r"these\s+days|nowadays|now|currently|as\s+of\s+(?:now|today)|from\s+now\s+on|"
    r"update|heads\s+up|as\s+far\s+as\s+I\s+know|apparently|[a-z]+-wise)[,:]?\s+",
    re.IGNORECASE,
)
CHANGE_CUE = re.compile(
    r"\b(?:now|no\s+longer|any\s*more|these\s+days|nowadays|as\s+of|switched|switching|"
    r"moved|moving|relocated|changed|instead|from\s+now\s+on|joined|left|quit|became|"
    r"started|starting|stopped|not\s+any\s+longer|new|hired|"
    r"(?:took|accepted)\s+(?:an?\s+|the\s+)?(?:new\s+)?(?:job\s+)?offer)\b",
    re.IGNORECASE,
)
"""Words by which a statement says a value changed (a later value replaces an earlier)."""

# A capitalised word that is a negated verb ("Don't", "Can't") names nobody.
_NAME = r"(?![A-Za-z]+n['’]t\b)[A-Z][\w'-]*(?:\s+(?:[A-Z][\w'-]*|of|de|van|von))*"
_OWNER = r"(?P<owner>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*|[Hh]is|[Hh]er|[Tt]heir)"
_PHRASE = r"(?:[Tt]he|[Oo]ur|[Tt]his|[Tt]hat)\s+[\w-]+(?:\s+[\w-]+){0,3}?"
_SUBJECT = rf"(?P<subject>{_PHRASE}|{_NAME}|I|[Hh]e|[Ss]he|[Tt]hey|[Ww]e)"
_OBJECT = r"(?P<object>[^.;!?]+?)"
_END = r"\s*(?:[.;!?]|,?\s+(?:but|because|and then|so|since|which|while|although)\b|$)"
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATES = (
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{2})-(?P<day>\d{2})\b"),
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<year>\d{{4}}))?\b",
               re.IGNORECASE),
    re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:,?\s+(?P<year>\d{{4}}))?\b",
               re.IGNORECASE),
    # A year alone dates a statement only after a word that says so: "as of 2026", "in 2025".
    re.compile(r"\b(?:as\s+of|in|from|starting(?:\s+in)?)\s+(?P<year>(?:19|20)\d{2})\b(?!\s*[-/:%])",
               re.IGNORECASE),
)  # fmt: skip
_DATE_LEAD = re.compile(
    r"(?:,\s*)?\b(?:on|in|since|by|as\s+of|from|starting(?:\s+(?:on|in|from))?|effective)\s*$",
    re.IGNORECASE,
)
_KNOWN_VERBS = (
    "uses|use|needs|need|owns|own|has|have|speaks|speak|studies|study|manages|manage|"
    "leads|lead|builds|build|maintains|maintain|visited|founded|teaches|teach|"
    "drives|drive|plays|play|runs|run|supports|support|depends on|relies on|reports to|"
    "likes|loves|enjoys|prefers|hates|dislikes"
)
_PREFERENCE_VERBS = {
    "prefer": "prefers", "like": "likes", "love": "loves", "enjoy": "enjoys",
    "hate": "hates", "dislike": "dislikes", "use": "uses", "want": "wants",
}  # fmt: skip
_PARTICLES = frozenset({"to", "in", "from", "at", "with", "for", "on", "into", "by", "as"})
_STOP_OBJECTS = frozenset({"it", "this", "that", "there", "here", "them", "him", "her", "so"})
# Adverbs between a subject and its verb that say when, not what: "Uma now works at ...".
_INNER_ADVERB = re.compile(
    r"(?<=\s)(?:now|currently|still|also|recently|just|actually|officially|finally)\s+(?=[a-z])"
)
_TRAILING = re.compile(
    r"\s+(?:as\s+(?:an?|the|its|her|his|their|our|my|head|lead|chief|senior|junior)\b"
    r"|as\s+of\b|since\b|starting\b|until\b|from\s+now\s+on\b|instead\b|now\b|any\s*more\b"
    r"|these\s+days\b|nowadays\b|currently\b|recently\b|again\b|yesterday\b|today\b"
    r"|(?:last|this|next)\s+(?:week|month|year|spring|summer|autumn|fall|winter)\b"
    r"|for\s+(?:about\s+|over\s+|almost\s+|nearly\s+|the\s+(?:last|past)\s+)?"
    r"(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|several|many|a\s+few|some)"
    r"\s+(?:years?|months?|weeks?|days?|decades?)\b"
    r"|in\s+(?:19|20)\d{2}\b"
    r"|in\s+(?:the|a|an|her|his|their|my|our)\s+[\w-]+\s+(?:team|department|division|group)\b).*$",
    re.IGNORECASE,
)
_LEADING = re.compile(r"^(?:(?:now|currently|still|also|just|the|an?)\s+)+", re.IGNORECASE)
_PLACE_PREPOSITION = re.compile(r"^(?:on|in|at)\s+(?=\S)", re.IGNORECASE)

_PARTNERED = r"single|married|engaged|divorced|widowed|separated"
_DIETS = (
    r"vegan|vegetarian|pescatarian|pescetarian|keto|paleo|gluten[- ]free|dairy[- ]free|"
    r"lactose[- ]free|halal|kosher|low[- ]carb|flexitarian|plant[- ]based|carnivore"
)
# When a status began, after it: "went vegan recently", "got married last year".
_WHEN = (
    r"(?:\s+(?:recently|lately|now|again|these\s+days|nowadays|"
    r"(?:last|this)\s+(?:week|month|year|spring|summer|autumn|fall|winter)))*"
)
_STATUS_PREDICATES = {"status": "relationship_status", "diet": "diet"}

# "is", or a comma before a calendar day: "Bruno's birthday, January 9".
_CALENDAR_DAY = "|".join(sorted(_MONTHS, key=len, reverse=True))
_IS = (
    r"(?:\s+(?:is|are|was|has\s+been)\s+|,\s+(?=(?:on\s+)?"
    rf"(?i:(?:{_CALENDAR_DAY})\.?\s+\d{{1,2}}|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_CALENDAR_DAY}))\b))"
)
_ATTRIBUTE_RULES: tuple[tuple[str, re.Pattern[str], float], ...] = (
    ("my", re.compile(
        rf"\b[Mm]y\s+(?P<what>[\w' -]{{1,40}}?){_IS}"
        rf"(?:(?:now|still|currently|called|named)\s+)*{_OBJECT}{_END}"), 0.8),
    ("poss", re.compile(
        rf"^{_OWNER}['’]s?\s+(?P<what>[\w -]{{1,40}}?){_IS}"
        rf"(?:(?:now|still|currently|called|named)\s+)*{_OBJECT}{_END}"), 0.8),
)  # fmt: skip
_NEGATIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("no_longer", re.compile(
        rf"^{_SUBJECT}\s+(?:(?:no\s+longer|not\s+any\s+longer)\s+)(?P<verb>[a-z]+)"
        rf"(?:\s+(?P<p>at|for|in|with))?\s+{_OBJECT}{_END}")),
    ("anymore", re.compile(
        rf"^{_SUBJECT}\s+(?:does\s*n[o']?t|do\s*n[o']?t|did\s*n[o']?t)\s+(?P<verb>[a-z]+)"
        rf"(?:\s+(?P<p>at|for|in|with))?\s+{_OBJECT}\s+(?:any\s*more|any\s+longer)\b")),
    ("left", re.compile(
        rf"^{_SUBJECT}\s+(?:left|quit|resigned\s+from|was\s+laid\s+off\s+from)\s+"
        rf"(?:(?:her|his|their|my|the|a)\s+(?:job|position|role)\s+(?:at|with)\s+)?{_OBJECT}{_END}")),
)  # fmt: skip
_RULES: tuple[tuple[str, re.Pattern[str], float], ...] = (
    ("pref", re.compile(
        r"\bI\s+(?:really\s+|strongly\s+|also\s+|do\s+|always\s+)?"
        rf"(?P<verb>prefer|like|love|enjoy|hate|dislike)\s+{_OBJECT}{_END}"), 0.8),
    ("works", re.compile(
        rf"^{_SUBJECT}\s+(?:works?|worked|(?:is|am|are)\s+working|has\s+(?:been\s+)?work(?:ed|ing)|"
        r"started\s+(?:working|a\s+(?:new\s+)?job)|began\s+working|took\s+a\s+(?:new\s+)?job|"
        r"(?:got|has|had|took)\s+a\s+(?:new\s+)?job|is\s+employed|is\s+now\s+employed|"
        r"(?:is|was)\s+an?\s+(?!(?:regular|member|guest|student|patient|customer|fan|visitor)\b)"
        r"[a-z]+(?:\s+[a-z]+)?(?:\s+over)?(?=\s+at\b))\s+"
        rf"(?P<p>at|for|by|with)\s+{_OBJECT}{_END}"), 0.6),
    ("joined", re.compile(rf"^{_SUBJECT}\s+(?:has\s+)?joined\s+(?P<object>[A-Z][^.;!?]*?){_END}"),
     0.6),
    # A new employer: "Sam got hired by Saltmarsh Games", "Sam took an offer from Kestrel".
    ("hired", re.compile(
        rf"^{_SUBJECT}\s+(?:(?:just\s+)?got|was|were|has\s+been|have\s+been)\s+hired\s+"
        r"(?:by|at)\s+(?P<object>[A-Z][^.;!?]*?)" + _END), 0.6),
    ("offer", re.compile(
        rf"^{_SUBJECT}\s+(?:took|accepted|(?:has|have)\s+(?:taken|accepted))\s+"
        r"(?:an?\s+|the\s+)?(?:new\s+)?(?:job\s+)?offer\s+(?:from|at|with)\s+"
        r"(?P<object>[A-Z][^.;!?]*?)" + _END), 0.6),
    ("lives", re.compile(
        rf"^{_SUBJECT}(?:\s+(?:lives?|lived|(?:is|am|are)\s+living|has\s+lived|resides?|"
        rf"(?:(?:is|are|am|(?:has|have)\s+been|been)\s+|(?<=['’]m\s))based|"
        rf"has\s+an?\s+(?:place|home|flat|house))|['’]m\s+living)"
        rf"\s+in\s+{_OBJECT}{_END}"),
     0.6),
    # "Unpacking boxes in our new place in Krakow": the speaker's home changed.
    ("new_home", re.compile(
        r"\b(?:[Oo]ur|[Mm]y)\s+new\s+(?:place|home|flat|house|apartment)\s+in\s+"
        r"(?P<object>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"), 0.6),
    ("moved", re.compile(
        rf"^{_SUBJECT}\s+(?:has\s+|just\s+)*(?:moved|relocated|is\s+moving)\s+(?:back\s+)?to\s+"
        rf"(?P<object>[A-Z][^.;!?]*?){_END}"), 0.6),
    ("married", re.compile(
        rf"^{_SUBJECT}\s+(?:is|am|got|was)\s+(?P<rel>married|engaged)\s+to\s+{_OBJECT}{_END}"),
     0.6),
    # One of a few words for how someone is partnered, or what they eat: a status
    # the person has one of at a time ("Mateo is divorced", "Felix went vegan").
    ("status", re.compile(
        rf"^{_SUBJECT}(?:\s+(?:is|am|are|was)|['’]m|\s+(?P<changed>got|became))\s+"
        rf"(?P<retired>no\s+longer\s+(?:{_PARTNERED}),?\s+(?:and\s+)?)?"
        rf"(?:now\s+|officially\s+|recently\s+|finally\s+)?(?P<object>{_PARTNERED})"
        rf"(?!\s+to\b){_WHEN}{_END}"), 0.6),
    ("diet", re.compile(
        rf"^{_SUBJECT}(?:(?:\s+(?:is|am|are)|['’]m)\s+(?:now\s+|strictly\s+|fully\s+)?"
        r"(?:on\s+an?\s+)?|\s+(?:eats?|follows?|keeps?)\s+(?:a\s+|an\s+|strictly\s+|only\s+)?|"
        rf"\s+(?P<changed>went|has\s+gone|became|switched\s+to)\s+(?:a\s+)?)(?P<object>{_DIETS})"
        rf"(?:\s+diet)?{_WHEN}{_END}"), 0.6),
    ("age", re.compile(
        rf"^{_SUBJECT}\s+(?:is|turned)\s+(?P<object>\d{{1,3}})(?:\s+years?\s+old)?{_END}"), 0.6),
    ("set", re.compile(rf"^{_SUBJECT}\s+(?:is|are|was|were)\s+set\s+to\s+{_OBJECT}{_END}"), 0.6),
    ("wants", re.compile(rf"^{_SUBJECT}\s+(?:wants?|wanted|plans?|needs?)\s+to\s+{_OBJECT}{_END}"),
     0.6),
    ("ing", re.compile(
        rf"^{_SUBJECT}\s+(?:is|am|are|was|were)\s+(?P<verb>\w+ing)\s+{_OBJECT}{_END}"),
     0.6),
    ("verb", re.compile(rf"^{_SUBJECT}\s+(?P<verb>{_KNOWN_VERBS})\s+{_OBJECT}{_END}"), 0.6),
    ("is", re.compile(
        rf"^{_SUBJECT}\s+(?P<verb>is|am|are|was)\s+(?P<neg>not\s+)?(?P<p>in|at|on\s+)?"
        rf"(?:an?\s+|the\s+)?{_OBJECT}{_END}"), 0.6),
)  # fmt: skip
_GENERIC_EVENT = re.compile(
    rf"^{_SUBJECT}\s+(?P<verb>[a-z]+)(?:\s+(?P<p>{'|'.join(sorted(_PARTICLES))}))?\s+{_OBJECT}{_END}"
)
_VERB_PREDICATES = {
    ("work", "at"): "works_at", ("work", "for"): "works_at", ("works", "at"): "works_at",
    ("works", "for"): "works_at", ("live", "in"): "lives_in", ("lives", "in"): "lives_in",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Claim:
    """One statement found in text: its fact, and what it says about change.

    ``change``: the text marks the value as new (``CHANGE_CUE``), so it replaces
    an earlier value of a one-value predicate without asking. ``negated``: the
    text says the value no longer holds; the fact is what stopped being true.
    """

    fact: ExtractedFact
    change: bool = False
    negated: bool = False


def has_change_cue(text: str) -> bool:
    """Whether ``text`` says that something changed ("now", "moved", "no longer" ...)."""
    return CHANGE_CUE.search(text) is not None


class RuleFactExtractor:
    """The offline ``FactExtractor``: regular expressions over sentences."""

    async def extract_facts(
        self, content: str, *, speaker: str = "user", reference_time: float | None = None
    ) -> list[ExtractedFact]:
        return self.extract(content, speaker=speaker, reference_time=reference_time)

    def extract(
        self, content: str, *, speaker: str = "user", reference_time: float | None = None
    ) -> list[ExtractedFact]:
        """Synchronous form of ``extract_facts`` (pure): the facts of the claims
        that hold (negated claims say what stopped holding, so are left out)."""
        claims = self.claims(content, speaker=speaker, reference_time=reference_time)
        return [c.fact for c in claims if not c.negated]

    def claims(
        self, content: str, *, speaker: str = "user", reference_time: float | None = None
    ) -> list[Claim]:
        """Every claim of ``content``, each triple once (pure: same input, same output)."""
        me = "user" if is_role(speaker) else speaker.strip()
        found: dict[tuple[str, str, str, bool], Claim] = {}
        last_name: str | None = None
        for raw in _SENTENCE.split(content):
            change = has_change_cue(raw)
            sentence = _LEAD_IN.sub("", _LABEL.sub("", raw.strip()))
            # "My best friend Maya is an engineer at Acme" is about "my best friend
            # Maya", not a "best friend Maya" attribute of the speaker: the rules
            # read the bare name, and the claim names her as the text does.
            relations = named_relations(sentence)
            sentence = without_relations(sentence)
            subject_text: str | None = None
            for number, part in enumerate(_clauses(sentence)):
                clause = _LEAD_IN.sub("", part.strip())
                if not clause:
                    continue
                if number and subject_text and clause[:1].islower() and not _starts_subject(clause):
                    clause = f"{subject_text} {clause}"
                for found_claim in self._clause_claims(
                    clause, me, last_name, reference_time, change
                ):
                    claim = _named_as_related(found_claim, relations)
                    fact = claim.fact
                    key = (fact.subject.lower(), fact.predicate.lower(), fact.object.lower())
                    found.setdefault((*key, claim.negated), claim)
                head = re.match(_SUBJECT, clause)
                if head and subject_text is None:
                    subject_text = head.group("subject")
                name = re.match(_NAME, clause)
                if name and name.group(0) not in {"I", "The", "This", "That", "Our", "My"}:
                    owner = re.match(_OWNER + r"['’]s\b", clause)
                    last_name = owner.group("owner") if owner else name.group(0)
        return list(found.values())

    def _clause_claims(
        self,
        clause: str,
        me: str,
        last_name: str | None,
        reference_time: float | None,
        change: bool,
    ) -> list[Claim]:
        when, dateless = _take_date(clause, reference_time)
        plain = _INNER_ADVERB.sub("", dateless)
        # An attribute's value may itself be a date ("Dana's birthday is on March 14").
        for name, pattern, confidence in _ATTRIBUTE_RULES:
            match = pattern.search(_INNER_ADVERB.sub("", clause))
            if match is None:
                continue
            owner = me if name == "my" else _resolve(match.group("owner"), me, last_name)
            obj = _clean_object(_PLACE_PREPOSITION.sub("", match.group("object")))
            # "My new favourite cuisine is Sichuan": the attribute is the favourite
            # cuisine, and "new" says it changed.
            words = match.group("what").lower().split()
            if len(words) > 1 and words[0] == "new":
                words, change = words[1:], True
            what = "_".join(words)
            if owner and obj and what:
                dated = when if obj.lower() in dateless.lower() else None
                return [
                    Claim(f, change)
                    for f in _expand(owner, what, obj, confidence, dated, attribute=True)
                ]
        for name, pattern in _NEGATIONS:
            match = pattern.search(plain)
            if match is not None:
                triple = _negated(name, match, me, last_name)
                if triple is not None:
                    return [Claim(_fact(*triple, 0.6, when), True, negated=True)]
        for name, pattern, confidence in _RULES:
            match = pattern.search(plain)
            if match is None:
                continue
            triple = _triple(name, match, me, last_name)
            if triple is not None:
                # "got engaged", "went vegan", "no longer single, engaged": the
                # wording itself says it is new.
                said = match.groupdict()
                changed = change or bool(said.get("changed") or said.get("retired"))
                return [Claim(f, changed) for f in _expand(*triple, confidence, when)]
        if when is not None:
            match = _GENERIC_EVENT.search(plain)
            if match is not None:
                subject = _resolve(match.group("subject"), me, last_name)
                verb = match.group("verb") + (f"_{match.group('p')}" if match.group("p") else "")
                obj = _clean_object(match.group("object"))
                if subject and obj:
                    return [Claim(f, change) for f in _expand(subject, verb, obj, 0.6, when)]
        return []


def _named_as_related(claim: Claim, relations: dict[str, str]) -> Claim:
    """``claim`` about a person its sentence named after a relation word, recorded
    as that person with the relation ("Dana (my cousin)"), its text as said ("my
    cousin Dana is ..."): a bare "Dana" is her only when the scope knows no other
    Dana (``supersession.identify``), and a "Dana Moreau" is someone else."""
    fact = claim.fact
    phrase = relations.get(fact.subject)
    if phrase is None:
        return claim
    relation = phrase[: -len(fact.subject)].strip()
    content = fact.content
    if content.startswith(fact.subject):
        content = phrase + content[len(fact.subject) :]
    renamed = dataclasses.replace(
        fact, subject=related_name(fact.subject, relation), content=content
    )
    return dataclasses.replace(claim, fact=renamed)


def _clauses(sentence: str) -> list[str]:
    parts: list[str] = []
    for piece in _CLAUSE.split(sentence):
        parts.extend(_CONTINUATION.split(piece))
    return parts


def _starts_subject(clause: str) -> bool:
    return re.match(r"(?:I|[Hh]e|[Ss]he|[Tt]hey|[Ww]e|[Mm]y|[Tt]he|[Oo]ur)\b", clause) is not None


def _third_person(verb: str) -> str:
    verb = verb.lower()
    if verb in _PREFERENCE_VERBS:
        return _PREFERENCE_VERBS[verb]
    if verb.endswith("s") or verb.endswith("ed"):
        return verb
    if verb.endswith(("sh", "ch", "x", "o")):
        return verb + "es"
    return verb + "s"


def _negated(
    rule: str, match: re.Match[str], me: str, last_name: str | None
) -> tuple[str, str, str] | None:
    subject = _resolve(match.group("subject"), me, last_name)
    obj = _clean_object(match.group("object"))
    if subject is None or not obj:
        return None
    if rule == "left":
        return subject, "works_at", obj
    verb = match.group("verb").lower()
    particle = (match.group("p") or "").strip().lower()
    predicate = _VERB_PREDICATES.get((verb, particle))
    if predicate is None:
        predicate = _third_person(verb) + (f"_{particle}" if particle else "")
    return subject, predicate, obj


def _triple(
    rule: str, match: re.Match[str], me: str, last_name: str | None
) -> tuple[str, str, str] | None:
    obj = _clean_object(match.group("object"))
    if not obj:
        return None
    if rule == "pref":
        return me, _PREFERENCE_VERBS[match.group("verb").lower()], obj
    if rule == "new_home":
        return me, "lives_in", obj
    subject = _resolve(match.group("subject"), me, last_name)
    if subject is None:
        return None
    if rule in ("works", "joined", "hired", "offer"):
        return subject, "works_at", obj
    if rule in ("lives", "moved"):
        return subject, "lives_in", obj
    if rule == "married":
        return subject, f"{match.group('rel').lower()}_to", obj
    if rule in _STATUS_PREDICATES:
        return subject, _STATUS_PREDICATES[rule], obj.lower()
    if rule == "age":
        return subject, "age", obj
    if rule == "set":
        return subject, "is_set_to", obj
    if rule == "wants":
        return subject, "wants_to", obj
    if rule == "ing":
        return subject, match.group("verb").lower(), obj
    if rule == "verb":
        return subject, "_".join(match.group("verb").lower().split()), obj
    verb = "is_not" if match.group("neg") else "is"
    particle = (match.group("p") or "").strip().lower()
    return subject, f"{verb}_{particle}" if particle else verb, obj


def _expand(
    subject: str,
    predicate: str,
    obj: str,
    confidence: float,
    when: float | None,
    attribute: bool = False,
) -> list[ExtractedFact]:
    """The triple, plus (A, uses, B) when the object reads "A with B"."""
    head, sep, tail = obj.partition(" with ")
    facts = [_fact(subject, predicate, head if sep else obj, confidence, when, attribute)]
    if sep and head.strip() and tail.strip():
        facts.append(_fact(head.strip(), "uses", _clean_object(tail), confidence - 0.1, when))
    return facts


def _fact(
    subject: str,
    predicate: str,
    obj: str,
    confidence: float,
    when: float | None,
    attribute: bool = False,
) -> ExtractedFact:
    if attribute:
        text = f"{subject}'s {predicate.replace('_', ' ')} is {obj}"
    elif predicate.endswith("ing") and "_" not in predicate:
        text = f"{subject} is {predicate} {obj}"
    else:
        text = f"{subject} {predicate.replace('_', ' ')} {obj}"
    return ExtractedFact(subject, predicate, obj, text, round(confidence, 2), valid_from=when)


def _resolve(subject: str, me: str, last_name: str | None) -> str | None:
    lowered = re.sub(r"['’](?:ve|m|d|ll)$", "", subject.lower())  # "I've been based in ..."
    if lowered in {"i", "we"}:
        return me
    if lowered in {"he", "she", "they", "his", "her", "their"}:
        return last_name
    words = subject.split()
    if words[0].lower() in {"the", "this", "that"}:
        words = words[1:]
    elif words[0].lower() == "our":
        words = [me, *words[1:]] if me != "user" else words[1:]
    return " ".join(words) or None


def _clean_object(text: str) -> str:
    """The value an object names: qualifiers, time adverbs and articles cut off."""
    text = _TRAILING.sub("", text.strip(" ,:\"'"))
    text = _LEADING.sub("", text.strip(" ,:\"'"))
    words = text.split()
    if not words or (len(words) == 1 and words[0].lower() in _STOP_OBJECTS):
        return ""
    return " ".join(words[:12]).rstrip(",")


def _take_date(sentence: str, reference_time: float | None) -> tuple[float | None, str]:
    """The date a sentence mentions (UTC midnight; a year alone is its 1 January)
    and the sentence without it."""
    for pattern in _DATES:
        match = pattern.search(sentence)
        if match is None:
            continue
        groups = match.groupdict()
        if groups.get("mnum"):
            month = int(groups["mnum"])
        elif groups.get("month"):
            month = _MONTHS[groups["month"].lower()]
        else:
            month = 1
        year = groups.get("year")
        if year is None:
            if reference_time is None:
                continue
            year = datetime.fromtimestamp(reference_time, UTC).year
        try:
            when = datetime(int(year), month, int(groups.get("day") or 1), tzinfo=UTC).timestamp()
        except ValueError:
            continue
        start, end = match.span()
        before = _DATE_LEAD.sub("", sentence[:start])
        rest = (before.rstrip() + " " + sentence[end:].lstrip(" ,")).strip()
        return when, rest[:1].upper() + rest[1:] if rest[:1].islower() and not before else rest
    return None, sentence
