"""The word lists of the paraphrase benchmark: people, kin, value pools and relations.

A relation is something a statement can say about one person (or one of their
relatives): where they live, what they are allergic to, which editor they code
in. It has statement templates (how an agent would be told the fact) and
question templates (how someone would later ask about it in other words). A
value pool holds what the relation's slot can be filled with; each value has a
``text`` used in statements and ``hints`` used in questions: the kind of thing
it is, described without naming it ("Lyon" / "French city", "metformin" /
"diabetes medicine"). Questions name the person, paraphrase the relation and
at most hint at the value's kind, so the answer is found by meaning, not by
shared words.

Relations sharing a ``domain`` are siblings: a statement about one is a close
distractor for a question about another (lives in / works in / grew up in).
This vocabulary was written for this benchmark alone; it does not follow any
extractor's patterns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["FIRST_NAMES", "KIN", "POOLS", "RELATIONS", "SURNAMES", "Kin", "Relation", "Value"]


@dataclass(frozen=True)
class Value:
    """One filler of a relation's slot: ``text`` for statements, ``hints`` for
    questions (its kind, never its name), ``extra`` for templates with more slots."""

    text: str
    hints: tuple[str, ...] = ()
    extra: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Relation:
    """``statements`` use {s} (subject) and {v} (value); ``questions`` use {s}
    (subject in other words) and {h} (a hint of the value's kind)."""

    key: str
    domain: str
    pool: str
    statements: tuple[str, ...]
    questions: tuple[str, ...]
    subjects: tuple[str, ...] | None = None
    """Kin keys the relation may be about ("self" is the person); None: anyone."""


@dataclass(frozen=True)
class Kin:
    """A relative as a statement names it and as questions paraphrase it. Kin of
    the same ``group`` read the same in questions (sister, brother: "sibling"), so
    one person has at most one fact per relation per group."""

    word: str
    group: str
    paraphrases: tuple[str, ...] = field(default=())


KIN: dict[str, Kin] = {
    k.word: k
    for k in (
        Kin("self", "self"),
        Kin("sister", "sibling", ("sibling",)),
        Kin("brother", "sibling", ("sibling",)),
        Kin("mother", "mother", ("mum", "mom")),
        Kin("father", "father", ("dad",)),
        Kin("wife", "spouse", ("spouse", "other half")),
        Kin("husband", "spouse", ("spouse", "other half")),
        Kin("partner", "spouse", ("significant other", "other half")),
        Kin("daughter", "child", ("kid", "child")),
        Kin("son", "child", ("kid", "child")),
        Kin("grandmother", "grandmother", ("gran", "nana")),
        Kin("best friend", "best friend", ("closest pal", "BFF")),
        Kin("roommate", "roommate", ("flatmate", "housemate")),
        Kin("boss", "boss", ("manager", "supervisor")),
        Kin("colleague", "colleague", ("coworker", "workmate")),
    )
}
SPOUSES = ("wife", "husband", "partner")
RELATIVES_ONLY = tuple(k for k in KIN if k != "self")
ADULTS = tuple(k for k in KIN if k not in {"daughter", "son"})

FIRST_NAMES = (
    "Priya", "Tomás", "Dana", "Alice", "Omar", "Mei", "Lukas", "Fatima", "Jonas", "Aisha",
    "Mateo", "Ingrid", "Kwame", "Sofia", "Hiroshi", "Elena", "Ravi", "Chloe", "Daniel", "Nadia",
    "Pablo", "Zara", "Felix", "Hana", "Marcus", "Leila", "Ivan", "Grace", "Samir", "Yara",
    "Olivia", "Ben", "Rosa", "Arjun", "Maya", "Erik", "Lina", "Victor", "Amelia", "Diego",
)  # fmt: skip

SURNAMES = (
    "Raman", "Shah", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Kowalski", "Haddad", "Novak",
    "Fischer", "Brennan", "Alvarez", "Costa", "Nguyen", "Petrov", "Mensah", "Rossi", "Kaur",
    "O'Neill", "Bauer", "Dubois", "Kim", "Larsen", "Silva", "Horvat", "Jensen", "Quinn", "Sato",
    "Weber", "Yilmaz", "Zhou", "Abbott", "Castillo", "Eriksen", "Ferreira", "Goldberg", "Hughes",
    "Iyer", "Jovanovic", "Keller", "Lopez", "Murphy", "Nakamura", "Osei", "Park", "Reyes",
    "Sorensen", "Varga", "Walsh", "Adeyemi", "Bianchi", "Chen", "Duarte", "Engel", "Farouk",
    "Gallagher", "Hoffmann", "Ibrahim", "Kaplan", "Mwangi",
)  # fmt: skip


def _values(*items: tuple[str, ...] | str) -> tuple[Value, ...]:
    """("Lyon", "French city", "place in France") -> Value("Lyon", hints=(...))."""
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(Value(item))
        else:
            out.append(Value(item[0], tuple(item[1:])))
    return tuple(out)


def _cities() -> tuple[Value, ...]:
    countries = {
        "France": ("French", ("Lyon", "Toulouse", "Marseille", "Lille")),
        "Portugal": ("Portuguese", ("Porto", "Braga", "Coimbra")),
        "Japan": ("Japanese", ("Osaka", "Sapporo", "Fukuoka")),
        "Poland": ("Polish", ("Kraków", "Gdańsk", "Wrocław")),
        "Spain": ("Spanish", ("Valencia", "Seville", "Bilbao")),
        "Canada": ("Canadian", ("Calgary", "Halifax", "Winnipeg")),
        "Australia": ("Australian", ("Adelaide", "Perth", "Hobart")),
        "Italy": ("Italian", ("Bologna", "Turin", "Naples")),
        "Germany": ("German", ("Leipzig", "Hamburg", "Freiburg")),
        "Norway": ("Norwegian", ("Bergen", "Tromsø")),
        "the Netherlands": ("Dutch", ("Utrecht", "Groningen")),
        "Ireland": ("Irish", ("Cork", "Galway")),
    }
    return tuple(
        Value(city, (f"{adjective} city", f"city in {country}", f"place in {country}"))
        for country, (adjective, cities) in countries.items()
        for city in cities
    )


def _pets() -> tuple[Value, ...]:
    breeds = (
        ("beagle", "pup", "pooch"), ("border collie", "pup", "pooch"), ("dachshund", "pooch"),
        ("golden retriever", "pup", "pooch"), ("tabby", "feline", "kitty"),
        ("Siamese", "feline", "kitty"), ("Maine Coon", "feline"), ("lop-eared rabbit", "bunny"),
        ("cockatiel", "pet bird"), ("budgie", "pet bird"), ("bearded dragon", "reptile"),
        ("tortoise", "reptile"), ("hamster", "rodent"), ("guinea pig", "rodent"),
    )  # fmt: skip
    names = ("Biscuit", "Pepper", "Mochi", "Juniper", "Otis", "Pickle", "Ziggy", "Clementine")
    return tuple(
        Value(f"a {breed} named {name}", tuple(hints))
        for i, (breed, *hints) in enumerate(breeds)
        for name in (names[i % len(names)], names[(i * 3 + 1) % len(names)])
    )


def _breeds() -> tuple[Value, ...]:
    return tuple(
        Value(v.text.split(" named ")[0].removeprefix("a "), v.hints) for v in _pets()[::2]
    )


def _weekly() -> tuple[Value, ...]:
    activities = (
        ("yoga", "stretching class"), ("spin class", "indoor cycling session"),
        ("choir practice", "singing group"), ("Pilates", "core workout"),
        ("swimming lessons", "pool session"), ("book club", "reading circle"),
        ("therapy", "counselling session"), ("five-a-side football", "small-sided soccer game"),
    )  # fmt: skip
    days = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
    return tuple(
        Value(activity, (hint,), (("day", days[(i * 3 + j) % 7]),))
        for i, (activity, hint) in enumerate(activities)
        for j in range(3)
    )


def _appointments() -> tuple[Value, ...]:
    kinds = (
        ("dentist appointment", "dental check-up"), ("optician appointment", "vision exam"),
        ("physiotherapy session", "rehab visit"), ("haircut", "trim at the salon"),
        ("car service", "vehicle maintenance slot"),
        ("parent-teacher meeting", "school conference"),
        ("blood test", "lab work"), ("vet appointment", "animal clinic visit"),
    )  # fmt: skip
    dates = ("3 June", "the 14th", "Friday the 9th", "22 September", "Tuesday the 20th", "1 April")
    times = ("9:30", "4 pm", "11:15", "8 am", "2:45 pm")
    return tuple(
        Value(kind, (hint,), (("date", dates[(i + j) % 6]), ("time", times[(i * 2 + j) % 5])))
        for i, (kind, hint) in enumerate(kinds)
        for j in range(2)
    )


POOLS: dict[str, tuple[Value, ...]] = {
    "city": _cities(),
    "dwelling": _values(
        ("houseboat", "floating home"), ("studio apartment", "one-room flat"),
        ("farmhouse", "rural property"), ("loft conversion", "converted warehouse space"),
        ("terraced house", "row house"), ("bungalow", "single-storey house"),
        ("tiny house", "very small dwelling"), ("narrowboat", "canal vessel"),
    ),
    "temperature": _values(
        "18 degrees", "19 degrees", "20.5 degrees", "21 degrees", "22 degrees", "68 Fahrenheit",
        "72 Fahrenheit",
    ),
    "dish": _values(
        ("ramen", "Japanese noodle soup"), ("paella", "Spanish rice dish", "saffron rice dish"),
        ("pho", "Vietnamese soup"), ("tiramisu", "Italian dessert", "coffee-flavoured pudding"),
        ("pierogi", "Polish dumplings"), ("biryani", "spiced rice dish", "South Asian rice dish"),
        ("moussaka", "Greek casserole"), ("pad thai", "Thai noodle dish"),
        ("goulash", "Hungarian stew"), ("baklava", "honey pastry"),
        ("falafel", "chickpea fritters"),
        ("kimchi jjigae", "Korean stew", "spicy fermented-cabbage stew"),
        ("shakshuka", "eggs poached in tomato sauce"), ("fish and chips", "British takeaway"),
        ("tacos al pastor", "Mexican street food"), ("croissants", "French pastry"),
    ),
    "diet": _values(
        ("vegetarian", "meat-free"), ("vegan", "plant-based"),
        ("pescatarian", "fish-but-no-meat"), ("gluten-free", "wheat-free"),
        ("dairy-free", "milk-free"), ("keto", "low-carb"),
        ("strictly halal", "prepared under Islamic rules"),
        ("kosher", "prepared under Jewish dietary law"),
    ),
    "drink": _values(
        ("an oat-milk flat white", "coffee with plant milk"),
        ("a double espresso", "strong short coffee"), ("a chai latte", "spiced tea"),
        ("a decaf cappuccino", "caffeine-free coffee"), ("a hot chocolate", "cocoa"),
        ("a matcha latte", "powdered green tea"), ("black coffee with no sugar", "plain coffee"),
        ("a peppermint tea", "herbal infusion"),
    ),
    "allergen": _values(
        ("peanuts", "nut", "legume"), ("walnuts", "nut", "tree nut"), ("shellfish", "seafood"),
        ("penicillin", "antibiotic"), ("wasp stings", "insect"), ("latex", "rubber material"),
        ("cat dander", "pet fur"), ("sesame", "seed"), ("strawberries", "fruit", "berry"),
        ("kiwi", "fruit"), ("ibuprofen", "painkiller"), ("soy", "bean product"),
        ("birch pollen", "springtime airborne irritant"), ("dust mites", "household pest"),
    ),
    "medicine": _values(
        ("metformin", "diabetes medicine"), ("levothyroxine", "thyroid pill"),
        ("lisinopril", "blood pressure tablet"), ("sertraline", "antidepressant"),
        ("atorvastatin", "cholesterol drug"), ("omeprazole", "heartburn pill"),
        ("warfarin", "blood thinner"), ("melatonin", "sleep aid"),
        ("ferrous sulfate", "iron supplement"), ("cetirizine", "antihistamine"),
        ("montelukast", "asthma medicine"), ("propranolol", "beta blocker"),
    ),
    "condition": _values(
        ("asthma", "breathing condition", "lung condition"),
        ("type 2 diabetes", "blood sugar disorder"), ("migraines", "recurring headache problem"),
        ("coeliac disease", "autoimmune gut disorder"), ("a torn knee ligament", "leg injury"),
        ("tinnitus", "hearing problem"), ("eczema", "skin condition"),
        ("psoriasis", "skin condition"), ("sciatica", "back problem"),
        ("insomnia", "sleep disorder"), ("high blood pressure", "cardiovascular issue"),
        ("hay fever", "seasonal allergy"), ("anaemia", "blood disorder"),
    ),
    "job": _values(
        ("a paediatric nurse", "hospital", "healthcare"), ("a civil engineer", "infrastructure"),
        ("a dental hygienist", "oral health"), ("a sous-chef", "restaurant", "kitchen"),
        ("a chemistry teacher", "school", "education"), ("a tax accountant", "finance"),
        ("a firefighter", "emergency services"), ("an air traffic controller", "aviation"),
        ("a veterinarian", "animal care"), ("a UX designer", "tech"), ("an electrician", "trades"),
        ("a pharmacist", "drugstore", "healthcare"), ("a paramedic", "ambulance", "healthcare"),
        ("a court interpreter", "legal"), ("a barista", "coffee shop", "hospitality"),
        ("a data analyst", "tech"),
    ),
    "company": _values(
        "Vantor Systems", "Brightwell Bank", "Marlow & Finch", "Kestrel Air", "Tidewater Freight",
        "Greenleaf Markets", "Halcyon Games", "Solvane Energy", "Quillstone Press",
        "Cobalt Advisory", "Arbor Studio", "Nimbus Health", "Redfern Motors", "Lumen Labs",
    ),
    # Names that suit anyone, so "Dana's brother is called Sasha" never reads wrong.
    "given_name": _values(
        "Alex", "Sam", "Robin", "Jordan", "Charlie", "Noor", "Yuki", "Sasha", "Ariel", "Rowan",
        "Morgan", "Jamie", "Remy", "Kai", "Eden", "Avery", "Riley", "Toni",
    ),
    "age": _values(*(str(n) for n in (19, 23, 29, 34, 41, 47, 52, 58, 63, 71, 78, 84))),
    "date": _values(
        "14 March", "2 July", "30 November", "9 January", "21 August", "5 May", "17 October",
        "28 February", "12 December", "3 September",
    ),
    "hobby": _values(
        ("bouldering", "climbing"), ("marathon running", "endurance sport"),
        ("pottery", "ceramics", "clay craft"), ("birdwatching", "wildlife observation"),
        ("chess", "board game"), ("sourdough baking", "bread making"),
        ("woodworking", "carpentry"), ("sailing", "water sport"), ("salsa", "Latin dance"),
        ("knitting", "yarn craft"), ("fencing", "sword sport"),
        ("scuba diving", "underwater activity"), ("photography", "camera work"),
        ("kayaking", "paddle sport", "water sport"), ("beekeeping", "insect husbandry"),
    ),
    "instrument": _values(
        ("cello", "bowed string instrument"), ("trumpet", "brass instrument"),
        ("clarinet", "woodwind instrument"), ("drums", "percussion instrument"),
        ("ukulele", "small four-stringed instrument"), ("harp", "plucked instrument"),
        ("accordion", "squeezebox"), ("piano", "keyboard instrument"),
        ("saxophone", "jazz horn"), ("violin", "fiddle"), ("flute", "woodwind instrument"),
        ("bass guitar", "low-pitched string instrument"),
    ),
    "team": _values(
        ("Liverpool", "English football club"), ("FC Barcelona", "Catalan football club"),
        ("Ajax", "Dutch football club"), ("Bayern Munich", "German football club"),
        ("Juventus", "Italian football club"), ("the Boston Celtics", "basketball franchise"),
        ("the Chicago Cubs", "baseball team"), ("the All Blacks", "rugby side"),
        ("the Green Bay Packers", "American football team"),
        ("the Toronto Maple Leafs", "ice hockey team"),
    ),
    "band": _values(
        ("Radiohead", "British rock group"), ("ABBA", "Swedish pop group"),
        ("BTS", "K-pop group"), ("Daft Punk", "French electronic duo"),
        ("Metallica", "heavy metal act"), ("Fleetwood Mac", "classic soft-rock group"),
        ("Buena Vista Social Club", "Cuban ensemble"), ("Arctic Monkeys", "Sheffield indie group"),
        ("Coldplay", "stadium pop-rock group"), ("The Beatles", "sixties Liverpool group"),
    ),
    "pet": _pets(),
    "breed": _breeds(),
    "theme": _values(
        ("dark mode", "dim colour scheme"), ("light mode", "bright colour scheme"),
        ("high-contrast mode", "accessibility colour scheme"),
        ("sepia reading mode", "warm-tinted display setting"),
        ("a blue-light filter", "night-time screen tint"),
    ),
    "phone": _values(
        ("a Pixel 8", "Google handset", "Android handset"), ("an iPhone 15", "Apple handset"),
        ("a Galaxy S23", "Samsung handset", "Android handset"),
        ("a Fairphone 5", "repairable handset"), ("a Nokia flip phone", "basic handset"),
        ("a OnePlus 12", "Android handset"), ("a Sony Xperia", "Android handset"),
    ),
    "os": _values(
        ("Ubuntu", "Linux distribution"), ("Fedora", "Linux distribution"),
        ("Debian", "Linux distribution"), ("Windows 11", "Microsoft operating system"),
        ("macOS", "Apple operating system"), ("ChromeOS", "Google operating system"),
    ),
    "editor": _values(
        ("Vim", "terminal text editor"), ("Neovim", "terminal text editor"),
        ("Emacs", "Lisp-based editor"), ("VS Code", "Microsoft editor"),
        ("PyCharm", "JetBrains IDE"), ("IntelliJ IDEA", "JetBrains IDE"),
        ("Sublime Text", "lightweight editor"), ("Xcode", "Apple IDE"),
    ),
    "quiet_hours": _values(
        "after 9 pm", "from 10 pm to 7 am", "during meetings", "at weekends", "while driving",
        "after 8 pm on weekdays",
    ),
    "language": _values(
        ("Spanish", "Romance language"), ("Portuguese", "Romance language"),
        ("Italian", "Romance language"), ("German", "Germanic language"),
        ("Dutch", "Germanic language"), ("Japanese", "East Asian language"),
        ("Korean", "East Asian language"), ("Polish", "Slavic language"),
        ("Czech", "Slavic language"), ("Turkish", "Turkic language"),
        ("Swahili", "East African language"), ("Hindi", "South Asian language"),
    ),
    "weekly": _weekly(),
    "appointment": _appointments(),
    "wake_time": _values("4:45", "5:30", "6:15", "7 am", "8:30"),
    "bed_time": _values("9 pm", "10:30 pm", "11:15 pm", "midnight", "1 am"),
    "meeting_time": _values(
        "in the morning", "right after lunch", "late in the afternoon", "on Fridays",
        "before 10 am", "on Tuesdays and Thursdays",
    ),
    "rent": _values(
        "950 euros", "1,450 euros", "2,100 dollars", "780 pounds", "1,200 pounds",
        "3,000 Swiss francs", "1,650 dollars",
    ),
    "salary": _values(
        "48,000 euros", "62,000 dollars", "85,000 dollars", "39,500 pounds", "110,000 dollars",
        "54,000 euros", "71,000 pounds",
    ),
    "debt": _values("4,000 dollars", "12,500 pounds", "23,000 dollars", "8,200 euros"),
    "goal": _values(
        ("a house deposit", "a down payment on a home"), ("a trip to Japan", "a holiday in Asia"),
        ("a new car", "a vehicle"), ("retirement", "life after work"),
        ("a wedding", "a marriage ceremony"), ("the kids' college fees", "the children's tuition"),
        ("a cargo bike", "a family bicycle"), ("a sabbatical", "a year off work"),
        ("a new kitchen", "a home renovation"),
    ),
    "bank": _values(
        "Monzo", "Revolut", "ING", "Chase", "Barclays", "N26", "Santander", "Nationwide", "HSBC",
    ),
    "investment": _values(
        ("index funds", "passive trackers"), ("Bitcoin", "cryptocurrency"),
        ("rental property", "real estate"), ("government bonds", "fixed-income securities"),
        ("gold", "precious metal"), ("tech stocks", "Silicon Valley shares"),
    ),
    "subject": _values(
        ("marine biology", "ocean science"), ("mechanical engineering", "machine design"),
        ("art history", "the study of old masters"), ("economics", "markets and money"),
        ("nursing", "patient care"), ("computer science", "programming"),
        ("philosophy", "ethics and logic"), ("law", "legal studies"),
        ("architecture", "building design"), ("linguistics", "the science of language"),
        ("statistics", "data analysis"), ("astrophysics", "space science"),
    ),
    "school_year": _values(
        "fourth grade", "year 9", "kindergarten", "sixth form", "second grade", "year 2",
        "seventh grade",
    ),
    "destination": _values(
        ("Iceland", "Nordic island"), ("Bali", "Indonesian island"),
        ("Patagonia", "region at the tip of South America"), ("Morocco", "North African country"),
        ("Kyoto", "old Japanese capital"), ("the Amalfi Coast", "Italian coastline"),
        ("Vietnam", "Southeast Asian country"), ("the Scottish Highlands", "mountain region"),
        ("Cape Town", "South African city"), ("Peru", "Andean country"),
        ("Sicily", "Mediterranean island"), ("Crete", "Mediterranean island"),
    ),
    "seat": _values(
        "an aisle seat", "a window seat", "an exit-row seat", "a seat near the front",
        "a bulkhead seat",
    ),
    "month": _values(
        "March 2026", "August 2025", "January 2027", "October 2026", "May 2025", "June 2027",
    ),
    "car": _values(
        ("a Subaru Outback", "estate car"), ("a Tesla Model 3", "electric saloon"),
        ("a Vespa", "scooter"), ("a Ford F-150", "pickup truck"), ("a Toyota Prius", "hybrid"),
        ("a Volvo XC90", "Swedish SUV"), ("a Mini Cooper", "small British hatchback"),
        ("a Honda Civic", "compact Japanese car"), ("a Land Rover Defender", "off-roader"),
        ("a Renault Zoe", "small electric car"),
    ),
    "commute": _values(
        "by bike", "by train", "on foot", "by bus", "by ferry", "by car-share",
        "on an electric scooter", "by tram",
    ),
}  # fmt: skip


RELATIONS: tuple[Relation, ...] = (
    # home
    Relation(
        "lives_in", "places", "city",
        ("{s} lives in {v}.", "{s} rents a flat in {v}.", "{s} has settled in {v} for good.",
         "{s} bought a house in {v} two years ago."),
        ("Which {h} does {s} reside in?", "In which {h} is {s} living at the moment?",
         "Where does {s} currently reside — which {h}?"),
    ),
    Relation(
        "grew_up_in", "places", "city",
        ("{s} grew up in {v}.", "{s} was born and raised in {v}.",
         "{s} spent a whole childhood in {v}."),
        ("Which {h} did {s} come from originally?", "Where was {s} brought up — which {h}?",
         "In which {h} did {s} spend the early years?"),
    ),
    Relation(
        "home_type", "home", "dwelling",
        ("{s}'s home is a {v}.", "{s} has been renting a {v} since spring."),
        ("Is {s}'s place a {h}?", "What type of accommodation does {s} have?"),
        ADULTS,
    ),
    Relation(
        "thermostat", "home", "temperature",
        ("{s} keeps the thermostat at {v}.", "{s} sets the heating to {v} in winter."),
        ("How warm does {s} like the house?", "What indoor temperature does {s} prefer?"),
        ADULTS,
    ),
    # food
    Relation(
        "favourite_dish", "food", "dish",
        ("{s}'s favourite dish is {v}.", "{s} loves {v} more than any other food.",
         "{s} could happily eat {v} every single day."),
        ("Which {h} does {s} like best?", "What {h} would {s} pick above all other meals?"),
    ),
    Relation(
        "hated_dish", "food", "dish",
        ("{s} can't stand {v}.", "{s} refuses to eat {v}.", "{s} thinks {v} is disgusting."),
        ("Which {h} does {s} dislike?", "What {h} will {s} never touch?",
         "Which {h} does {s} find revolting?"),
    ),
    Relation(
        "signature_dish", "food", "dish",
        ("{s} makes {v} whenever friends come over.", "{s}'s signature recipe is {v}."),
        ("What {h} does {s} prepare when hosting guests?",
         "Which {h} does {s} serve at dinner parties?"),
        ADULTS,
    ),
    Relation(
        "diet", "food", "diet",
        ("{s} is {v}.", "{s} has been {v} since college."),
        ("What eating plan does {s} follow?", "Which dietary rules does {s} stick to?",
         "Is {s}'s food {h}?"),
    ),
    Relation(
        "usual_drink", "food", "drink",
        ("{s} always orders {v}.", "{s}'s usual drink at the café is {v}."),
        ("What does {s} get at the coffee shop?", "What beverage does {s} typically ask for?",
         "Does {s} like {h}?"),
    ),
    # health
    Relation(
        "allergy", "health", "allergen",
        ("{s} is allergic to {v}.", "{s} has a severe allergy to {v}.", "{s} reacts badly to {v}."),
        ("Which {h} triggers a bad reaction in {s}?",
         "What {h} must {s} avoid for medical reasons?",
         "Which {h} makes {s} break out in hives?"),
    ),
    Relation(
        "medication", "health", "medicine",
        ("{s} takes {v} every morning.", "{s} is on {v} at the moment.",
         "{s} was prescribed {v} in January."),
        ("Which {h} does {s} use daily?", "What {h} is part of {s}'s daily routine?",
         "Which {h} has the doctor given {s}?"),
    ),
    Relation(
        "condition", "health", "condition",
        ("{s} has {v}.", "{s} was diagnosed with {v} last year.",
         "{s} has been dealing with {v} for years."),
        ("What {h} does {s} suffer from?", "Which {h} is {s} managing?",
         "What {h} affects {s}?"),
    ),
    # work
    Relation(
        "job", "work", "job",
        ("{s} works as {v}.", "{s} is {v}.", "{s} has been {v} for ten years."),
        ("What does {s} do for a living?", "What is {s}'s occupation?",
         "Which {h} role does {s} hold?", "What {h} profession is {s} in?"),
        ADULTS,
    ),
    Relation(
        "former_job", "work", "job",
        ("{s} used to be {v} before retraining.", "{s} quit being {v} last year."),
        ("What was {s}'s previous career?", "Which {h} role did {s} leave behind?",
         "What line of work was {s} in formerly?"),
        ADULTS,
    ),
    Relation(
        "dream_job", "work", "job",
        ("{s} wants to become {v} one day.", "{s} hopes to retrain as {v}."),
        ("Which {h} career does {s} aspire to?", "What profession is {s} dreaming about?"),
    ),
    Relation(
        "employer", "work", "company",
        ("{s} works for {v}.", "{s} got a job at {v} in the spring.",
         "{s} is on the payroll at {v}."),
        ("Which company employs {s}?", "Who pays {s}'s salary?",
         "Where does {s} earn a paycheck?"),
        ADULTS,
    ),
    Relation(
        "interviewing", "work", "company",
        ("{s} has a job interview at {v} next week.", "{s} applied for a position at {v}."),
        ("Which company might hire {s} soon?", "Where is {s} hoping to get an offer?"),
        ADULTS,
    ),
    # family
    Relation(
        "name", "family", "given_name",
        ("{s} is named {v}.", "{s}'s name is {v}.", "{s} is called {v}."),
        ("What is {s} called?", "What name does {s} go by?", "Who is {s}, by first name?"),
        RELATIVES_ONLY,
    ),
    Relation(
        "age", "family", "age",
        ("{s} turned {v} this year.", "{s} is {v} years old."),
        ("How old is {s}?", "What age is {s}?"),
    ),
    Relation(
        "birthday", "family", "date",
        ("{s}'s birthday is on {v}.", "{s} was born on {v}."),
        ("On which date does {s} get a year older?",
         "When should we celebrate {s}'s big day each year?"),
    ),
    Relation(
        "home_language", "family", "language",
        ("{s} speaks {v} at home.", "{s} grew up speaking {v}."),
        ("What {h} does {s} talk with family in?", "Which {h} is {s}'s mother tongue?"),
    ),
    # hobbies and taste
    Relation(
        "hobby", "hobbies", "hobby",
        ("{s} is really into {v}.", "{s}'s main hobby is {v}.", "{s} took up {v} last year."),
        ("What {h} does {s} do for fun?", "Which {h} fills {s}'s free time?",
         "What leisure activity does {s} enjoy?"),
    ),
    Relation(
        "quit_hobby", "hobbies", "hobby",
        ("{s} gave up {v} after an injury.", "{s} stopped doing {v} years ago."),
        ("Which {h} did {s} abandon?", "What pastime did {s} drop?"),
    ),
    Relation(
        "teaches_hobby", "hobbies", "hobby",
        ("{s} teaches {v} classes on Saturdays.", "{s} coaches beginners in {v}."),
        ("Which {h} does {s} instruct others in?", "What activity does {s} give lessons in?"),
        ADULTS,
    ),
    Relation(
        "plays_instrument", "music", "instrument",
        ("{s} plays the {v}.", "{s} practises the {v} every evening.",
         "{s} has played the {v} since childhood."),
        ("Which {h} can {s} perform on?", "What {h} does {s} make music with?"),
    ),
    Relation(
        "learns_instrument", "music", "instrument",
        ("{s} is taking {v} lessons.", "{s} just started learning the {v}."),
        ("Which {h} is {s} studying with a tutor?", "What {h} is {s} a novice at?"),
    ),
    Relation(
        "favourite_band", "music", "band",
        ("{s}'s favourite band is {v}.", "{s} has seen {v} live five times."),
        ("Which {h} does {s} listen to most?", "What {h} is {s} obsessed with?"),
    ),
    Relation(
        "supports_team", "sport", "team",
        ("{s} supports {v}.", "{s} has had a season ticket for {v} for years."),
        ("Which {h} does {s} root for?", "What {h} is {s} a fan of?"),
    ),
    # pets
    Relation(
        "pet", "pets", "pet",
        ("{s} has {v}.", "{s} adopted {v} last winter."),
        ("What is {s}'s {h} called?", "What name did {s} give the {h}?"),
    ),
    Relation(
        "wants_pet", "pets", "breed",
        ("{s} would love to adopt a {v} someday.", "{s} is thinking about getting a {v}."),
        ("Which {h} would {s} like to bring home?", "What kind of {h} is {s} hoping for?"),
    ),
    # devices and software
    Relation(
        "screen_theme", "devices", "theme",
        ("{s} uses {v} in every app.", "{s} switched every screen to {v}."),
        ("Which {h} does {s} prefer on screens?",
         "Which {h} does {s} choose for phone and laptop?"),
    ),
    Relation(
        "phone", "devices", "phone",
        ("{s} uses {v}.", "{s} just bought {v}."),
        ("Which {h} does {s} carry?", "What kind of mobile does {s} own?"),
    ),
    Relation(
        "operating_system", "devices", "os",
        ("{s}'s laptop runs {v}.", "{s} installed {v} on the home computer."),
        ("Which {h} is on {s}'s notebook?", "What {h} does {s} use on the PC?"),
    ),
    Relation(
        "code_editor", "devices", "editor",
        ("{s} writes code in {v}.", "{s} does all the programming in {v}."),
        ("Which {h} does {s} develop software with?", "What {h} does {s} rely on for coding?"),
        ADULTS,
    ),
    Relation(
        "quiet_hours", "devices", "quiet_hours",
        ("{s} silences phone notifications {v}.", "{s} turns on do-not-disturb {v}."),
        ("When does {s} mute alerts?", "At what times will {s} not see messages?"),
    ),
    Relation(
        "device_language", "devices", "language",
        ("{s}'s phone is set to {v}.", "{s} keeps the laptop interface in {v}."),
        ("Which {h} does {s}'s mobile display menus in?",
         "What {h} does {s}'s device show its text in?"),
    ),
    # schedules
    Relation(
        "weekly_activity", "schedule", "weekly",
        ("{s} goes to {v} every {day}.", "{s} has {v} on {day} evenings."),
        ("On which weekday does {s} attend the {h}?", "What day of the week is {s}'s {h}?"),
    ),
    Relation(
        "appointment", "schedule", "appointment",
        ("{s} has a {v} on {date} at {time}.", "{s}'s {v} is booked for {date}, {time}."),
        ("When is {s}'s {h}?", "At what date and hour is {s} due for the {h}?"),
    ),
    Relation(
        "wake_time", "schedule", "wake_time",
        ("{s} wakes up at {v} every day.", "{s}'s alarm goes off at {v}."),
        ("How early does {s} get out of bed?", "What time does {s} rise in the morning?"),
    ),
    Relation(
        "bed_time", "schedule", "bed_time",
        ("{s} goes to bed at {v}.", "{s} is usually asleep by {v}."),
        ("When does {s} turn in for the night?", "What time does {s} retire each evening?"),
    ),
    Relation(
        "meeting_time", "schedule", "meeting_time",
        ("{s} prefers to schedule meetings {v}.", "{s} likes meetings to happen {v}."),
        ("What time of day suits {s} best for a call?",
         "When is {s} happiest to get together with the team?"),
        ADULTS,
    ),
    # finance
    Relation(
        "rent", "finance", "rent",
        ("{s} pays {v} a month in rent.", "{s}'s rent is {v} a month."),
        ("What is {s}'s housing cost?", "How expensive is {s}'s apartment?"),
        ADULTS,
    ),
    Relation(
        "salary", "finance", "salary",
        ("{s} earns {v} a year.", "{s}'s salary is {v} per year."),
        ("What is {s}'s annual income?", "How much money does {s} make annually?"),
        ADULTS,
    ),
    Relation(
        "student_debt", "finance", "debt",
        ("{s} still owes {v} on a student loan.", "{s} has {v} of student loans left."),
        ("How much education debt does {s} carry?", "What does {s} owe for university?"),
        ADULTS,
    ),
    Relation(
        "saving_for", "finance", "goal",
        ("{s} is saving up for {v}.", "{s} puts money aside every month for {v}."),
        ("What is {s} putting cash away for?", "Is {s} budgeting toward {h}?"),
    ),
    Relation(
        "bank", "finance", "bank",
        ("{s} keeps savings at {v}.", "{s} has a current account with {v}."),
        ("Which financial institution does {s} use?", "Where does {s} do banking?"),
        ADULTS,
    ),
    Relation(
        "investment", "finance", "investment",
        ("{s} invests in {v}.", "Most of {s}'s savings are in {v}."),
        ("Which {h} makes up {s}'s portfolio?", "What {h} does {s} hold money in?"),
        ADULTS,
    ),
    # education
    Relation(
        "degree", "education", "subject",
        ("{s} studied {v} at university.", "{s} has a degree in {v}.", "{s} majored in {v}."),
        ("What was {s}'s field at college?", "Which academic discipline did {s} specialise in?",
         "Is {s}'s background in {h}?"),
        ADULTS,
    ),
    Relation(
        "evening_course", "education", "subject",
        ("{s} is taking an evening course in {v}.", "{s} signed up for a night class in {v}."),
        ("Which part-time study is {s} enrolled in?",
         "What subject is {s} covering in adult education?"),
        ADULTS,
    ),
    Relation(
        "learning_language", "education", "language",
        ("{s} is learning {v}.", "{s} takes {v} classes twice a week."),
        ("Which {h} is {s} studying?", "What {h} is {s} trying to pick up?"),
    ),
    Relation(
        "school_year", "education", "school_year",
        ("{s} is in {v} at school.", "{s} just started {v}."),
        ("What school year is {s} in?", "Which class level has {s} reached?"),
        ("daughter", "son"),
    ),
    # travel
    Relation(
        "last_trip", "travel", "destination",
        ("{s} went to {v} last summer.", "{s} just got back from {v}."),
        ("Which {h} did {s} explore on the most recent holiday?",
         "Where did {s} vacation lately — which {h}?"),
    ),
    Relation(
        "bucket_list", "travel", "destination",
        ("{s} dreams of visiting {v} someday.", "{s} has always wanted to see {v}."),
        ("Which {h} is on {s}'s bucket list?", "What {h} does {s} hope to travel to eventually?"),
    ),
    Relation(
        "plane_seat", "travel", "seat",
        ("{s} always books {v} on long flights.", "{s} insists on {v} when flying."),
        ("Where on the aircraft does {s} prefer to be?",
         "Which spot in the cabin does {s} choose?"),
    ),
    Relation(
        "passport", "travel", "month",
        ("{s}'s passport expires in {v}.", "{s} needs to renew the passport before {v}."),
        ("When does {s}'s travel document run out?",
         "Until when is {s}'s ID for international trips valid?"),
    ),
    Relation(
        "visiting_city", "travel", "city",
        ("{s} is visiting {v} next month.", "{s} has a trip to {v} planned for October."),
        ("Which {h} will {s} travel to soon?", "Where is {s} headed on an upcoming getaway?"),
    ),
    # transport
    Relation(
        "car", "transport", "car",
        ("{s} drives {v}.", "{s} bought {v} last year."),
        ("Which {h} does {s} get around in?", "What vehicle does {s} own?"),
        ADULTS,
    ),
    Relation(
        "commute", "transport", "commute",
        ("{s} gets to the office {v}.", "{s} travels to work {v} every day."),
        ("How does {s} reach the workplace?", "What is {s}'s commuting method?"),
        ADULTS,
    ),
    Relation(
        "works_in", "places", "city",
        ("{s} works in {v}.", "{s} commutes to an office in {v}.",
         "{s}'s job is based in {v}."),
        ("In which {h} is {s} employed?", "Which {h} does {s} travel to for employment?"),
        ADULTS,
    ),
)  # fmt: skip
