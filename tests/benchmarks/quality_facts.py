"""A self-made set of facts that change, for `bench_facts.py`: chains of 2–4 versions of one
fact among many unrelated entries, by two generators of different style — an operations bot's
terse notes about services (`ops`), and an assistant's long third-person notes about people
(`people`) — with the entries that look like them but say something else (the same subject
words about another service, another attribute of the same person) and routine logs whose
lines differ only by a number. Each chain has the question a user would ask of its fact.
Chains alternate between a tune half and a test half (report the test half)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

SERVICES = ["gateway", "payout", "ledger", "notifier", "billing", "search", "risk-engine"]
NAMES = ["Priya", "Marco", "Oskar", "Lucia", "Tariq", "Hiro", "Amara", "Ravi", "Mei", "Jonas"]

# Generator `ops`: (phrasings of one fact, its values, the question, a look-alike that is
# another fact). `{s}` is a service, `{v}` the value.
OPS = [
    (
        [
            "On-call for {s} this week: {v}.",
            "{v} is the on-call engineer for {s} this week.",
            "This week's on-call engineer for {s} is {v}.",
        ],
        NAMES,
        "who is on call for {s} this week?",
        "{s} on-call handover happens on Monday mornings.",
    ),
    (
        [
            "Staging for {s} runs on host {v}.",
            "Staging host for {s} is {v}.",
            "The {s} staging host is now {v}.",
        ],
        [f"stg-{n}.internal" for n in range(11, 40, 3)],
        "which host is {s} staging on?",
        "Staging host for {s} has 64 GB of memory and 16 cores.",
    ),
    (
        [
            "Deploy freeze for {s}: {v}.",
            "{s} deploys are frozen {v}.",
            "The {s} deploy freeze now runs {v}.",
        ],
        ["Dec 18 to Jan 3", "Dec 20 to Jan 5", "Nov 27 to Dec 1", "Mar 30 to Apr 2", "Jun 1 to 3"],
        "when is the {s} deploy freeze?",
        "Emergency fixes to {s} may ship during a freeze with two approvals.",
    ),
    (
        [
            "{s} primary database runs PostgreSQL {v}.",
            "Primary DB of {s} is on Postgres {v}.",
            "{s} database upgraded to PostgreSQL {v}.",
        ],
        ["13.9", "14.7", "15.4", "16.1", "16.4", "17.0"],
        "which postgres version does {s} run?",
        "{s} database backups are kept for 35 days.",
    ),
    (
        [
            "{s} releases ship every {v}.",
            "Release train for {s} leaves on {v}s.",
            "{s} release day moved to {v}.",
        ],
        ["Tuesday", "Wednesday", "Thursday", "Monday", "Friday"],
        "what day does {s} release?",
        "{s} release notes go to the #releases channel.",
    ),
    (
        [
            "{s} logs are kept for {v} days.",
            "Log retention for {s}: {v} days.",
            "{s} log retention changed to {v} days.",
        ],
        ["7", "14", "30", "45", "90"],
        "how long are {s} logs retained?",
        "{s} logs ship to the central Loki cluster.",
    ),
    (
        [
            "{s} p99 latency target is {v} ms.",
            "SLO for {s}: p99 under {v} ms.",
            "{s} latency SLO tightened to {v} ms at p99.",
        ],
        ["250", "300", "400", "180", "500"],
        "what is the latency SLO of {s}?",
        "{s} latency dashboard lives in Grafana under Payments.",
    ),
    (
        [
            "{s} runs in region {v}.",
            "Primary region for {s} is {v}.",
            "{s} moved its primary region to {v}.",
        ],
        ["eu-west-1", "eu-central-1", "us-east-2", "ap-south-1", "eu-north-1"],
        "which region does {s} run in?",
        "{s} keeps a warm standby in a second region.",
    ),
    (
        [
            "Default branch of {s} is {v}.",
            "{s} repository default branch: {v}.",
            "{s} switched its default branch to {v}.",
        ],
        ["master", "main", "trunk", "develop", "release"],
        "what is the default branch of {s}?",
        "{s} branch protection needs one review and green CI.",
    ),
    (
        [
            "{s} tickets go to the {v} queue.",
            "Support queue for {s}: {v}.",
            "{s} tickets now land in the {v} queue.",
        ],
        ["PAY-OPS", "CORE-INFRA", "PLATFORM", "SRE-TRIAGE", "BACKEND"],
        "which queue do {s} tickets go to?",
        "{s} tickets older than a week are escalated.",
    ),
    (
        [
            "{s} error budget this quarter: {v} minutes.",
            "Error budget for {s} is {v} minutes per quarter.",
            "{s} quarterly error budget reset to {v} minutes.",
        ],
        ["43", "65", "21", "90", "130"],
        "how big is the {s} error budget?",
        "{s} error budget burn alerts page the on-call.",
    ),
    (
        [
            "{s} cluster runs Kubernetes {v}.",
            "Kubernetes version of the {s} cluster: {v}.",
            "{s} cluster upgraded to Kubernetes {v}.",
        ],
        ["1.27", "1.28", "1.29", "1.30", "1.31"],
        "which kubernetes version does the {s} cluster run?",
        "{s} cluster autoscaler keeps between 3 and 12 nodes.",
    ),
]
OPS_ROUTINE = [
    "Deployed {s} v{n}.{m} to prod: canary 10% then 100%, no errors.",
    "CI run #{k} green on main for {s}.",
    "Paged {p} about {s} p95 latency at {k} ms; resolved after a restart.",
    "Scaled {s} to {m} replicas for the evening peak.",
    "Nightly backup of {s} finished in {m} minutes.",
    "Synthetic checks for {s} all passing.",
    "Rotated the TLS certificate of {s}; it expires in 90 days.",
    "Cleared {k} stuck jobs from the {s} queue.",
]

PEOPLE = ["Hannah", "Elena", "Yusuf", "Greta", "Bilal", "Chloe", "Farah"]
# Generator `people`: an assistant's notes, third person, in full sentences; each version in
# other words than the one before. `{p}` is the person, `{v}` the value.
PEOPLE_FACTS = [
    (
        [
            "{p} mentioned that her favourite coffee place is {v}; she goes there most mornings.",
            "{p} has a new favourite coffee place, {v}, because the old one got too busy.",
            "These days {p}'s coffee place of choice is {v}.",
        ],
        ["Little Fox", "Bean There", "Kaffee Kranz", "The Roastery", "Café Lume"],
        "which coffee place do I like?",
        "{p} takes her coffee with oat milk and no sugar.",
    ),
    (
        [
            "{p} drives a {v} and mostly uses it at weekends.",
            "{p} sold her old car and now drives a {v}.",
            "{p}'s car is a {v} at the moment.",
        ],
        ["Skoda Octavia", "Renault Zoe", "Volvo V60", "Toyota Yaris", "Kia Niro"],
        "what car do I drive?",
        "{p}'s car is due for its inspection in the spring.",
    ),
    (
        [
            "{p} works as a {v} at a mid-sized firm in town.",
            "{p} changed jobs and is now working as a {v}.",
            "{p}'s job title these days is {v}.",
        ],
        ["data analyst", "product manager", "UX researcher", "team lead", "solutions architect"],
        "what is my job?",
        "{p} works from home on Fridays.",
    ),
    (
        [
            "{p}'s gym membership is with {v}; she goes three times a week.",
            "{p} switched gyms and trains at {v} now.",
            "{p} now has her gym membership at {v}.",
        ],
        ["FitHub", "The Iron Room", "CityMove", "PureGym Central", "Anytime Fitness"],
        "which gym am I a member of?",
        "{p} prefers training early in the morning before work.",
    ),
    (
        [
            "{p} is learning {v} with an app, fifteen minutes a day.",
            "{p} dropped her old course and is learning {v} instead.",
            "The language {p} studies now is {v}.",
        ],
        ["Portuguese", "Japanese", "Italian", "Dutch", "Korean"],
        "which language am I learning?",
        "{p} keeps a streak of daily practice going on her phone.",
    ),
    (
        [
            "{p}'s dentist is Dr {v}, at the practice on the high street.",
            "{p} moved to a new dentist, Dr {v}.",
            "{p} sees Dr {v} for dental check-ups now.",
        ],
        ["Okafor", "Lindqvist", "Moreau", "Castillo", "Hughes"],
        "who is my dentist?",
        "{p}'s next dental check-up should be booked for autumn.",
    ),
    (
        [
            "{p} is reading {v} before bed.",
            "{p} finished her last book and started {v}.",
            "{p}'s current book is {v}.",
        ],
        ["Piranesi", "The Overstory", "Klara and the Sun", "Middlemarch", "Project Hail Mary"],
        "what book am I reading?",
        "{p} reads on an e-reader with the light turned low.",
    ),
    (
        [
            "{p}'s home wifi network is called {v}.",
            "{p} renamed her wifi network to {v}.",
            "The wifi at {p}'s flat is now the {v} network.",
        ],
        ["Lighthouse", "Nebula-5G", "Shed42", "OrangeBox", "Tellus"],
        "what is my wifi network called?",
        "{p}'s router is in the hallway cupboard.",
    ),
]
ASSISTANT_ROUTINE = [
    "Set a reminder for {p} to water the plants at {m}:00; she asked for it to repeat.",
    "Looked up the weather for {p}: {m} degrees and light rain in the afternoon.",
    "Added {item} to {p}'s shopping list; it now has {m} items.",
    "Confirmed {p}'s {m}:00 video call on the calendar and sent the link.",
    "Summarised three newsletters for {p}; nothing needed an answer.",
    "Tracked a parcel for {p}: it should arrive within {m} days.",
    "Converted {k} US dollars to euros for {p}, who was checking a hotel price.",
]
ITEMS = ["oat milk", "batteries", "rice", "tomatoes", "dish soap", "coffee beans", "bread"]


@dataclass
class Chain:
    """One fact's versions, oldest first, and the question that asks for it."""

    number: int
    generator: str
    versions: list[str]
    question: str
    look_alike: str
    split: str = field(init=False)

    def __post_init__(self) -> None:
        self.split = "tune" if self.number % 2 == 0 else "test"


