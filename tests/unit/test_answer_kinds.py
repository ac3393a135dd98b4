"""What kind of answer a question asks for, and whether a text holds one."""

from __future__ import annotations

import pytest

from ucma.retrieval.answer_kinds import AnswerKind, asked_kind, offers


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When should I wish Omar many happy returns?", AnswerKind.TIME),
        ("What day of the week do I do yoga?", AnswerKind.WEEKDAY),
        ("When in the week is Mateo's salsa?", AnswerKind.WEEKDAY),
        ("Which weekday is the stand-up?", AnswerKind.WEEKDAY),
        ("Which day does Felix go to yoga?", AnswerKind.TIME),
        ("What time is the stand-up?", AnswerKind.TIME),
        ("How tall is Rafael?", AnswerKind.QUANTITY),
        ("How far does Greta jog?", AnswerKind.QUANTITY),
        ("How many kids does Melanie have?", AnswerKind.QUANTITY),
        ("How often does Caroline go to the beach?", AnswerKind.FREQUENCY),
        ("What shoe size does Sofia wear?", None),
        ("What does Alex drink at the café?", None),
        ("Where is Dana's home?", None),
        # The first question word asks; a later "when" joins a clause.
        ("Who supports Caroline when she has a bad day?", None),
        ("What does Maria feel when doing yoga?", None),
        # Counts of what happened are counted over episodes, not read in one.
        ("How many hikes has Joanna been on?", None),
        ("How many times has John hurt his ankle?", None),
        ("", None),
    ],
)
def test_the_kind_a_question_asks_for(question: str, kind: AnswerKind | None) -> None:
    assert asked_kind(question) is kind


@pytest.mark.parametrize(
    ("text", "kind", "held"),
    [
        ("Omar's birthday is on July 2.", AnswerKind.TIME, True),
        ("Wednesday evenings are for yoga.", AnswerKind.TIME, True),
        ("Dana prefers meetings in the morning.", AnswerKind.TIME, True),
        ("The launch moved to 2027-03-01.", AnswerKind.TIME, True),
        ("Had lunch with Omar near the river.", AnswerKind.TIME, False),
        ("Greta went from 10 km to 5 km on daily runs.", AnswerKind.QUANTITY, True),
        ("Melanie has three kids.", AnswerKind.QUANTITY, True),
        ("My mentor Bruno lives in Tallinn.", AnswerKind.QUANTITY, False),
        ("Rafael has pottery every Wednesday.", AnswerKind.QUANTITY, False),
        ("Rafael has pottery every Wednesday.", AnswerKind.FREQUENCY, True),
        ("We go to the beach on weekends.", AnswerKind.FREQUENCY, True),
        ("Rafael has pottery every Wednesday.", AnswerKind.WEEKDAY, True),
        ("Mateo's birthday is on October 23.", AnswerKind.WEEKDAY, False),
        # The numbers of a date or a clock time are no amount.
        ("Don't let me forget Dana's birthday, January 9.", AnswerKind.QUANTITY, False),
        ("The stand-up is at 9:30.", AnswerKind.QUANTITY, False),
        ("Greta runs 10 km on May 3.", AnswerKind.QUANTITY, True),
    ],
)
def test_whether_a_text_holds_an_answer_of_a_kind(text: str, kind: AnswerKind, held: bool) -> None:
    assert offers(text, kind) is held
