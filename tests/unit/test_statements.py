"""Whether a later statement replaces an older one, from the texts alone (issue 12)."""

from __future__ import annotations

from ucma.conflicts.statements import (
    Candidate,
    echoes,
    only_questions,
    only_requests,
    replacements,
    retired_words,
    same_frame,
    says_only,
    shared_people,
    states_lasting,
)
from ucma.people import (
    about_someone_else,
    asks_about_speaker,
    asks_what_listener_said,
    known_people,
    speaker_relations,
    speaks_to_listener,
    subjects_in,
    without_people,
    without_relations,
)

DAY = 86_400.0


def older(
    text: str,
    cosine: float,
    *,
    ident: str = "old",
    source: str = "user",
    at: float = 0.0,
    unnamed: float | None = None,
):
    return Candidate(ident, text, source, at, cosine, unnamed)


def replaced(text: str, *candidates: Candidate, at: float = 30 * DAY) -> list[str]:
    found, ambiguous = replacements(text, "user", at, candidates)
    assert not ambiguous
    return [r.candidate.id for r in found]


def test_people_are_read_from_relations_full_names_and_possessives() -> None:
    texts = [
        "My landlord Greta runs 10 km most days.",
        "Chris Tanaka runs 5 km most days.",
        "Aisha's cat goes by Mochi these days.",
        "Most of Dana Horvat's savings are in bonds.",
        "Flamenco is my favourite music.",
    ]
    assert known_people(texts) == {"Greta", "Chris Tanaka", "Aisha", "Dana Horvat"}
    # A question's first word is no first name ("Is Joost ...", "Does Lotte ...").
    questions = ["Is Joost allergic to anything?", "Does Lotte like school?"]
    assert known_people(questions) == set()


def test_names_with_accented_letters_are_people_too() -> None:
    texts = ["Tomás switched to eating keto.", "Zoë Brandt runs 5 km.", "Émile's cat is Miso."]
    assert known_people(texts) == {"Tomás", "Zoë Brandt", "Émile"}
    assert about_someone_else("Tomás uses a Pixel 8.")


def test_people_named_give_way_to_a_pronoun() -> None:
    names = ["Sofia", "Mei Lopez"]
    assert without_people("My landlord Sofia's dog is Clementine.", names) == (
        "their dog is Clementine."
    )
    assert without_people("What gives my landlord Sofia a rash?", names) == (
        "What gives they a rash?"
    )
    assert without_people("the colleague of mei lopez travels", names) == (
        "the colleague of they travels"
    )
    # Other people, and words that merely start with a name, stay.
    assert without_people("Sofiane met my sister Dana.", names) == "Sofiane met my sister Dana."
    assert without_people("Nothing here.", []) == "Nothing here."
    # A first name counts only as written: "Will" is a name, "will" is not.
    assert without_people("My roommate Will said he will call.", [], ["Will"]) == (
        "they said he will call."
    )
    # Nor where it starts another full name.
    assert without_people("Chris Okafor runs.", [], ["Chris"]) == "Chris Okafor runs."


def test_a_line_about_its_listener() -> None:
    assert speaks_to_listener("Congrats on the deals with Nike! You're killing it!")
    assert speaks_to_listener("I'm so happy for you.")
    assert not speaks_to_listener("I took this picture last summer, thanks for asking.")
    assert not speaks_to_listener("The race raised money for a shelter.")
    # Called by name and asked something, saying little of the speaker.
    assert speaks_to_listener("Wow, John! Congrats on the promotion! What's the story?")
    assert speaks_to_listener("The kids look so cute, Mel! I bet they bring joy. How are they?")
    assert not speaks_to_listener("Maria, since we talked, it's been tough. My old area flooded.")
    assert not speaks_to_listener("Hey Mel! I got back from my trip, my week was great. And yours?")
    assert not speaks_to_listener("How was the trip to Lisbon?")


def test_a_question_about_what_the_listener_said_before() -> None:
    assert asks_what_listener_said("How did you recommend handling the retries?")
    assert asks_what_listener_said("What approach did you recommend for my resume?")
    assert asks_what_listener_said("Which movie options you recommended did we pick?")
    assert asks_what_listener_said("What was your advice on the lease?")
    assert asks_what_listener_said("Can you summarize how my budget plan developed?")
    assert not asks_what_listener_said("How would you suggest I plan my editing week?")
    assert not asks_what_listener_said("Can you suggest some books for me?")
    assert not asks_what_listener_said("What do you recommend for a rainy day?")
    assert not asks_what_listener_said("Can you list the order in which I brought up X?")