@dataclass(frozen=True)
class Save:
    """One entry saved, in order: a chain's version (chain, version) or another entry."""

    text: str
    chain: int | None = None
    version: int = 0
    split: str = "tune"


def build(seed: int = 7, routine: int = 600) -> tuple[list[Chain], list[Save]]:
    rng = random.Random(seed)
    chains: list[Chain] = []
    for phrasings, values, question, look_alike in OPS:
        for service in rng.sample(SERVICES, 3):
            chains.append(
                _chain(rng, len(chains), "ops", phrasings, values, question, look_alike, s=service)
            )
    for phrasings, values, question, look_alike in PEOPLE_FACTS:
        for person in rng.sample(PEOPLE, 4):
            chains.append(
                _chain(
                    rng, len(chains), "people", phrasings, values, question, look_alike, p=person
                )
            )
    others = [Save(_routine(rng), split="tune" if n % 2 == 0 else "test") for n in range(routine)]
    others += [Save(chain.look_alike, split=chain.split) for chain in chains]
    rng.shuffle(others)
    # Each chain's versions land at random places, in their order.
    timeline: list[Save | None] = [*others]
    for chain in chains:
        places = sorted(rng.sample(range(len(timeline) + 1), len(chain.versions)))
        for offset, (place, text) in enumerate(zip(places, chain.versions, strict=True)):
            timeline.insert(place + offset, Save(text, chain.number, offset, chain.split))
    return chains, [save for save in timeline if save is not None]


def _chain(
    rng: random.Random,
    number: int,
    generator: str,
    phrasings: list[str],
    values: list[str],
    question: str,
    look_alike: str,
    **fill: str,
) -> Chain:
    count = rng.choice([2, 2, 3, 3, 4])
    chosen = rng.sample(values, count)
    versions = [phrasings[0 if i == 0 else rng.randrange(1, len(phrasings))] for i in range(count)]
    texts = [_capital(p.format(v=v, **fill)) for p, v in zip(versions, chosen, strict=True)]
    asked = question.format(**fill)
    if generator == "people":
        asked = f"{fill['p']} asks: {asked}"
    return Chain(number, generator, texts, asked, _capital(look_alike.format(**fill)))


def _routine(rng: random.Random) -> str:
    template = rng.choice(OPS_ROUTINE if rng.random() < 0.5 else ASSISTANT_ROUTINE)
    return _capital(
        template.format(
            s=rng.choice(SERVICES),
            p=rng.choice(PEOPLE + NAMES),
            n=rng.randint(1, 9),
            m=rng.randint(2, 40),
            k=rng.randint(100, 9999),
            item=rng.choice(ITEMS),
        )
    )


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
