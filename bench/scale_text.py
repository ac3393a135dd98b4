"""Synthetic but realistic memory text for bench/scale.py, seeded and deterministic.

Each memory is one or two sentences of the kind an agent keeps about its users' lives:
people (a first and a last name from lists of about a hundred each), places, work,
preferences, events and dates, written by one of many templates, each with slots filled
independently. The number of combinations is far above a million, and ``memories``
draws until each text is new, so a store of a million holds a million different
statements, not one sentence repeated with a counter.

Every memory comes with a question whose answer it holds (``Memory.question``), phrased
differently from the statement (other words, the same names and key slot), so that a
recall can be checked to find it: the hit rate is a sanity check that the store works,
not a claim about retrieval quality.

``memories(count, seed)`` is a pure function of its arguments: the same seed gives the
same texts in the same order, so vectors computed once can be found again by text.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["Memory", "memories"]


def _items(text: str) -> list[str]:
    """A vocabulary list written as one string, its items separated by |."""
    return text.split("|")


FIRST = _items(
    "Aaron|Abigail|Adele|Ahmed|Aiko|Alan|Alba|Alejandro|Amara|Amir|Ana|Anders|Anika|"
    "Arjun|Astrid|Aziz|Beatriz|Ben|Bianca|Bilal|Bruno|Camille|Carlos|Chen|Chiara|Chloe|"
    "Dalia|Damien|Daniel|Dara|Diego|Dmitri|Elena|Elif|Emeka|Emil|Emma|Erik|Esther|Fatima|"
    "Felix|Fiona|Francesca|Gabriel|Grace|Hana|Hassan|Helena|Henrik|Hugo|Ines|Ingrid|"
    "Isaac|Ivan|Jada|Jakob|James|Jana|Javier|Jin|Joao|Jonas|Julia|Kai|Kamal|Karin|Kenji|"
    "Kofi|Lara|Leila|Leo|Lina|Lucas|Lucia|Magnus|Maya|Mei|Mila|Mohamed|Nadia|Naomi|"
    "Nikhil|Nina|Noah|Olga|Omar|Oscar|Paolo|Priya|Rafael|Rania|Ravi|Rosa|Ruth|Samir|Sara|"
    "Sofia|Stefan|Tariq|Tomas|Valentina|Wei|Yara|Yusuf|Zara|Zoe"
)
LAST = _items(
    "Abe|Adeyemi|Almeida|Andersen|Bauer|Bellini|Bergstrom|Bianchi|Brennan|Castillo|"
    "Chandra|Chen|Costa|Dahl|Dubois|Eriksen|Esposito|Fischer|Fontaine|Garcia|Gomez|Gupta|"
    "Haddad|Hansen|Hartmann|Hughes|Ibrahim|Ivanova|Jansen|Jensen|Kaur|Keller|Kim|"
    "Kowalski|Kruger|Larsen|Laurent|Lehmann|Lindqvist|Lopez|Mahmoud|Marino|Martins|Meyer|"
    "Moreau|Mueller|Murphy|Nakamura|Nielsen|Novak|Nowak|Okafor|Oliveira|Olsen|Ortiz|Park|"
    "Patel|Pereira|Petrov|Quinn|Rahman|Ramos|Reyes|Ricci|Rossi|Sato|Schmidt|Schneider|"
    "Shah|Silva|Singh|Sorensen|Suzuki|Takahashi|Tanaka|Torres|Valdez|Vargas|Vogel|Wagner|"
    "Walsh|Weber|Yamamoto|Yilmaz|Zhang|Zhou"
)
CITIES = _items(
    "Lisbon|Porto|Madrid|Seville|Barcelona|Valencia|Lyon|Marseille|Paris|Nantes|Bordeaux|"
    "Brussels|Antwerp|Utrecht|Rotterdam|Amsterdam|Hamburg|Berlin|Leipzig|Munich|Vienna|"
    "Graz|Zurich|Geneva|Milan|Turin|Bologna|Florence|Naples|Palermo|Athens|Thessaloniki|"
    "Istanbul|Izmir|Krakow|Warsaw|Gdansk|Prague|Brno|Budapest|Ljubljana|Zagreb|Split|"
    "Copenhagen|Aarhus|Malmo|Gothenburg|Stockholm|Oslo|Bergen|Helsinki|Tallinn|Riga|"
    "Vilnius|Dublin|Cork|Galway|Edinburgh|Glasgow|Manchester|Leeds|Bristol|Cardiff|"
    "Toronto|Montreal|Vancouver|Boston|Chicago|Denver|Seattle|Austin|Portland|Nairobi|"
    "Lagos|Accra|Cairo|Casablanca|Mumbai|Pune|Bangalore|Singapore|Osaka|Kyoto|Seoul|"
    "Busan|Melbourne|Auckland"
)
VENUES = _items(
    "the corner bakery|the night market|a rooftop bar|the harbour cafe|"
    "a ramen place by the station|the vegetarian bistro|the old tram depot|"
    "the climbing gym|the public library|a jazz club|the botanical garden|"
    "the riverside park|the food hall|a tiny wine bar|the community pool|"
    "the Sunday flea market|the science museum|a board game cafe|the lake pavilion|"
    "the covered market|an Ethiopian restaurant|the ice rink|a taqueria near the office|"
    "the concert hall|the city archive"
)
COMPANIES = _items(
    "Northwind Logistics|Bluefin Analytics|Cedar Health|Orbital Freight|Lumen Energy|"
    "Harbor Robotics|Quartz Insurance|Willow Foods|Atlas Mapping|Copperleaf Bank|"
    "Granite Software|Meadow Pharma|Silverline Media|Ironbark Construction|"
    "Tidewater Shipping|Beacon Schools|Juniper Telecom|Summit Outdoor|Redwood Legal|"
    "Pinecone Games|Kestrel Aviation|Marigold Hotels|Sparrow Retail|Obsidian Security|"
    "Lattice Biotech|Verdant Farms|Comet Payments|Foxglove Design|Halcyon Travel|"
    "Nimbus Cloud"
)
ROLES = _items(
    "data engineer|nurse|product manager|site reliability engineer|accountant|architect|"
    "chef|teacher|designer|lawyer|pharmacist|translator|sales lead|logistics planner|"
    "research scientist|civil engineer|journalist|physiotherapist|UX researcher|"
    "project coordinator|mechanic|dentist|marketing analyst|hotel manager|pilot|"
    "photographer|recruiter|economist"
)
PROJECTS = _items(
    "the billing migration|the warehouse scanner rollout|the new onboarding flow|"
    "the patient portal|the quarterly forecast|the mobile app redesign|"
    "the fraud detection model|the solar farm bid|the school timetable system|"
    "the loyalty programme|the route optimiser|the search relaunch|"
    "the clinic scheduling tool|the data warehouse cleanup|the accessibility audit|"
    "the supplier contract renewal|the customer survey|the office move|"
    "the security review|the pricing experiment|the recipe catalogue|"
    "the translation memory|the flight crew roster|the archive digitisation"
)
FOODS = _items(
    "green curry|mushroom risotto|shakshuka|pho|pierogi|paella|falafel|bibimbap|"
    "tonkotsu ramen|lentil soup|grilled sardines|dim sum|pad thai|margherita pizza|"
    "goulash|tacos al pastor|butter chicken|sushi|moussaka|jollof rice|bao buns|ceviche|"
    "pasta carbonara|injera with lentils|halloumi salad|beef stew|cheese fondue|"
    "poke bowls|dumplings|baklava|apple crumble|tiramisu|lemon tart|churros|carrot cake|"
    "mango sticky rice"
)
DRINKS = _items(
    "oat milk flat whites|green tea|espresso|sparkling water|ginger beer|chai|"
    "a dry riesling|rooibos|cold brew|hot chocolate|kombucha|mint lemonade|a hoppy IPA|"
    "black coffee|matcha lattes|orange juice"
)
HOBBIES = _items(
    "bouldering|watercolour painting|trail running|chess|birdwatching|sourdough baking|"
    "salsa dancing|woodworking|sea kayaking|knitting|astronomy|playing the cello|pottery|"
    "urban sketching|cycling|gardening|photography|learning Japanese|"
    "volunteering at the food bank|restoring old bikes|choir singing|fly fishing|yoga|"
    "fencing|writing short stories|playing the drums|open water swimming|rock climbing"
)
GENRES = _items(
    "crime novels|science fiction|jazz records|90s hip hop|film noir|"
    "podcasts about history|baroque music|graphic novels|nature documentaries|"
    "stand-up comedy|Korean dramas|folk music|poetry|true crime podcasts|"
    "classic westerns|synth pop|biographies|travel writing"
)
RELATIONS = _items(
    "sister|brother|daughter|son|mother|father|cousin|aunt|uncle|partner|best friend|"
    "neighbour|flatmate|grandmother|colleague|mentor"
)
EVENTS = _items(
    "a wedding|a graduation|a fortieth birthday|a retirement party|a housewarming|"
    "a product launch|a charity gala|a family reunion|a baby shower|a book launch|"
    "an engagement dinner|a school reunion"
)
ACTIVITIES = _items(
    "went hiking|went camping|rented bikes|took a cooking class|went sailing|"
    "ran a half marathon|went to a food festival|visited a vineyard|"
    "went to an open-air concert|went skiing|took a ferry trip|went fishing|"
    "toured the old town|went to a pottery workshop|saw a football match"
)
HEALTH = _items(
    "sprained an ankle|had knee surgery|started physiotherapy for back pain|"
    "was diagnosed with a gluten intolerance|broke a wrist|had a wisdom tooth out|"
    "started wearing reading glasses|had a bad flu|began treatment for migraines|"
    "was told to cut down on salt"
)
ALLERGENS = _items(
    "peanuts|shellfish|cats|pollen|penicillin|sesame|dust mites|kiwi|latex|bee stings|dairy|eggs"
)
PETS = _items(
    "a grey tabby cat|a border collie|a pair of budgies|an old beagle|a rescue greyhound|"
    "a tortoise|two goldfish|a ginger kitten|a labrador puppy|a dachshund|a parrot|"
    "a pair of rabbits"
)
MONTHS = _items(
    "January|February|March|April|May|June|July|August|September|October|November|December"
)
YEARS = [str(y) for y in range(2012, 2027)]
WEEKDAYS = _items("Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday")
TAILS = _items(
    "|||||| It was the first time in years.| Nobody expected it.| They still talk about it.|"
    " It rained most of the time.| It went better than planned.|"
    " The photos are in the shared album.| It took longer than anyone thought.|"
    " Everyone agreed to do it again.| It cost more than the budget allowed.|"
    " A friend had recommended it.| They nearly cancelled at the last minute."
)


@dataclass(frozen=True, slots=True)
class Memory:
    """One statement and a question it answers."""

    text: str
    question: str


Draw = Callable[[random.Random], tuple[str, str]]


def _person(rng: random.Random) -> tuple[str, str]:
    """(full name, first name)."""
    first = rng.choice(FIRST)
    return f"{first} {rng.choice(LAST)}", first


def _date(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.choice(YEARS)}"


def _month_year(rng: random.Random) -> str:
    return f"{rng.choice(MONTHS)} {rng.choice(YEARS)}"


def _moved(rng: random.Random) -> tuple[str, str]:
    name, _ = _person(rng)
    city, when = rng.choice(CITIES), _month_year(rng)
    role, company = rng.choice(ROLES), rng.choice(COMPANIES)
    return (
        f"{name} moved to {city} in {when} to start as a {role} at {company}.",
        f"Which city did {name} relocate to for the {role} job?",
    )


def _food(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    food, other = rng.sample(FOODS, 2)
    venue, city = rng.choice(VENUES), rng.choice(CITIES)
    return (
        f"{name} loves {food} and always orders it at {venue} in {city}, never the {other}.",
        f"What dish does {name} get at {venue} in {city}?",
    )


def _drink(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    drink, weekday = rng.choice(DRINKS), rng.choice(WEEKDAYS)
    company = rng.choice(COMPANIES)
    return (
        f"At the {weekday} stand-up at {company}, {name} brings {drink} for the whole team.",
        f"What does {name} bring to the {company} meeting on {weekday}s?",
    )


def _outing(rng: random.Random) -> tuple[str, str]:
    (a, _), (b, _) = _person(rng), _person(rng)
    activity, city, date = rng.choice(ACTIVITIES), rng.choice(CITIES), _date(rng)
    return (
        f"On {date}, {a} and {b} {activity} near {city}.",
        f"What did {a} do with {b} on {date}?",
    )


def _project(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    project, company = rng.choice(PROJECTS), rng.choice(COMPANIES)
    deadline = _date(rng)
    return (
        f"{name} leads {project} at {company}; the deadline is {deadline}.",
        f"When is {project} due for {name} at {company}?",
    )


def _hobby(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    hobby, city, year = rng.choice(HOBBIES), rng.choice(CITIES), rng.choice(YEARS)
    return (
        f"{name} took up {hobby} in {year} after joining a club in {city}.",
        f"Which pastime did {name} start in {city} in {year}?",
    )


def _taste(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    liked, disliked = rng.sample(GENRES, 2)
    relation = rng.choice(RELATIONS)
    return (
        f"{name} is into {liked} but finds {disliked} boring, unlike their {relation}.",
        f"What kind of entertainment does {name} enjoy more than their {relation}?",
    )


def _family(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    relation, other = rng.choice(RELATIONS), rng.choice(FIRST)
    role, city = rng.choice(ROLES), rng.choice(CITIES)
    return (
        f"{name}'s {relation} {other} works as a {role} in {city}.",
        f"What is the job of {name}'s {relation} {other}?",
    )


def _event(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    event, venue, city, date = (
        rng.choice(EVENTS),
        rng.choice(VENUES),
        rng.choice(CITIES),
        _date(rng),
    )
    return (
        f"{name} is hosting {event} at {venue} in {city} on {date}.",
        f"Where is the {event.split(' ', 1)[1]} {name} is organising on {date}?",
    )


def _health(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    health, when, activity = rng.choice(HEALTH), _month_year(rng), rng.choice(HOBBIES)
    return (
        f"{name} {health} in {when} and had to pause {activity} for a while.",
        f"What health problem did {name} have in {when}?",
    )


def _allergy(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    allergen, relation, food = rng.choice(ALLERGENS), rng.choice(RELATIONS), rng.choice(FOODS)
    return (
        f"{name} is allergic to {allergen}, so their {relation} cooks {food} without it.",
        f"What is {name} allergic to?",
    )


def _pet(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    pet, pet_name, city, year = (
        rng.choice(PETS),
        rng.choice(FIRST),
        rng.choice(CITIES),
        rng.choice(YEARS),
    )
    return (
        f"{name} adopted {pet} called {pet_name} from a shelter in {city} in {year}.",
        f"What animal did {name} adopt in {year}?",
    )


def _trip(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    city, other_city = rng.sample(CITIES, 2)
    month, year, nights = rng.choice(MONTHS), rng.choice(YEARS), rng.randint(2, 14)
    return (
        f"{name} is planning {nights} nights in {city} in {month} {year},"
        f" flying from {other_city}.",
        f"Where is {name} travelling in {month} {year}?",
    )


def _promotion(rng: random.Random) -> tuple[str, str]:
    name, first = _person(rng)
    role, company, when = rng.choice(ROLES), rng.choice(COMPANIES), _month_year(rng)
    return (
        f"{name} was promoted to senior {role} at {company} in {when}.",
        f"What position did {name} get at {company} in {when}?",
    )


def _meeting(rng: random.Random) -> tuple[str, str]:
    (a, _), (b, _) = _person(rng), _person(rng)
    project, weekday = rng.choice(PROJECTS), rng.choice(WEEKDAYS)
    hour = rng.randint(8, 17)
    return (
        f"{a} meets {b} every {weekday} at {hour}:00 to go over {project}.",
        f"When do {a} and {b} review {project}?",
    )


TEMPLATES: tuple[Draw, ...] = (
    _moved,
    _food,
    _drink,
    _outing,
    _project,
    _hobby,
    _taste,
    _family,
    _event,
    _health,
    _allergy,
    _pet,
    _trip,
    _promotion,
    _meeting,
)


def iter_memories(seed: int) -> Iterator[Memory]:
    """Distinct memories without end (each text new), the same for the same seed."""
    rng = random.Random(seed)
    seen: set[str] = set()
    while True:
        text, question = rng.choice(TEMPLATES)(rng)
        text += rng.choice(TAILS)
        if text in seen:
            continue
        seen.add(text)
        yield Memory(text, question)


def memories(count: int, seed: int) -> list[Memory]:
    """The first ``count`` memories of ``seed``."""
    out: list[Memory] = []
    for memory in iter_memories(seed):
        if len(out) == count:
            break
        out.append(memory)
    return out
