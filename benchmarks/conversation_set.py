"""A multi-session conversation set generated from templates, for benchmarks/conversations.py.

Deterministic for a seed, publishable (every word is in this file). Each
conversation is two people talking over 14 to 20 sessions spread across 6 to
10 months: greetings, small talk and reactions ("What was it like?", "Looking
forward to meeting you both!") around the facts of their lives, each told in
one turn: a pet, a trip and what happened on it, a race on a given day, a job
they think of leaving and then do or do not, a diet given up, a sister's
wedding, a coworker met in one session and travelled with in another, a book,
a meeting moved for a reason, hobbies. Reactions and follow-ups name the same
pets, cities and companies, so a word shared with the question is no proof of
the answer.

Each question lists its evidence turns and has a category:

- ``single-hop``: one turn answers it;
- ``multi-hop``: two turns told sessions apart are needed together;
- ``temporal``: when something happened, or what holds now after a change of
  mind (the later turn is the evidence, the earlier one stays as a trap);
- ``open-domain``: a general question about a person that several turns answer
  in other words.

Questions are worded as a person asks them, not as the turn says it: they
share some words with their evidence (a name, a city), rarely all.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

NAMES = [
    "Maya", "Jonas", "Priya", "Tomás", "Lena", "Kofi", "Hana", "Mateo", "Ingrid", "Ravi", "Chloe", "Dmitri",
    "Amara", "Felix", "Sofia", "Omar", "Yuki", "Elias", "Nadia", "Lucas", "Zara", "Henrik", "Leila", "Bruno",
]  # fmt: skip
CITIES = [
    "Lisbon", "Kyoto", "Vancouver", "Marrakesh", "Edinburgh", "Valparaíso", "Tbilisi", "Hanoi", "Copenhagen",
    "Oaxaca", "Reykjavik", "Cape Town", "Seville", "Tallinn", "Montreal", "Naples",
]  # fmt: skip
PETS = [
    ("dog", "beagle", ["Biscuit", "Pepper", "Mochi", "Rufus"]),
    ("cat", "tabby", ["Olive", "Ziggy", "Miso", "Juniper"]),
    ("dog", "border collie", ["Scout", "Maple", "Nori", "Ranger"]),
    ("rabbit", "lop-eared", ["Clover", "Pippin", "Hazel", "Dot"]),
]
COMPANIES = ["Northwind", "Brightline", "Keystone Labs", "Orbital Foods", "Lumen Health", "Tidewater"]
FIELDS = ["climate", "robotics", "edtech", "biotech", "fintech", "gaming"]
HOBBIES = [
    ("pottery", "I've been throwing bowls on the wheel every Sunday, my hands are permanently covered in clay"),
    ("climbing", "I joined the bouldering gym near the station, my forearms are sore all the time"),
    ("birdwatching", "I got binoculars and now I get up at dawn to spot herons by the lake"),
    ("baking", "I've been making sourdough every weekend, the starter lives on my kitchen counter"),
    ("chess", "I play a few games of chess online every evening, my rating finally went past 1500"),
    ("gardening", "I planted tomatoes and basil on the balcony, it's turning into a small jungle"),
    ("kayaking", "we rented kayaks and paddled along the river all Saturday, I want to buy my own"),
    ("painting", "I started watercolours, mostly landscapes from my holiday photos"),
]
BOOKS = [
    ("The Salt Road", "Ana Ferreira", "a family of fishermen"),
    ("Glass Orchard", "Tobias Wren", "a botanist in the Arctic"),
    ("Night Freight", "Carla Mendes", "a train crossing the desert"),
    ("The Quiet Engine", "Samuel Okafor", "the first steam ships"),
    ("Paper Lanterns", "Mei Tanaka", "three sisters running a teahouse"),
]
REASONS = [
    ("my daughter had a fever", "family"),
    ("the client's flight was cancelled", "travel"),
    ("our server went down the night before", "an outage"),
    ("the budget numbers were not ready", "finance"),
]
RELATIVES = ["aunt", "cousin", "grandmother", "uncle", "brother"]
PLACES = ["a tiny jazz bar", "the old fish market", "a hot spring in the hills", "a vineyard outside town"]
SKILLS = ["Spanish", "the guitar", "woodworking", "photography"]
EVENTS = ["design conference", "food festival", "trade fair", "film festival"]
FILLER = [
    "Hey {other}! How have you been?",
    "Hi {other}, good to hear from you again.",
    "That sounds amazing!",
    "What was it like?",
    "How did it go?",
    "Haha, I know the feeling.",
    "Looking forward to meeting you both soon!",
    "Let's catch up again next week.",
    "I've been so busy with work lately.",
    "The weather has been lovely here.",
    "Good luck with everything!",
    "Oh wow, tell me more.",
    "That must have been a lot to deal with.",
    "I'm really happy for you.",
    "Talk soon, take care!",
    "Did you end up going?",
    "Nothing much new on my side, honestly.",
    "I can't believe how fast this year is going.",
    "We should plan something together.",
    "Sorry for the late reply, it's been a week.",
    "Anyway, how is your family doing?",
    "I had a quiet weekend, mostly reading.",
    "That reminds me of last summer.",
    "Fingers crossed for you!",
]
# Small talk built from parts: hundreds of distinct turns, none of them an answer.
OPENERS = ["", "Honestly, ", "Ha, ", "Oh, ", "Well, ", "You know, ", "By the way, ", "Funny thing, ", "Ugh, "]
CHATTER = [
    "work has been hectic this week",
    "I finally cleaned out the garage",
    "we tried a new {food} place downtown",
    "the kids have a school play on {day}",
    "my phone screen cracked again",
    "I watched a documentary about {topic}",
    "the neighbours are renovating, so much noise",
    "I've been sleeping badly lately",
    "we had {food} for dinner three nights in a row",
    "traffic was terrible on {day}",
    "I'm meeting some old friends on {day}",
    "it rained the whole of {day}",
    "I'm thinking of repainting the living room",
    "my laptop keeps freezing, I need a new one",
    "I signed up for a newsletter about {topic}",
    "the meeting at work on {day} ran two hours over",
    "I keep meaning to call my parents more",
    "we might host a dinner on {day}",
    "I read an article about {topic} last night",
    "the bakery on our street closed down",
    "I'm trying to drink less coffee",
    "I got a parking ticket on {day}, so annoying",
    "my back hurts from sitting all day",
    "we're looking forward to the long weekend",
]
FOODS = ["ramen", "tacos", "pizza", "curry", "dumplings", "falafel", "pho", "paella"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Friday", "Saturday", "Sunday"]
TOPICS = ["deep sea fish", "old castles", "space probes", "bees", "ancient Rome", "jazz musicians", "volcanoes"]


@dataclass
class Turn:
    session: int
    speaker: str
    text: str
    at: datetime

    @property
    def content(self) -> str:
        return f"{self.speaker}: {self.text}"


@dataclass
class Question:
    text: str
    category: str
    evidence: list[int]  # turn indexes in the conversation


@dataclass
class Conversation:
    name: str
    speakers: tuple[str, str]
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def session_of(self, turn: int) -> int:
        return self.turns[turn].session


class _Builder:
    """Facts placed into sessions: each fact is a list of (session, speaker, text, key) lines; a question
    names the keys of its evidence lines, resolved to turn indexes once the sessions are laid out."""

    def __init__(self, rng: random.Random, sessions: int) -> None:
        self.rng = rng
        self.sessions = sessions
        self.lines: list[tuple[int, str, str, str | None]] = []
        self.questions: list[tuple[str, str, list[str]]] = []

    def say(self, session: int, speaker: str, text: str, key: str | None = None) -> None:
        self.lines.append((min(session, self.sessions - 1), speaker, text, key))

    def ask(self, text: str, category: str, *keys: str) -> None:
        self.questions.append((text, category, list(keys)))

    def two_sessions(self) -> tuple[int, int]:
        first = self.rng.randrange(0, self.sessions - 3)
        return first, self.rng.randrange(first + 2, self.sessions)


def _facts(b: _Builder, who: str, other: str, tag: str, pools: dict[str, list]) -> None:  # type: ignore[type-arg]
    rng = b.rng
    species, breed, names = pools["pet"].pop()
    pet = rng.choice(names)
    s = rng.randrange(b.sessions)
    b.say(s, who, f"We finally adopted a {breed} {species} last weekend, we named {_pronoun(rng)} {pet}.", f"{tag}pet")
    b.say(s, other, f"{pet} is such a cute name!")
    b.say(min(s + 2, b.sessions - 1), other, f"How is {pet} settling in?")
    b.ask(f"What is the name of {who}'s {species}?", "single-hop", f"{tag}pet")

    city, relative, place = pools["city"].pop(), rng.choice(RELATIVES), rng.choice(PLACES)
    s1, s2 = b.two_sessions()
    b.say(
        s1,
        who,
        f"We're flying to {city} next month to visit my {relative}, who moved there last year.",
        f"{tag}trip1",
    )
    b.say(s1, other, f"{city}! I've always wanted to go there.")
    b.say(s2, who, f"Back home now. My {relative} took us to {place} and we stayed out until midnight.", f"{tag}trip2")
    b.say(s2, other, f"Welcome back! Did you like {city}?")
    b.ask(f"Where did {who}'s {relative} take them on the visit to {city}?", "multi-hop", f"{tag}trip1", f"{tag}trip2")
    b.ask(f"Which of {who}'s relatives lives in {city}?", "single-hop", f"{tag}trip1")

    race_city = pools["city"].pop()
    s = rng.randrange(b.sessions)
    minutes = rng.randrange(50, 59)
    b.say(
        s,
        who,
        f"I ran my first half marathon in {race_city} yesterday, finished in 1 hour {minutes} minutes!",
        f"{tag}race",
    )
    b.say(s, other, "Congratulations, that is a great time for a first race.")
    b.ask(f"When did {who} run a half marathon?", "temporal", f"{tag}race")

    company, sector = pools["company"].pop(), rng.choice(FIELDS)
    s1, s2 = b.two_sessions()
    b.say(s1, who, f"I'm seriously thinking about quitting {company} to join a small {sector} startup.", f"{tag}job1")
    b.say(s1, other, f"Big step! What does your manager at {company} say?")
    if rng.random() < 0.5:
        b.say(
            s2,
            who,
            f"Update: I decided to stay at {company} after all, they offered me a team lead role.",
            f"{tag}job2",
        )
    else:
        b.say(s2, who, f"Today was my last day at {company}. On Monday I start at the {sector} startup.", f"{tag}job2")
    b.ask(f"Does {who} still work at {company}?", "temporal", f"{tag}job2")

    s1, s2 = b.two_sessions()
    b.say(s1, who, "I've gone fully vegetarian since the start of the year, no meat at all.", f"{tag}diet1")
    b.say(s2, who, "Confession: I started eating fish again, being strictly vegetarian was too hard.", f"{tag}diet2")
    b.ask(f"What does {who} eat these days, is {who} still vegetarian?", "temporal", f"{tag}diet2")

    sister, partner, wedding_city = rng.choice(NAMES), rng.choice(NAMES), pools["city"].pop()
    s1, s2 = b.two_sessions()
    b.say(s1, who, f"Big news in my family: my sister {sister} got engaged to {partner}!", f"{tag}wed1")
    b.say(s2, who, f"The wedding is set for June in {wedding_city}, I'm giving a speech.", f"{tag}wed2")
    b.ask(f"Where is {who}'s sister getting married?", "multi-hop", f"{tag}wed1", f"{tag}wed2")

    coworker, skill, event, event_city = rng.choice(NAMES), rng.choice(SKILLS), rng.choice(EVENTS), pools["city"].pop()
    s1, s2 = b.two_sessions()
    b.say(s1, who, f"My coworker {coworker} has been teaching me {skill} during lunch breaks.", f"{tag}cow1")
    b.say(
        s2,
        who,
        f"{coworker} and I went to a {event} in {event_city} together, it was exhausting but fun.",
        f"{tag}cow2",
    )
    b.ask(
        f"Which city did {who} travel to with the coworker who teaches {who} {skill}?",
        "multi-hop",
        f"{tag}cow1",
        f"{tag}cow2",
    )

    title, author, about = pools["book"].pop()
    s = rng.randrange(b.sessions)
    b.say(s, who, f"I'm halfway through {title} by {author}, it's about {about}.", f"{tag}book")
    b.say(s, other, f"Is {title} any good? I keep seeing it in shops.")
    b.ask(f"Which book about {about} was {who} reading?", "single-hop", f"{tag}book")

    reason, _ = rng.choice(REASONS)
    s = rng.randrange(b.sessions)
    b.say(s, who, f"I had to push the meeting with my manager to Thursday because {reason}.", f"{tag}meet")
    b.ask(f"Why did {who} reschedule the meeting?", "single-hop", f"{tag}meet")

    (_, t1), (_, t2) = pools["hobby"].pop(), pools["hobby"].pop()
    s1, s2 = b.two_sessions()
    b.say(s1, who, t1[0].upper() + t1[1:] + ".", f"{tag}hob1")
    b.say(s2, who, t2[0].upper() + t2[1:] + ".", f"{tag}hob2")
    b.ask(f"What does {who} like to do in {_possessive(rng)} free time?", "open-domain", f"{tag}hob1", f"{tag}hob2")


def _pronoun(rng: random.Random) -> str:
    return rng.choice(["him", "her"])


def _possessive(rng: random.Random) -> str:
    return rng.choice(["his", "her", "their"])


def _small_talk(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return rng.choice(FILLER)
    clause = rng.choice(CHATTER).format(food=rng.choice(FOODS), day=rng.choice(DAYS), topic=rng.choice(TOPICS))
    opener = rng.choice(OPENERS)
    text = opener + clause if opener else clause[0].upper() + clause[1:]
    return text + rng.choice([".", "!", "..."])


def conversation(seed: int) -> Conversation:
    rng = random.Random(seed)
    a, b_ = rng.sample(NAMES, 2)
    sessions = rng.randrange(14, 21)
    start = datetime(2025, 1, 6, 18, tzinfo=UTC) + timedelta(days=rng.randrange(0, 120))
    span = rng.randrange(180, 301)
    days = sorted(rng.sample(range(1, span), sessions - 1))
    dates = [start] + [start + timedelta(days=d, hours=rng.randrange(-6, 4)) for d in days]
    builder = _Builder(rng, sessions)
    pools = {
        "pet": rng.sample(PETS, 2),
        "city": rng.sample(CITIES, 8),
        "company": rng.sample(COMPANIES, 2),
        "book": rng.sample(BOOKS, 2),
        "hobby": rng.sample(HOBBIES, 4),
    }
    _facts(builder, a, b_, "a.", pools)
    _facts(builder, b_, a, "b.", pools)
    convo = Conversation(f"conv-{seed}", (a, b_))
    keyed: dict[str, int] = {}
    seen: set[str] = set()
    for session in range(sessions):
        told = [line for line in builder.lines if line[0] == session]
        talk: list[tuple[str, str, str | None]] = [(a, f"Hey {b_}! How have you been?", None)]
        for _, speaker, text, key in told:
            talk.append((speaker, text, key))
            if rng.random() < 0.6:
                talk.append((a if speaker == b_ else b_, rng.choice(FILLER), None))
        for _ in range(rng.randrange(12, 24)):
            at = rng.randrange(1, len(talk) + 1)
            talk.insert(at, (rng.choice((a, b_)), _small_talk(rng), None))
        talk.append((b_, "Talk soon, take care!", None))
        for minute, (speaker, text, key) in enumerate(talk):
            text = text.format(other=b_ if speaker == a else a)
            content = f"{speaker}: {text}"
            if content in seen and key is None:
                continue  # one memory per text: a store keeps an exact repeat once
            seen.add(content)
            if key is not None:
                keyed[key] = len(convo.turns)
            convo.turns.append(Turn(session, speaker, text, dates[session] + timedelta(minutes=2 * minute)))
    for text, category, keys in builder.questions:
        convo.questions.append(Question(text, category, [keyed[k] for k in keys]))
    return convo


def conversations(split: str, count: int) -> list[Conversation]:
    """``dev`` (seeds from 1,000) to tune on, ``held-out`` (seeds from 2,000) to report: never the same."""
    base = {"dev": 1_000, "held-out": 2_000}[split]
    return [conversation(base + n) for n in range(count)]
