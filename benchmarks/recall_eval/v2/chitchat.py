"""Distractor turns of the v2 generator: chit-chat and near misses (see README.md, "v2").

Fillers reuse the vocabulary of the facts (cities, dishes, relatives, jobs, events) without holding
any answer: plans, wishes, other people's stories, reactions.  A retriever that matches topics
instead of the asked fact lands on them.
"""

from __future__ import annotations

import random

from .episodes import EVENTS
from .world import CITIES, DISHES, INSTRUMENTS, JOBS, LANDMARKS, PETS, RELATIVES, THIRD_NAMES, WEEKDAYS

OPENERS = [
    "hey {B}! sorry, this week got away from me",
    "{B}!! finally a quiet evening",
    "morning! how are things over there?",
    "hiya, you alive?",
    "long time no chat, how have you been?",
    "ok I have ten minutes, tell me everything",
    "hello from the sofa, I refuse to move tonight",
    "evening! did you survive the week?",
]
CLOSERS = [
    "gotta run, talk soon",
    "ok dinner is ready, speak later!",
    "night night",
    "laters, say hi to everyone",
    "I need to sleep, big day tomorrow",
    "ok off I go, byeee",
    "talk next week?",
    "sure, same time next week",
]
REACTIONS = [
    "haha",
    "lol",
    "oh no",
    "no way!",
    "that's amazing",
    "ugh, typical",
    "wait really?",
    "hahaha stop",
    "aw that's lovely",
    "classic",
    "fair enough",
    "oof",
    "tell me about it",
    "I'm so jealous",
    "same here honestly",
    "that sounds exhausting",
    "you deserve it",
    "omg",
    "yikes",
    "ha, of course",
    "nice nice",
    "mmm",
]
CHAT = [
    "the weather here has been grey for about nine days straight",
    "I've been binge-watching that baking show again, no regrets",
    "work was a nightmare, three meetings that could have been emails",
    "my {rel} keeps sending me voice notes that are six minutes long",
    "what are you up to this weekend?",
    "not much, laundry and a long walk probably",
    "I really need a holiday, somewhere warm with no wifi",
    "did you see the news about the train strike? chaos",
    "I started a new book, a thriller, can't put it down",
    "my phone screen cracked again, third time this year",
    "I'm trying to drink less coffee. it's going badly",
    "the neighbours are renovating, drilling from 8am every day",
    "I made way too much soup, I'll be eating it until Thursday",
    "we should do a video call soon, typing is slow",
    "honestly the best part of my week was a nap",
    "I signed up for a gym and have been twice. in a month",
    "do you still do that thing where you plan meals on Sunday?",
    "I keep meaning to call my {rel} back and forgetting",
    "my plants are dying again, I think I overwater them",
    "the supermarket moved everything around, I was lost for twenty minutes",
    "I'm so tired, I went to bed at 1 again",
    "my {rel} {name} says hi by the way",
    "{name} from my old job got in touch out of nowhere",
    "the heating broke on the coldest day, of course",
    "I watched a documentary about {landmark} last night, really good",
    "{city} keeps coming up in my feed, everyone's going there this year",
    "we ordered {dish} last night, too lazy to cook",
    "I'd love to see {landmark} one day, it's on the list",
    "my {rel} wants to learn the {instrument}, poor neighbours",
    "I almost applied for a {job} job once, can you imagine",
    "{name} is thinking about moving to {city}, no idea why",
    "there's a new place near me that does {dish}, must try it",
    "my {rel} has a {breed} and it's the laziest animal alive",
    "I keep seeing flights to {city} for cheap, so tempting",
    "have you ever tried making {dish}? looks hard",
    "someone on the bus was playing the {instrument} at full volume, at 7am",
    "{name} just got a job as a {job}, good for them",
    "what did you do on {weekday}?",
    "nothing much on {weekday}, just errands",
    "I had a dream I was back in school doing exams, woke up stressed",
    "anyway, enough about me",
    "how's everyone at home?",
    "all good here, the usual chaos",
    "we're thinking about repainting the kitchen, green maybe",
    "the dentist said I grind my teeth, so that's fun",
    "I finished that puzzle, 1000 pieces, took three weeks",
    "my {rel} is coming over for dinner and I have no plan",
    "remember when we got lost on the way to that festival? still laughing",
    "is it bad that I've worn the same hoodie four days in a row",
    "I tried a new running route and ended up at a motorway",
    "my inbox is at 2000 unread, I've given up",
    "I should really learn to cook properly one day",
    "I'm making a playlist for the car, send me songs",
    "work is calmer this week thankfully",
    "my back hurts from sitting all day",
    "we had a power cut for two hours, played cards by candlelight",
    "I think I'm getting a cold, my throat is scratchy",
    "going to my {rel}'s place on {weekday} for lunch",
]


def fill(template: str, rng: random.Random, partner: str) -> str:
    return template.format(
        B=partner,
        rel=rng.choice(list(RELATIVES)),
        name=rng.choice(THIRD_NAMES),
        city=rng.choice(list(CITIES)),
        dish=rng.choice(list(DISHES)),
        landmark=rng.choice(list(LANDMARKS)),
        instrument=rng.choice(list(INSTRUMENTS)),
        job=rng.choice(list(JOBS)),
        breed=rng.choice(list(PETS)),
        weekday=rng.choice(WEEKDAYS),
    )


NEAR_MISS = [  # someone else's event, or one that did not happen, in the words a question may use
    ("{name} is going to {event} next month, fingers crossed", "their"),
    ("I would never {event}, not in a million years", "my"),
    ("do you remember when {name} tried to {event}? chaos", "their"),
    ("my {rel} wants to {event} this year", "their"),
    ("thinking I might {event} at some point, who knows", "my"),
]


def filler(rng: random.Random, partner: str) -> str:
    """A chit-chat turn: 30 % reactions, 15 % near misses of an event, the rest chat."""
    r = rng.random()
    if r < 0.3:
        return fill(rng.choice(REACTIONS), rng, partner)
    if r < 0.45:
        template, poss = rng.choice(NEAR_MISS)
        event = rng.choice(EVENTS)[2].format(poss=poss)
        return fill(template.replace("{event}", event), rng, partner)
    return fill(rng.choice(CHAT), rng, partner)
