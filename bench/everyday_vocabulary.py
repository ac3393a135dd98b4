"""The everyday benchmark's own words: attributes people have, how a user says them,
how a user changes them, and how a user later asks about them in other words.

Written for ``bench/everyday_scenarios.py`` from how people talk to an assistant, not
from UCMA's extractor (``ucma.providers.heuristics`` was deliberately not read): the
statements vary their verbs and sentence shapes, and the questions avoid the statements'
key words where a user would (``"Who signs my paychecks?"`` for ``"I work at X"``).

Template slots: ``{v}`` the value, ``{old}`` the previous value, ``{Who}`` / ``{who}``
a person's reference (capitalised at a sentence start or as written), ``{Whose}`` /
``{whose}`` its possessive, ``{month}`` the month of the statement, ``{pet}`` "dog" or
"cat", ``{act}`` a weekly activity. Every value of every attribute is unique across the
vocabulary (no value is a substring of another attribute's value or of the filler), so
a required or forbidden substring points at one statement; ``everyday_scenarios``
checks that for each generated store.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ACTIVITIES",
    "ASSISTANT_CHIT_CHAT",
    "ATTRIBUTES",
    "CHIT_CHAT",
    "FILLER",
    "FILLER_WORDS",
    "FIRST_NAMES",
    "NEVER_SAID",
    "NEVER_SAID_ME",
    "RELATIONS",
    "SHARED_NAMES",
    "SURNAMES",
    "WORLD_QUESTIONS",
    "Attribute",
]


@dataclass(frozen=True)
class Attribute:
    """Something a person has one current value of at a time.

    ``kind`` is "fact" or "preference". ``chains`` (optional) lists the value sequences a
    change may follow when only some orders make sense (single, then engaged, then
    married); otherwise any values follow each other. ``echo`` is an assistant's reply
    confirming the user's own value; ``ask_me`` / ``ask_other`` paraphrase the question.
    """

    name: str
    kind: str
    values: tuple[str, ...]
    say_me: tuple[str, ...]
    say_other: tuple[str, ...]
    change_me: tuple[str, ...]
    change_other: tuple[str, ...]
    ask_me: tuple[str, ...]
    ask_other: tuple[str, ...]
    echo: tuple[str, ...] = ()
    chains: tuple[tuple[str, ...], ...] = ()


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(
        name="employer",
        kind="fact",
        values=(
            "Brightwell Labs",
            "Northwind Freight",
            "Halcyon Health",
            "Quillon Systems",
            "Tidewater Bank",
            "Copperleaf Studio",
            "Ostrander Foods",
            "Luma Robotics",
            "Fernhill Insurance",
            "Kestrel Analytics",
            "Meridian Pharma",
            "Saltmarsh Games",
        ),
        say_me=(
            "I work at {v}.",
            "I've been at {v} for a couple of years now as a data analyst.",
            "my job is at {v}, mostly backend stuff",
            "I'm a product designer at {v}.",
            "Long day at {v} again, the release slipped.",
        ),
        say_other=(
            "{Who} works at {v}.",
            "{Who} has a job at {v} in the finance team.",
            "{Who} is an engineer over at {v}.",
            "{Who} got hired by {v} last year and loves it.",
        ),
        change_me=(
            "I quit {old} and joined {v}.",
            "I switched jobs, I'm at {v} now.",
            "Handed in my notice at {old}. Starting at {v} in two weeks!",
            "As of {month} I work for {v}.",
            "Left {old} last week. New gig at {v}!",
            "no longer at {old} btw, {v} hired me",
        ),
        change_other=(
            "{Who} left {old} and now works at {v}.",
            "{Who} switched to {v} recently.",
            "{Who} no longer works at {old}; the new job is at {v}.",
            "{Who} took an offer from {v}, so bye bye {old}.",
        ),
        ask_me=(
            "Which company am I employed by these days?",
            "Who is my current employer?",
            "Who signs my paychecks?",
        ),
        ask_other=(
            "Which company employs {who}?",
            "Who is {whose} employer?",
            "What organisation is {who} with professionally?",
        ),
        echo=(
            "Got it, you work at {v}.",
            "Noted: your employer is {v}.",
        ),
    ),
    Attribute(
        name="city",
        kind="fact",
        values=(
            "Lisbon",
            "Denver",
            "Osaka",
            "Tallinn",
            "Porto",
            "Leeds",
            "Montreal",
            "Krakow",
            "Valencia",
            "Auckland",
            "Bergen",
            "Halifax",
            "Tucson",
            "Ghent",
            "Utrecht",
        ),
        say_me=(
            "I live in {v}.",
            "Home for me is {v}.",
            "our flat in {v} is tiny but I love it",
            "I've been based in {v} since uni.",
        ),
        say_other=(
            "{Who} lives in {v}.",
            "{Who} has a place in {v}.",
            "{Who} is based in {v}.",
        ),
        change_me=(
            "I moved to {v}!",
            "We finally relocated from {old} to {v}.",
            "Just signed a lease in {v}, goodbye {old}.",
            "I'm living in {v} these days.",
            "Unpacking boxes in our new place in {v}.",
        ),
        change_other=(
            "{Who} moved to {v}.",
            "{Who} relocated from {old} to {v} last month.",
            "{Who} is in {v} now, no longer in {old}.",
        ),
        ask_me=(
            "Which city is my home?",
            "Where am I living at the moment?",
            "What town do I reside in?",
        ),
        ask_other=(
            "Which city does {who} call home?",
            "Where is {whose} home?",
            "In what city does {who} reside?",
        ),
        echo=("Okay, I'll remember you live in {v}.",),
    ),
    Attribute(
        name="diet",
        kind="preference",
        values=("vegetarian", "vegan", "pescatarian", "keto", "gluten-free", "paleo"),
        say_me=(
            "I'm {v}.",
            "I eat {v}, so keep that in mind when you suggest recipes.",
            "Just so you know, I follow a {v} diet.",
        ),
        say_other=(
            "{Who} is {v}.",
            "{Who} eats strictly {v}.",
            "{Who} follows a {v} diet.",
        ),
        change_me=(
            "I'm no longer {old}, I've gone {v}.",
            "Switched to a {v} diet this month.",
            "These days I'm eating {v}.",
            "I gave up being {old}; {v} from now on.",
        ),
        change_other=(
            "{Who} went {v} recently.",
            "{Who} isn't {old} anymore, it's {v} now.",
            "{Who} switched to eating {v}.",
        ),
        ask_me=(
            "What kind of eating plan do I stick to?",
            "How would you describe my way of eating?",
            "Which food rules should a recipe for me respect?",
        ),
        ask_other=(
            "What does {who} eat, diet-wise?",
            "Which eating style does {who} stick to?",
            "What should I keep in mind when cooking for {who}?",
        ),
        echo=("Noted, you're {v}. I'll suggest recipes accordingly.",),
    ),
    Attribute(
        name="cuisine",
        kind="preference",
        values=("Thai", "Ethiopian", "Peruvian", "Lebanese", "Georgian", "Sichuan", "Oaxacan"),
        say_me=(
            "{v} food is my absolute favourite.",
            "Nothing beats {v} food for me.",
            "If I could only eat one cuisine forever it would be {v}.",
        ),
        say_other=(
            "{Who} loves {v} food more than anything.",
            "{Whose} favourite cuisine is {v}.",
            "{Who} always picks {v} when we eat out.",
        ),
        change_me=(
            "Lately I'm into {v} food more than {old}.",
            "My new favourite cuisine is {v}.",
            "These days I'd pick {v} food over anything.",
        ),
        change_other=(
            "{Who} is obsessed with {v} food now.",
            "{Whose} favourite is {v} food these days, not {old}.",
        ),
        ask_me=(
            "What cuisine do I enjoy most?",
            "If you booked me a dinner, what kind of restaurant should it be?",
            "Which food do I like best?",
        ),
        ask_other=(
            "Which cuisine would {who} pick for dinner out?",
            "What type of food does {who} enjoy the most?",
            "Where should I take {who} to eat, what kind of kitchen?",
        ),
    ),
    Attribute(
        name="coffee",
        kind="preference",
        values=(
            "flat white with oat milk",
            "cortado",
            "cold brew",
            "chai latte",
            "double espresso",
            "matcha latte",
        ),
        say_me=(
            "My usual coffee order is a {v}.",
            "I always get a {v} in the morning.",
            "A {v} is my go-to drink.",
        ),
        say_other=(
            "{Who} always orders a {v}.",
            "{Whose} go-to drink is a {v}.",
        ),
        change_me=(
            "I've switched to {v} instead of {old}.",
            "My drink these days is a {v}.",
            "No more {old} for me, it's {v} now.",
        ),
        change_other=(
            "{Who} switched to {v}.",
            "{Who} orders a {v} now, not a {old}.",
        ),
        ask_me=(
            "What should you order for me at the café?",
            "What do I usually have when we stop at a coffee shop?",
        ),
        ask_other=(
            "If I grab {who} something from the café, what should it be?",
            "What does {who} have at coffee shops?",
        ),
        echo=("A {v}, got it.",),
    ),
    Attribute(
        name="music",
        kind="preference",
        values=("jazz", "synthwave", "bluegrass", "flamenco", "baroque", "afrobeat", "shoegaze"),
        say_me=(
            "I listen to {v} basically all day.",
            "{v} is my favourite music.",
            "Put on some {v} and I'm happy.",
        ),
        say_other=(
            "{Who} is really into {v}.",
            "{Who} listens to {v} nonstop.",
        ),
        change_me=(
            "I've gotten into {v} lately, way more than {old}.",
            "These days it's all {v} on my playlists.",
        ),
        change_other=(
            "{Who} is all about {v} now.",
            "{Who} moved on from {old} to {v}.",
        ),
        ask_me=(
            "What genre should you queue up for me?",
            "What kind of songs do I enjoy most?",
        ),
        ask_other=(
            "What style of songs does {who} enjoy?",
            "Which genre would {who} want on a road trip?",
        ),
    ),
    Attribute(
        name="relationship",
        kind="fact",
        values=("single", "engaged", "married", "divorced"),
        chains=(
            ("single", "engaged", "married"),
            ("engaged", "married"),
            ("married", "divorced"),
            ("single", "engaged"),
            ("divorced", "engaged"),
        ),
        say_me=(
            "I'm {v} at the moment.",
            "Relationship-wise I'm {v}.",
        ),
        say_other=(
            "{Who} is {v}.",
            "As far as I know {who} is {v}.",
        ),
        change_me=(
            "I'm {v} now!",
            "Big news: I'm {v}.",
            "Not {old} anymore, I'm {v}.",
        ),
        change_other=(
            "{Who} is {v} now.",
            "{Who} is no longer {old}, officially {v}.",
        ),
        ask_me=(
            "What's my love life situation right now?",
            "Am I with a partner these days, and how serious is it?",
        ),
        ask_other=(
            "What is {whose} love life situation?",
            "Is {who} attached or not?",
        ),
    ),
    Attribute(
        name="pet",
        kind="fact",
        values=(
            "Biscuit",
            "Waffles",
            "Mochi",
            "Pickles",
            "Ziggy",
            "Noodle",
            "Pumpkin",
            "Clementine",
            "Bramble",
            "Pretzel",
        ),
        say_me=(
            "Our {pet} is called {v}.",
            "My {pet} {v} knocked over my mug again.",
            "{v} (my {pet}) is asleep on my keyboard, brb.",
        ),
        say_other=(
            "{Whose} {pet} is named {v}.",
            "{Who} has a {pet} called {v}.",
        ),
        change_me=(
            "We renamed the {pet}, it's {v} now, {old} never suited him.",
            "The kids voted and the {pet}'s name is now {v}.",
        ),
        change_other=(
            "{Who} renamed the {pet} from {old} to {v}.",
            "{Whose} {pet} goes by {v} these days.",
        ),
        ask_me=(
            "What's my pet called?",
            "What name does my animal answer to?",
        ),
        ask_other=(
            "What is {whose} pet's name?",
            "What does {who} call the family animal?",
        ),
    ),
    Attribute(
        name="phone",
        kind="fact",
        values=(
            "Pixel 8",
            "iPhone 13",
            "iPhone 15",
            "Galaxy S23",
            "Fairphone 5",
            "OnePlus 11",
            "Moto Edge 40",
        ),
        say_me=(
            "I'm on a {v}.",
            "My phone is a {v}.",
            "typing this on my {v}",
        ),
        say_other=(
            "{Who} uses a {v}.",
            "{Who} has a {v}.",
        ),
        change_me=(
            "Upgraded to a {v}, finally retired the {old}.",
            "Got a {v} yesterday.",
            "Switched from the {old} to a {v}.",
        ),
        change_other=(
            "{Who} got a new {v}.",
            "{Who} switched to a {v}.",
        ),
        ask_me=(
            "What handset do I carry?",
            "Which mobile device am I using?",
        ),
        ask_other=(
            "What handset does {who} carry?",
            "Which mobile does {who} own?",
        ),
    ),
    Attribute(
        name="schedule",
        kind="fact",
        values=("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"),
        say_me=(
            "My {act} class is on {v}s.",
            "{v} evenings are for {act}.",
        ),
        say_other=(
            "{Who} has {act} every {v}.",
            "{Whose} {act} class is on {v}s.",
        ),
        change_me=(
            "{act} moved to {v}s.",
            "My {act} class is on {v}s now, not {old}s.",
            "As of {month}, {act} is on {v} evenings.",
        ),
        change_other=(
            "{Whose} {act} class moved to {v}s.",
            "{Who} does {act} on {v}s these days.",
        ),
        ask_me=(
            "Which evening am I busy with {act}?",
            "What day of the week do I do {act}?",
        ),
        ask_other=(
            "Which day does {who} go to {act}?",
            "When in the week is {whose} {act}?",
        ),
        echo=("I'll keep {v} evenings free for your {act}.",),
    ),
    Attribute(
        name="running",
        kind="fact",
        values=("5 km", "8 km", "10 km", "12 km", "21 km"),
        say_me=(
            "I run {v} every morning.",
            "My usual run is {v}.",
        ),
        say_other=("{Who} runs {v} most days.",),
        change_me=(
            "I'm up to {v} now!",
            "Now running {v} instead of {old}.",
            "Pushed my daily run to {v}.",
        ),
        change_other=(
            "{Who} runs {v} now.",
            "{Who} went from {old} to {v} on daily runs.",
        ),
        ask_me=(
            "How far do I jog each day?",
            "What distance do I usually cover when I go out jogging?",
        ),
        ask_other=(
            "How far does {who} jog?",
            "What distance does {who} cover on a typical outing on foot?",
        ),
    ),
    Attribute(
        name="language",
        kind="fact",
        values=("Portuguese", "Japanese", "Swahili", "Icelandic", "Turkish", "Dutch"),
        say_me=(
            "I'm learning {v} on my commute.",
            "Practising my {v} every night.",
        ),
        say_other=("{Who} is studying {v}.",),
        change_me=(
            "I dropped {old} and started {v}.",
            "Switched to learning {v}.",
        ),
        change_other=("{Who} gave up on {old} and is doing {v} now.",),
        ask_me=(
            "Which foreign tongue am I picking up?",
            "What language course am I taking?",
        ),
        ask_other=("Which foreign tongue is {who} picking up?",),
    ),
    Attribute(
        name="birthday",
        kind="fact",
        values=(
            "March 14",
            "July 2",
            "October 23",
            "January 9",
            "May 30",
            "December 5",
            "August 17",
        ),
        say_me=(
            "My birthday is {v}.",
            "I was born on {v}.",
        ),
        say_other=(
            "{Whose} birthday is on {v}.",
            "Don't let me forget {whose} birthday, {v}.",
        ),
        change_me=(),
        change_other=(),
        ask_me=("What date do I celebrate turning a year older?",),
        ask_other=(
            "When should I wish {who} many happy returns?",
            "On what date does {who} celebrate getting older?",
        ),
    ),
    Attribute(
        name="allergy",
        kind="fact",
        values=("peanuts", "shellfish", "penicillin", "sesame", "bee stings", "latex"),
        say_me=(
            "I'm allergic to {v}.",
            "Heads up: I react badly to {v}.",
        ),
        say_other=(
            "{Who} is allergic to {v}.",
            "{Who} can't be near {v}, severe allergy.",
        ),
        change_me=(),
        change_other=(),
        ask_me=("What could give me a dangerous reaction?",),
        ask_other=(
            "What gives {who} a bad reaction?",
            "What must {who} avoid for medical reasons?",
        ),
    ),
    Attribute(
        name="theme",
        kind="preference",
        values=("dark mode", "light mode", "high-contrast mode", "sepia mode"),
        say_me=(
            "I prefer {v} in every app.",
            "Please always use {v} for me.",
        ),
        say_other=("{Who} likes {v} on all devices.",),
        change_me=(
            "I've switched to {v}, it's easier on my eyes.",
            "{v} from now on, please.",
        ),
        change_other=("{Who} uses {v} now.",),
        ask_me=(
            "Which display theme do I like?",
            "How should screens be set up for me, colour-wise?",
        ),
        ask_other=("What screen appearance does {who} like?",),
        echo=("Switching to {v} for you.",),
    ),
)

FIRST_NAMES = (
    "Omar",
    "Priya",
    "Lucas",
    "Ingrid",
    "Tomás",
    "Mei",
    "Kofi",
    "Hana",
    "Rafael",
    "Yusuf",
    "Greta",
    "Nadia",
    "Felix",
    "Aisha",
    "Bruno",
    "Leila",
    "Mateo",
    "Sofia",
)
SHARED_NAMES = ("Dana", "Alex", "Sam", "Jordan", "Maya", "Chris")
SURNAMES = ("Whitfield", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Brennan", "Castillo")
# Relations carry no gender, so any first name fits any of them.
RELATIONS = (
    "coworker",
    "neighbour",
    "boss",
    "cousin",
    "best friend",
    "flatmate",
    "teammate",
    "landlord",
    "mentor",
    "old roommate",
)
ACTIVITIES = ("pottery", "choir", "climbing", "salsa", "yoga", "chess club")

CHIT_CHAT = (
    "ok thanks",
    "lol",
    "sounds good",
    "haha nice",
    "cool cool",
    "thx!",
    "perfect, thank you",
    "hmm ok",
    "yeah",
    "nice one",
    "right",
    "ok",
)
ASSISTANT_CHIT_CHAT = (
    "You're welcome!",
    "Happy to help.",
    "Anything else I can do?",
    "Sure thing.",
)

# Everyday statements with no attribute value in them: the crowd a real store holds.
FILLER = (
    "Can you remind me to {task} tomorrow?",
    "Remind me to {task} this weekend.",
    "Sure, I'll remind you to {task}.",
    "Watched {film} last night, not bad.",
    "I'm so tired today, the {thing} kept me up.",
    "Went for a walk along the {place} with {name}.",
    "What's a good way to {task} quickly?",
    "{name} and I finally finished {film}.",
    "The {thing} broke again, ugh.",
    "Had lunch with {name} near the {place}.",
    "Any tips for getting the {thing} fixed cheaply?",
    "I think I'll {task} after dinner.",
)
FILLER_WORDS = {
    "task": (
        "call the plumber",
        "renew my passport",
        "water the plants",
        "book the dentist",
        "pay the electricity bill",
        "return the library books",
        "back up my laptop",
        "buy a birthday card",
    ),
    "film": ("The Long Harbour", "Glass Orchard", "Paper Comets", "the new heist series"),
    "thing": ("washing machine", "neighbour's alarm", "printer", "bike chain", "router"),
    "place": ("river", "old canal", "botanical garden", "harbour wall"),
}

# Attributes never stated in any store: their questions are unanswerable.
NEVER_SAID = (
    "What is {whose} blood type?",
    "What shoe size does {who} wear?",
    "Which university did {who} graduate from?",
    "How tall is {who}?",
    "What was {whose} first car?",
    "What is {whose} middle name?",
)
NEVER_SAID_ME = (
    "What's my blood type?",
    "Which high school did I go to?",
    "What's my shoe size?",
    "What car do I drive?",
)
WORLD_QUESTIONS = (
    "What is the capital of Mongolia?",
    "How many moons does Mars have?",
    "Who painted the ceiling of the Sistine Chapel?",
    "What is the boiling point of water in Fahrenheit?",
    "What's the tallest mountain in Africa?",
    "How many bones are in the adult human body?",
    "What is the chemical symbol for gold?",
    "Who wrote One Hundred Years of Solitude?",
)
