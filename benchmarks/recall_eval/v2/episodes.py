"""Fact episodes of the v2 generator: the turns that hold answers, and the questions asked about them.

Each episode is one or more *parts* (a few consecutive turns, placed in increasing sessions) and the
questions it answers.  Turn speakers are 0 (the subject, whom the question names) and 1 (the partner).
Evidence is (part, turn) pairs; a temporal answer ("date", part, phrase) is resolved against the
session date of its part by the generator.  README.md ("v2") lists the kinds and why each is hard.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .world import (
    CITIES,
    DISHES,
    INSTRUMENTS,
    JOBS,
    LANDMARKS,
    PET_NAMES,
    PETS,
    RELATIVE_DAYS,
    RELATIVES,
    THIRD_NAMES,
    WEEKDAYS,
)

Person = tuple[str, str, str]  # name, pronoun, possessive


@dataclass
class Episode:
    kind: str
    parts: list[list[tuple[int, str]]]
    questions: list[dict[str, Any]] = field(default_factory=list)
    gap: int = 1  # at least this many sessions between consecutive parts
    keys: set[str] = field(default_factory=set)  # topics: once per subject; "!..." once per conversation


#: share of the questions asked in the evidence turn's own words where a kind has both (a user often reuses them)
LITERAL = 0.5


def _when(rng: random.Random) -> str:
    return str(rng.choice([*RELATIVE_DAYS, *(f"last {d}" for d in WEEKDAYS[4:])]))


def _a(word: str) -> str:
    return ("an " if word[0].lower() in "aeiou" else "a ") + word


def _q(text: str, ev: list[tuple[int, int]], cat: str, answer: Any) -> dict[str, Any]:
    return {"question": text, "evidence": ev, "category": cat, "answer": answer}


# --- open-domain: the question names the other side of a world table ----------------------------
def studied(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, poss = me
    city = rng.choice(list(CITIES))
    said = rng.choice(
        [
            f"I did my exchange year in {city}, best year of my life",
            f"when I was doing my master's in {city} I lived on toast and coffee",
            f"it reminds me of my student days in {city}, the cheap bars by the river",
            f"I still dream in the language sometimes, five years of uni in {city} will do that",
        ]
    )
    asks = rng.choice(
        [
            f"Which country did {name} study in?",
            f"In what country was {name} a university student?",
            f"Where abroad did {name} go to university?",
            f"Which country did {name} live in as a student?",
        ]
    )
    return Episode(
        "studied",
        [
            [
                (
                    1,
                    rng.choice(
                        [
                            "did you ever live abroad?",
                            "where were you before here?",
                            "you've moved around a lot, right?",
                        ]
                    ),
                ),
                (0, said),
            ]
        ],
        [_q(asks, [(0, 1)], "open-domain", CITIES[city])],
        keys={"studied"},
    )


def dish(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, _ = me
    d = rng.choice(list(DISHES))
    said = rng.choice(
        [
            f"I attempted {d} from scratch tonight, the kitchen looks like a crime scene",
            f"made {d} for the first time, took four hours but worth it",
            f"guess who finally nailed {d}? this guy. well, this cook",
        ]
    )
    asks = rng.choice(
        [
            f"Which {DISHES[d]} dish did {name} cook at home?",
            f"What {DISHES[d]} food did {name} make?",
            f"{name} prepared a {DISHES[d]} meal; what was it?",
        ]
    )
    if rng.random() < LITERAL:
        asks = f"What did {name} make for the first time from scratch?"
    return Episode(
        "dish",
        [[(0, said), (1, rng.choice(["save me some!", "recipe please", "impressive"]))]],
        [_q(asks, [(0, 0)], "open-domain", d)],
        keys={f"cuisine:{DISHES[d]}"},
    )


def instrument(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, _ = me
    ins = rng.choice(list(INSTRUMENTS))
    said = rng.choice(
        [
            f"I bought a second-hand {ins} and booked lessons, midlife crisis mode",
            f"first {ins} lesson today, I sound like a dying goose",
            f"the {ins} teacher says I practise too little. she's right",
        ]
    )
    asks = rng.choice(
        [
            f"Which {INSTRUMENTS[ins]} instrument is {name} learning?",
            f"What {INSTRUMENTS[ins]} instrument did {name} take up?",
        ]
    )
    return Episode(
        "instrument",
        [[(0, said)]],
        [_q(asks, [(0, 0)], "open-domain", ins)],
        keys={f"family:{INSTRUMENTS[ins]}"},
    )


def landmark(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, poss = me
    lm = rng.choice(list(LANDMARKS))
    said = rng.choice(
        [
            f"we queued two hours for {lm} but wow, worth every minute",
            f"photos from {lm} coming, my feet are destroyed",
            f"stood in front of {lm} at sunrise, nobody else around",
        ]
    )
    asks = rng.choice(
        [
            f"Which city did {name} visit on {poss} trip?",
            f"What city was {name} travelling in?",
            f"Where did {name} go sightseeing?",
        ]
    )
    return Episode(
        "landmark",
        [[(1, rng.choice(["how's the trip going??", "send pics!", "are you there yet?"])), (0, said)]],
        [_q(asks, [(0, 1)], "open-domain", LANDMARKS[lm])],
        keys={"trip"},
    )


def relative_field(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, _ = me
    rel = rng.choice(list(RELATIVES))
    job = rng.choice(list(JOBS))
    x = rng.choice(THIRD_NAMES)
    p = RELATIVES[rel][0]
    said = rng.choice(
        [
            f"{x} finally qualified as {_a(job)}, we're all so proud",
            f"{x} started as {_a(job)} this month, {p} loves it already",
        ]
    )
    asks = rng.choice(
        [f"Which field does {name}'s {rel} work in?", f"What sector is {name}'s {rel} employed in?"]
    )
    return Episode(
        "relative_field",
        [[(0, f"my {rel} {x} has news"), (1, "ooh tell me"), (0, said)]],
        [_q(asks, [(0, 2)], "open-domain", JOBS[job])],
        keys={f"rel:{rel}", f"!{x}"},
    )


# --- single-hop with ellipsis and pronouns: the answer turn does not name its topic ------------------
THINGS = [  # intro (3rd person), question noun
    ("went to look at that flat on {street}", "apartment {p} viewed"),
    ("had a trial day at the new bakery job", "job {p} tried out"),
    ("went to that new tapas place everyone talks about", "restaurant {p} went to"),
    ("test-drove the second-hand car from the ad", "used vehicle {p} considered buying"),
    ("went on the blind date I set up", "date {name} arranged"),
    ("tried the hot yoga class", "exercise class {p} attended"),
    ("visited the wedding venue by the lake", "place {p} looked at for the wedding"),
    ("saw the new dentist", "appointment with the tooth doctor"),
]
VERDICTS = [
    "{P} said it was way too far from everything",
    "apparently it was too loud to even think",
    "{P} reckons they were overcharging",
    "{P} loved it, already going back",
    "not for {o}, {p} said the vibe was off",
    "{P} said never again, ever",
    "{P} cried the whole way home, in a good way",
    "{P} said it smelled of damp",
    "honestly {p} wasn't impressed, said it was tiny",
    "{P} came home grinning, so good I think",
]
STREETS = ["Mill Road", "Canal Street", "Elm Grove", "Station Hill", "Harbour Lane", "Queen's Parade"]
OBJ = {"she": "her", "he": "him", "they": "them"}


def ellipsis_third(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, _ = me
    rel = rng.choice(list(RELATIVES))
    x = rng.choice(THIRD_NAMES)
    p = RELATIVES[rel][0]
    intro, noun = rng.choice(THINGS)
    intro = intro.format(street=rng.choice(STREETS))
    verdict = rng.choice(VERDICTS).format(P=p.capitalize(), p=p, o=OBJ[p])
    noun = noun.format(p=p, name=name)
    asks = rng.choice(
        [
            f"What did {name}'s {rel} think of the {noun}?",
            f"How did {name}'s {rel} find the {noun}?",
            f"What was the verdict of {name}'s {rel} on the {noun}?",
        ]
    )
    when = _when(rng)
    return Episode(
        "ellipsis_third",
        [
            [
                (0, f"{x} {intro} {when}"),
                (1, rng.choice(["and?", f"did {p} like it?", "aaand?", "how was it?"])),
                (0, verdict),
            ]
        ],
        [_q(asks, [(0, 2)], "single-hop", verdict)],
        keys={f"rel:{rel}", f"!{x}"},
    )


OWN = [  # what the partner asks about, the question's noun, the subject's reply (no topic words)
    (
        "How did the interview go?",
        "job interview",
        [
            "Better than I expected, they want me back Thursday",
            "Total disaster, I blanked on the second question",
        ],
    ),
    (
        "how was the date??",
        "first date",
        ["We talked until they closed the place", "Let's just say I left early"],
    ),
    (
        "how did the exam go?",
        "statistics test",
        ["I think I passed? The last part was brutal", "Finished with twenty minutes to spare, feeling good"],
    ),
    (
        "how's the knee after the op?",
        "knee surgery",
        ["Swollen like a melon but the physio is happy", "Can walk without crutches since Sunday"],
    ),
    (
        "how did the pitch go?",
        "client presentation",
        [
            "They signed on the spot, I nearly fainted",
            "The projector died halfway, I improvised with a whiteboard",
        ],
    ),
    (
        "how was the move?",
        "moving house",
        [
            "Three flights of stairs and no lift, my arms are gone",
            "Everything's in, apart from the sofa, which didn't fit",
        ],
    ),
]


def ellipsis_own(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, poss = me
    ask, noun, replies = rng.choice(OWN)
    reply = rng.choice(replies)
    asks = rng.choice(
        [
            f"How did {name}'s {noun} turn out?",
            f"What happened at {name}'s {noun}?",
            f"How did {name} do at {poss} {noun}?",
        ]
    )
    return Episode(
        "ellipsis_own",
        [[(1, ask), (0, reply)]],
        [_q(asks, [(0, 1)], "single-hop", reply)],
        keys={f"own:{noun}"},
    )


DISLIKES = {
    "coriander": "herb",
    "aubergine": "vegetable",
    "blue cheese": "cheese",
    "liquorice": "sweet",
    "oysters": "seafood",
    "mushrooms": "fungus",
    "grapefruit": "fruit",
    "gin": "spirit",
}


def dislike(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, _ = me
    food = rng.choice(list(DISLIKES))
    said = rng.choice(
        [
            f"no {food} for me please, tastes like punishment",
            f"I'd rather starve than eat {food}, sorry",
            f"they put {food} in everything there, I had to pick it all out",
        ]
    )
    asks = rng.choice(
        [f"Which {DISLIKES[food]} does {name} hate?", f"What {DISLIKES[food]} does {name} refuse to eat?"]
    )
    return Episode(
        "dislike", [[(0, said)]], [_q(asks, [(0, 0)], "single-hop", food)], keys={f"dislike:{DISLIKES[food]}"}
    )


# --- temporal: events with relative time, and facts that changed ---------------------------------
EVENTS = [  # said (with {when}), asked in other words, asked in the turn's words (verb phrases)
    (
        "I sat my driving test {when} and passed first try",
        "become a licensed driver",
        "sit {poss} driving test",
    ),
    (
        "{when} I ran my first half marathon, legs are still dead",
        "complete a 21 km race",
        "run {poss} first half marathon",
    ),
    (
        "we signed the lease on the new place {when}",
        "agree to rent a new home",
        "sign the lease on {poss} new place",
    ),
    (
        "{when} I had my wisdom teeth pulled, living on soup",
        "have dental surgery",
        "have {poss} wisdom teeth pulled",
    ),
    (
        "{when} I finally handed in my thesis, printed and bound",
        "submit {poss} dissertation",
        "hand in {poss} thesis",
    ),
    (
        "{when} I presented at the regional conference, hands shaking the whole time",
        "give a talk at an event",
        "present at the regional conference",
    ),
    ("I got the cast off my wrist {when}", "recover from {poss} broken arm", "get the cast off {poss} wrist"),
    (
        "{when} I volunteered at the food bank for the first time",
        "help out at a charity",
        "volunteer at the food bank",
    ),
    (
        "I had my citizenship interview {when}, so nervous",
        "go through the naturalisation process",
        "have {poss} citizenship interview",
    ),
    (
        "{when} the roof started leaking right over the bed",
        "have water coming through the ceiling",
        "find {poss} roof leaking",
    ),
    (
        "I rode a horse for the first time {when}, my thighs hate me",
        "go horseback riding",
        "ride a horse for the first time",
    ),
    (
        "{when} we hosted a board game night, twelve people in a tiny flat",
        "throw a party at home",
        "host a board game night",
    ),
    (
        "my bike got nicked outside the library {when}",
        "lose {poss} bicycle to a thief",
        "get {poss} bike nicked",
    ),
    ("{when} I dyed my hair bright copper", "change {poss} hair colour", "dye {poss} hair copper"),
    ("I got my first tattoo {when}, a small swallow on my ankle", "get inked", "get {poss} first tattoo"),
    (
        "{when} I tried stand-up at an open mic night",
        "perform comedy on stage",
        "try stand-up at an open mic",
    ),
    (
        "we were stuck at the airport for nine hours {when}",
        "have {poss} flight badly delayed",
        "get stuck at the airport",
    ),
    ("{when} I got promoted to team lead", "move up at work", "get promoted to team lead"),
    ("I passed the B2 German exam {when}", "get a language certificate", "pass the B2 German exam"),
    (
        "{when} I took mum to the ballet for her birthday",
        "see a dance performance with {poss} mother",
        "take {poss} mum to the ballet",
    ),
    (
        "the car failed its MOT {when}",
        "have {poss} vehicle rejected at its yearly check",
        "have {poss} car fail its MOT",
    ),
    (
        "{when} my sister had the baby, a little boy!",
        "become an aunt or uncle",
        "find out {poss} sister had the baby",
    ),
    ("I quit sugar {when}, day one was hell", "give up sweets", "quit sugar"),
    (
        "{when} I sold my old sofa online to a very weird man",
        "get rid of a piece of furniture",
        "sell {poss} old sofa online",
    ),
]


def event(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, poss = me
    said, other, literal = rng.choice(EVENTS)
    asked = literal if rng.random() < LITERAL else other
    when = _when(rng)
    text = said.format(when=when)
    text = text[0].upper() + text[1:]
    asks = f"When did {name} {asked.format(poss=poss)}?"
    ep = Episode(
        "event",
        [[(0, text), (1, rng.choice(["wow", "nooo", "amazing!", "how did that go?", "haha what"]))]],
        [_q(asks, [(0, 0)], "temporal", ("date", 0, when))],
        keys={f"event:{other}"},
    )
    return ep


def job_change(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, poss = me
    old, new = rng.sample(list(JOBS), 2)
    first = rng.choice(
        [
            f"another double shift, being {_a(old)} is slowly killing me",
            f"ten years as {_a(old)} and I still get nervous on Mondays",
        ]
    )
    later = rng.choice(
        [f"first week as {_a(new)} done! no regrets", f"so I handed in my notice. I'm going to be {_a(new)}"]
    )
    asks_old = rng.choice(
        [
            f"What did {name} do for a living before switching careers?",
            f"What was {name}'s previous occupation?",
        ]
    )
    asks_new = rng.choice([f"What is {name}'s profession now?", f"Which career did {name} move into?"])
    return Episode(
        "job_change",
        [[(0, first), (1, "oof")], [(1, "any news?"), (0, later)]],
        [_q(asks_old, [(0, 0)], "temporal", old), _q(asks_new, [(1, 1)], "temporal", new)],
        gap=3,
        keys={"job"},
    )


def moved(rng: random.Random, me: Person, you: str) -> Episode:
    name, p, _ = me
    c1, c2 = rng.sample(list(CITIES), 2)
    first = rng.choice(
        [f"lovely walk along the water here in {c1} tonight", f"{c1} in the rain is still my favourite thing"]
    )
    later = rng.choice(
        [f"first night in {c2}, boxes everywhere", f"still can't believe I actually live in {c2} now"]
    )
    asks = rng.choice(
        [
            f"Which country did {name} live in before {p} moved?",
            f"In which country was {name} based before relocating?",
        ]
    )
    return Episode(
        "moved",
        [[(0, first)], [(0, later), (1, "welcome home!")]],
        [_q(asks, [(0, 0)], "temporal", CITIES[c1])],
        gap=4,
        keys={"moved"},
    )


# --- multi-hop: two facts in different sessions ------------------------------------------------
def pet(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, poss = me
    breed = rng.choice(list(PETS))
    pn = rng.choice(PET_NAMES)
    adopt = rng.choice(
        [
            f"we brought home {_a(breed)} from the shelter! calling it {pn}",
            f"meet {pn}, our new {breed}, already ruling the house",
        ]
    )
    later, told = rng.choice(
        [
            (f"{pn} ate an entire sock, vet says all fine", "swallowed a piece of clothing"),
            (f"{pn} escaped into the neighbour's garden again", "keeps running off next door"),
            (
                f"{pn} slept on my laptop during a call, my boss loved it",
                "napped on a computer during a work meeting",
            ),
        ]
    )
    asks = rng.choice(
        [f"What breed is the pet of {name} that {told}?", f"What kind of {PETS[breed]} does {name} have?"]
    )
    return Episode(
        "pet",
        [[(0, adopt), (1, "pics or it didn't happen")], [(0, later)]],
        [_q(asks, [(0, 0), (1, 0)], "multi-hop", breed)],
        gap=2,
        keys={"pet", f"!{pn}"},
    )


def relative_city(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, _ = me
    rel = rng.choice(list(RELATIVES))
    x = rng.choice(THIRD_NAMES)
    city = rng.choice(list(CITIES))
    p = RELATIVES[rel][0]
    first = rng.choice(
        [
            f"my {rel} {x} lives in {city} now, we barely see each other",
            f"{x}, my {rel}, moved out to {city} for work",
        ]
    )
    later, told = rng.choice(
        [
            (f"{x} is getting married in the spring!", "is tying the knot"),
            (f"{x} called, {p}'s expecting twins", "is about to have two babies"),
            (f"{x} just bought a tiny house with a huge garden", "became a homeowner"),
        ]
    )
    asks = f"In which country does the {rel} of {name} who {told} live?"
    return Episode(
        "relative_city",
        [[(0, first)], [(0, later)]],
        [_q(asks, [(0, 0), (1, 0)], "multi-hop", CITIES[city])],
        gap=2,
        keys={f"rel:{rel}", f"!{x}"},
    )


def studied_return(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, poss = me
    city = rng.choice(list(CITIES))
    first = f"my year in {city} changed me honestly"
    later = rng.choice(
        ["booked flights back to see my old host family!", "going back to visit my old flatmates in June"]
    )
    asks = f"Which country is {name} flying to in order to visit {poss} former hosts?"
    return Episode(
        "studied_return",
        [[(1, "what was the best year of your life?"), (0, first)], [(0, later)]],
        [_q(asks, [(0, 1), (1, 0)], "multi-hop", CITIES[city])],
        gap=3,
        keys={"studied"},
    )


DETAILS = [  # said (with {v}), asked in other words, asked in the turn's words, values
    (
        "our allotment plot is number {v}, right by the gate",
        "Which number is {name}'s vegetable garden plot?",
        "What number is {name}'s allotment plot?",
        ["7", "12", "19", "23", "31", "44"],
    ),
    (
        "new flat is on the {v} floor, no lift obviously",
        "How high up is {name}'s apartment?",
        "Which floor is {name}'s new flat on?",
        ["third", "fourth", "fifth", "sixth"],
    ),
    (
        "the choir rehearses every {v} night in the old church hall",
        "On which evening does {name}'s singing group meet?",
        "Which night does {name}'s choir rehearse?",
        ["Monday", "Tuesday", "Wednesday", "Thursday"],
    ),
    (
        "I'm renting a little {v} for the summer, it's ridiculous and I love it",
        "What vehicle is {name} hiring for the summer?",
        "What is {name} renting for the summer?",
        ["camper van", "scooter", "canal boat", "vintage convertible"],
    ),
    (
        "booked the {v} for the anniversary, the one with the view",
        "Where is {name} celebrating the anniversary?",
        "What did {name} book for the anniversary?",
        ["rooftop restaurant", "cabin in the woods", "lighthouse hotel"],
    ),
    (
        "my commute is {v} minutes each way now, I'm reading a book a week",
        "How long does {name}'s trip to work take?",
        "How many minutes is {name}'s commute?",
        ["40", "55", "70", "85"],
    ),
    (
        "the new boss is called {v}, seems alright so far",
        "Who is {name}'s new manager at work?",
        "What is the name of {name}'s new boss?",
        ["Margit", "Desmond", "Ayesha", "Gunnar"],
    ),
    (
        "I've been sleeping with a {v} on, game changer",
        "What does {name} wear in bed to sleep better?",
        "What does {name} sleep with on?",
        ["silk eye mask", "pair of wool socks", "mouth guard"],
    ),
]


def detail(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, _ = me
    said, other, literal, values = rng.choice(DETAILS)
    v = rng.choice(values)
    text = said.format(v=v)
    asks = (literal if rng.random() < LITERAL else other).format(name=name)
    return Episode(
        "detail",
        [[(0, text[0].upper() + text[1:])]],
        [_q(asks, [(0, 0)], "single-hop", v)],
        keys={f"detail:{other}"},
    )


GIFTS = [  # the gift, what later happened to it (said), how the question tells it
    ("a bonsai tree", "the bonsai finally died, I'm a plant murderer", "plant that died"),
    (
        "a fancy espresso machine",
        "the espresso machine started leaking everywhere",
        "coffee maker that broke",
    ),
    ("a vintage film camera", "got the first roll developed from the old camera, half are blurry", "camera"),
    ("a knitted jumper", "the jumper shrank in the wash, it fits a child now", "sweater that shrank"),
    ("a sourdough starter", "the starter smells like nail polish remover now", "bread culture that went off"),
    ("a pair of roller skates", "fell off the skates and bruised my whole hip", "skates {p} fell off"),
]


def gift(rng: random.Random, me: Person, you: str) -> Episode:
    name, p, _ = me
    rel = rng.choice(list(RELATIVES))
    x = rng.choice(THIRD_NAMES)
    thing, later, told = rng.choice(GIFTS)
    first = rng.choice(
        [
            f"my {rel} {x} got me {thing} for my birthday, so thoughtful",
            f"{x} (my {rel}) turned up with {thing} as a present",
        ]
    )
    asks = f"What is the name of the person who gave {name} the {told.format(p=p)}?"
    return Episode(
        "gift",
        [[(0, first), (1, "aww")], [(0, later)]],
        [_q(asks, [(0, 0), (1, 0)], "multi-hop", x)],
        gap=2,
        keys={f"rel:{rel}", f"!{x}", f"gift:{thing}"},
    )


def coworker_trip(rng: random.Random, me: Person, you: str) -> Episode:
    name, _, poss = me
    x = rng.choice(THIRD_NAMES)
    city = rng.choice(list(CITIES))
    first = rng.choice(
        [f"{x} from work is off to {city} for a month, jealous", f"{x} got sent to {city} by the company"]
    )
    later, told = rng.choice(
        [
            (f"{x} sent me a postcard, finally", "mailed {name} a card from abroad"),
            (f"{x} is back and brought me the weirdest snacks", "came back with odd treats for {name}"),
        ]
    )
    asks = f"Which country did the coworker who {told.format(name=name)} travel to?"
    return Episode(
        "coworker_trip",
        [[(0, first)], [(0, later), (1, "haha cute")]],
        [_q(asks, [(0, 0), (1, 0)], "multi-hop", CITIES[city])],
        gap=2,
        keys={f"!{x}", f"trip:{told}"},
    )


KINDS: dict[str, Callable[[random.Random, Person, str], Episode]] = {
    "studied": studied,
    "dish": dish,
    "instrument": instrument,
    "landmark": landmark,
    "relative_field": relative_field,
    "ellipsis_third": ellipsis_third,
    "ellipsis_own": ellipsis_own,
    "dislike": dislike,
    "event": event,
    "job_change": job_change,
    "moved": moved,
    "pet": pet,
    "relative_city": relative_city,
    "studied_return": studied_return,
    "gift": gift,
    "coworker_trip": coworker_trip,
    "detail": detail,
}
#: how often each kind is drawn (about 35 % single-hop, 30 % temporal, 15 % multi-hop, 20 % open-domain)
MIX = {
    "studied": 2,
    "dish": 2,
    "instrument": 1,
    "landmark": 2,
    "relative_field": 2,
    "ellipsis_third": 3,
    "ellipsis_own": 3,
    "detail": 4,
    "dislike": 2,
    "event": 8,
    "job_change": 2,
    "moved": 2,
    "pet": 3,
    "relative_city": 3,
    "studied_return": 2,
    "gift": 2,
    "coworker_trip": 2,
}