def test_a_named_relation_is_its_own_subject() -> None:
    people = {"Yara Shah", "Priya"}
    assert subjects_in("Yara Shah's brother takes Dutch classes.", people) == {
        "Yara Shah's brother"
    }
    assert subjects_in("Yara Shah takes Dutch classes.", people) == {"Yara Shah"}
    assert subjects_in("My sister Priya is a nurse.", people) == {"Priya"}
    assert subjects_in("My sister is a nurse.", people) == {"my sister"}
    assert without_relations("My best friend Yusuf is engaged.") == "Yusuf is engaged."


def test_retired_values_are_the_words_after_a_farewell() -> None:
    assert retired_words("Greta went from 10 km to 5 km on daily runs.") == ["10"]
    assert retired_words("Took an offer from Copperleaf, so bye bye Ostrander Foods.") == [
        "ostrander"
    ]
    assert retired_words("My chess club is on Saturdays now, not Thursdays.") == ["thursday"]
    assert retired_words("I love hiking more than anything.") == []


def test_same_frame_needs_one_short_value_after_an_attribute_word() -> None:
    assert same_frame(
        "I'm learning Dutch on my commute.", "FYI: I'm learning Portuguese on my commute."
    )
    assert not same_frame("Bruno uses a Fairphone 5.", "Bruno has an iPhone 15.")
    # A value said first, then what it is of.
    assert same_frame(
        "Thursday evenings are for climbing.", "FYI: Tuesday evenings are for climbing."
    )
    assert not same_frame("Dana swims.", "Eve swims.")
    # The verb changed, not a value of the same attribute.
    assert not same_frame(
        "Olivia's sister works in Groningen.",
        "Olivia's sister rents a flat in Groningen.",
        frozenset({"olivia", "sister"}),
    )


def test_a_statement_that_names_the_old_value_retires_it() -> None:
    assert replaced(
        "Just signed a lease in Lisbon, goodbye Valencia.",
        older("Just signed a lease in Valencia, goodbye Montreal.", 0.83),
    ) == ["old"]
    assert replaced(
        "Greta went from 10 km to 5 km on daily runs.",
        older("My landlord Greta runs 10 km most days.", 0.65),
    ) == ["old"]
    # What was sold, given away or got rid of is no longer had.
    assert replaced(
        "I finally sold the Golf and bought a cargo bike.",
        older("I drive a 2015 Golf but it's falling apart.", 0.45),
    ) == ["old"]


def test_the_same_frame_with_a_new_value_days_later_replaces_it() -> None:
    old = older("I'm learning Dutch on my commute.", 0.64)
    assert replaced("FYI: I'm learning Portuguese on my commute.", old) == ["old"]
    # Said together, two values are a list, not a change.
    assert replaced("I'm learning Portuguese on my commute.", old, at=60.0) == []
    # A dated event is not a state that a later one replaces.
    event = older("I went to the gym on Monday.", 0.8)
    assert replaced("I went to the gym on Friday.", event) == []


def test_a_cued_change_replaces_the_closest_statement_of_the_same_attribute() -> None:
    assert replaced(
        "Aisha's cat goes by Mochi these days.",
        older("My boss Aisha has a cat called Bramble.", 0.52, ident="cat"),
        older("My boss Aisha runs 21 km most days.", 0.41, ident="run"),
    ) == ["cat"]


def test_compared_without_the_name_a_cued_change_needs_no_shared_word() -> None:
    phone = older("Greta uses an iPhone 13.", 0.56, ident="phone", unnamed=0.52)
    choir = older("Greta has choir every Saturday.", 0.45, ident="choir", unnamed=0.12)
    said = "My coworker Greta switched to a Moto Edge 40."
    assert replaced(said, phone, choir) == ["phone"]
    # Without the comparison the two share no attribute word: nothing is replaced.
    plain = [older(c.text, c.cosine, ident=c.id) for c in (phone, choir)]
    assert replaced(said, *plain) == []
    # Unmarked, it is no change.
    assert replaced("My coworker Greta has a Moto Edge 40.", phone, choir) == []


def test_a_change_naming_the_value_it_ends_replaces_nothing_else() -> None:
    coffee = older("Dana likes coffee.", 0.8, ident="coffee", unnamed=0.5)
    jazz = older("Dana likes jazz.", 0.6, ident="jazz", unnamed=0.45)
    assert replaced("Dana no longer likes coffee.", coffee, jazz) == ["coffee"]
    assert replaced("Dana no longer likes coffee.", jazz) == []
    assert retired_words("Dana no longer likes coffee.") == ["coffee"]
    assert retired_words("I am no longer at Acme.") == ["acme"]


def test_people_both_statements_name() -> None:
    assert shared_people("My coworker Greta switched jobs.", "Greta runs.") == ["Greta"]
    assert shared_people("Greta switched jobs.", "Omar runs.", ["Greta", "Omar"]) == []


def test_other_subjects_speakers_and_additions_are_left_alone() -> None:
    brother = older("Samir's mother supports the Boston Celtics.", 0.87)
    assert replaced("Samir's brother supports the Boston Celtics.", brother) == []
    other_person = older("My flatmate Dana is studying Japanese.", 0.6)
    assert replaced("Switched to learning Swahili now.", other_person) == []
    speaker = older("I go to the gym on Mondays.", 0.9, source="Bob")
    found, _ = replacements("I go to the gym on Tuesdays now.", "Eve", DAY, [speaker])
    assert found == []
    assert replaced("I'm learning Portuguese now too.", older("I'm learning Dutch.", 0.7)) == []


def test_only_part_of_a_compound_statement_changing_replaces_nothing_whole() -> None:
    compound = older("Dana lives in Boston and works at Acme.", 0.6)
    assert replaced("Dana moved to Denver now.", compound) == []


def test_two_older_values_equally_close_are_ambiguous() -> None:
    monday = older("I go to the gym on Mondays.", 0.9, ident="monday")
    friday = older("I go to the gym on Fridays.", 0.9, ident="friday", at=60.0)
    found, ambiguous = replacements(
        "I go to the gym on Sundays now.", "user", DAY, [monday, friday]
    )
    assert found == []
    assert {c.id for c in ambiguous} == {"monday", "friday"}


def test_of_several_sentences_only_the_changed_one_goes() -> None:
    old = older(
        "My landlord Sofia loves Oaxacan food more than anything. "
        "Also: Sofia can't be near bee stings, severe allergy.",
        0.73,
    )
    found, _ = replacements(
        "Sofia's favourite is Peruvian food these days, not Oaxacan.", "user", 30 * DAY, [old]
    )
    assert [(r.evidence, r.rest) for r in found] == [
        ("retired", "Sofia can't be near bee stings, severe allergy.")
    ]
    whole = older("My landlord Sofia loves Oaxacan food more than anything.", 0.8)
    found, _ = replacements(
        "Sofia is all about Peruvian food now, not Oaxacan.", "user", DAY, [whole]
    )
    assert [r.rest for r in found] == [None]


def test_chat_that_only_greets_asks_or_exclaims_replaces_nothing() -> None:
    found, ambiguous = replacements(
        "Bye Caroline. I'm here for you.",
        "Melanie",
        30 * DAY,
        [
            older(
                "Yeah, same here Caroline. You make life's struggles more bearable.",
                0.6,
                source="Melanie",
            )
        ],
        ["Caroline", "Melanie"],
    )
    assert found == [] and ambiguous == []
    assert (
        replaced(
            "That bowl is awesome, Mel! What gave you the idea for the colours?",
            older("That bowl is gorgeous! Did you make it?", 0.8),
        )
        == []
    )
    assert (
        retired_words("You should get to the point where anyone else would quit and you're not.")
        == []
    )


def test_how_someone_is_is_told_from_what_happened() -> None:
    lasting = [
        "A matcha latte is my go-to drink.",
        "Sofia is allergic to bee stings.",
        # A name of Latin-1 letters is a name.
        "Tomás always orders a chai latte.",
        "My usual run is 5 km. Also: I'm allergic to shellfish.",
        "I need a new phone.",
        # What something is for the speaker.
        "Home for me is Tucson.",
        # A change told as what happened states the new value.
        "Tariq sold the Volvo, he gets around on an e-bike these days.",
        # Being born is told as an event and is a birthday or a birthplace.
        "I was born on August 17.",
        "My sister Ines was born in Porto.",
    ]
    passing = [
        "Tariq sold the Volvo.",
        "Had lunch with my landlord Sofia near the harbour wall.",
        "On day 5 I swam 17 laps before lunch.",
        "On day 6 I walked 20 laps before lunch.",
        "I'm so tired today, the printer kept me up.",
        "I think I'll book the dentist after dinner.",
        "Remind me to call the plumber.",
        "Can you send me the flight details?",
        "What is my sister's name?",
        "The neighbour's alarm broke again, ugh.",
        "Thanks for helping me.",
        "Sounds good to me.",
    ]
    assert [t for t in lasting if not states_lasting(t, ["Sofia"])] == []
    assert [t for t in passing if states_lasting(t, ["Sofia"])] == []


def test_labels_and_hedges_do_not_change_the_frame() -> None:
    compound = older("Bruno's birthday is on August 17. Also: Bruno runs 10 km most days.", 0.78)
    found, _ = replacements("Bruno runs 8 km most days.", "user", 30 * DAY, [compound])
    assert [(r.evidence, r.rest) for r in found] == [
        ("reframed", "Bruno's birthday is on August 17.")
    ]


def test_a_named_speakers_words_to_someone_else_replace_nothing() -> None:
    # LoCoMo: Melanie's "now you're helping others" is about Caroline.
    kind = Candidate("kind", "You're so inspiring for wanting to help others.", "Melanie", 0.0, 0.8)
    found, _ = replacements(
        "You found your true self and now you're helping others.", "Melanie", 30 * DAY, [kind]
    )
    assert found == []


def test_questions_about_the_one_asking_and_lines_about_someone_else() -> None:
    assert asks_about_speaker("What genre should you queue up for me?")
    assert asks_about_speaker("What do I usually have at a coffee shop?")
    assert not asks_about_speaker("What should I cook for my flatmate Sofia?")
    assert not asks_about_speaker("Which city is the capital of Mongolia?")
    # A "my" that introduces someone asks about them.
    assert not asks_about_speaker("Which city is my sister based in?")
    assert asks_about_speaker("What should I get my sister for her birthday?")
    assert speaker_relations("My older sister Ines moved to Lisbon.") == {"my sister"}
    assert speaker_relations("Ines Duarte's brother Tom moved to Lisbon.") == frozenset()
    assert about_someone_else("My flatmate Sofia listens to baroque nonstop.")
    # A bare first name is a person when other memories say so, as a sentence's subject.
    assert not about_someone_else("Tomás always orders a chai latte.")
    assert about_someone_else("Tomás always orders a chai latte.", ["Tomás"])
    assert not about_someone_else("The gift from Tomás arrived today.", ["Tomás"])
    assert about_someone_else("Dana Tanaka likes sepia mode on all devices.")
    assert not about_someone_else("I had lunch with Sofia near the river.")
    assert not about_someone_else("Put on some synthwave and I'm happy.")


def test_an_echo_repeats_the_replaced_value_and_nothing_new() -> None:
    old = "Thursday evenings are for climbing."
    new = "As of January, climbing is on Friday evenings."
    assert echoes("I'll keep Thursday evenings free for your climbing.", old, new)
    assert not echoes("Friday it is, I'll keep Thursday free for you.", old, new)
    assert not echoes("Sure, I'll remind you to water the plants.", old, new)


def test_a_request_beside_the_changed_sentence_stays_current() -> None:
    # The request holds the birthday: a change of employer must not take it along.
    old = older(
        "Don't let me forget my teammate Mateo's birthday, October 23. "
        "Also: My teammate Mateo is an engineer over at Northwind Freight.",
        0.41,
    )
    found, _ = replacements(
        "Mateo no longer works at Northwind Freight; the new job is at Luma Robotics.",
        "user",
        30 * DAY,
        [old],
    )
    assert [(r.evidence, r.rest) for r in found] == [
        ("retired", "Don't let me forget my teammate Mateo's birthday, October 23.")
    ]


def test_a_new_favourite_replaces_the_old_one() -> None:
    old = older("My favourite cuisine is Peruvian.", 0.8)
    found, _ = replacements("My new favourite cuisine is Sichuan.", "user", 30 * DAY, [old])
    assert [r.evidence for r in found] == ["cued"]


def test_says_only_the_values_a_text_names() -> None:
    values = ["Lisbon"]
    assert says_only("Quick update. My neighbour Jordan lives in Lisbon.", values)
    assert not says_only(
        "My neighbour Jordan lives in Lisbon. Also: My neighbour Jordan listens to flamenco.",
        values,
    )
    # A value the text does not hold as written: nothing to tell its sentences apart by.
    assert says_only("Jordan lives in sunny Lisboa. Jordan likes jazz.", values)


def test_requests_and_plans_say_nothing_of_how_anyone_is() -> None:
    assert only_requests("Remind me to pay the electricity bill this weekend.")
    assert only_requests("Can you remind me to call the plumber tomorrow?")
    assert only_requests("I think I'll book the dentist after dinner.")
    assert not only_requests("I eat vegetarian, so keep that in mind when you suggest recipes.")
    assert not only_requests("Remind me to call Mum. I moved to Lisbon last week.")
    # A question asks about something; it is no request (LoCoMo's "What got you into running?").
    assert not only_requests("What's a good way to call the plumber quickly?")
    assert not only_requests("")


def test_questions_only() -> None:
    assert only_questions("What's a good way to call the plumber quickly?")
    assert only_questions("Wow! What got you into running?") is False
    assert only_questions("Any tips? What should I pack?")
    assert not only_questions("I moved to Lisbon. Any tips?")
