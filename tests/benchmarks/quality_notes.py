"""A second self-made data set, in another style than `quality_fixture.py`'s chats: an operations
agent's own notes — terse, full of ids, versions and hosts, most of them routine logs that look
alike (deploys, CI runs, pages) — with the facts a person later asks about among them: where a
thing lives, who owns what, a preference said once, facts that changed (the newest is the
answer), two notes that answer together, and Chinese notes. The questions are asked as a person
would, mostly in other words than the note's. Same schema (LoCoMo's), one "speaker" (the
agent). Written before any ranking or floor was measured on it."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from quality_layout import Facts

AGENTS = [
    "ops-bot", "deploy-bot", "infra-bot", "sre-bot", "data-bot", "release-bot", "zh-bot", "cn-bot",
]  # fmt: skip
SERVICES = [
    "gateway", "payout", "ledger", "notifier", "risk-engine", "settlement", "search", "billing",
]  # fmt: skip
PEOPLE = ["Mei", "Ravi", "Oskar", "Dana", "Tariq", "Lucia", "Hiro", "Amara"]
TEAMS = ["Falcon", "Heron", "Lynx", "Otter", "Kestrel", "Badger"]
ROUTINE = [
    "Deployed {svc} v{v} to prod-eu: canary 10% then 100%, no errors.",
    "CI run #{n} green on main for {svc}.",
    "Paged {person} about {svc} p95 latency at {ms} ms; resolved after a restart.",
    "Rotated the TLS certificate of {svc}; expires in 90 days.",
    "Scaled {svc} to {k} replicas for the evening peak.",
    "Nightly backup of {svc} finished in {m} minutes.",
    "Dependency bump for {svc}: {lib} {v}.",
    "Synthetic checks for {svc} all passing.",
]
LIBS = ["openssl", "grpc", "protobuf", "jackson", "netty", "pydantic"]
# (the note, the question): {svc}, {team}, {person} filled in; no content word of the question
# is in the note where it says so below.
SINGLE = [
    ("The {svc} database password is kept in Vault under kv/{svc}/db.",
     "Where do I find the credentials for the {svc} database?"),
    ("{svc} dashboards are on grafana.internal/d/{svc}-overview.",
     "Which URL shows the {svc} graphs?"),
    ("Load tests for {svc} must run against staging-2, never prod.",
     "Which environment is allowed for {svc} load testing?"),
    ("The {svc} runbook says: drain the queue before restarting workers.",
     "What must happen before the {svc} workers are restarted?"),
]  # fmt: skip
PARAPHRASE = [  # no content word shared with the note
    ("{person} prefers short answers without bullet lists.",
     "How does the user like replies formatted?"),
    ("Never merge on Fridays after 15:00; weekend incidents are hard to staff.",
     "Is it OK to ship code late in the week?"),
    ("Rolled back {svc} to the previous build; error rate back under 0.1%.",
     "Did we have to undo a bad release recently?"),
    ("The team lunch budget is 25 euros a head.",
     "How much can I spend per person when we eat together?"),
]  # fmt: skip
CHANGING = [  # several versions over time: the newest is the answer
    ("On-call this week: {person}.", "Who is on call right now?"),
    ("Release freeze window is now {day} 12:00-18:00.", "When is the release freeze?"),
]  # fmt: skip
MULTI = [  # two notes answer together
    (("{svc} is owned by Team {team}.", "Team {team} takes questions in #{chan}."),
     "Which Slack channel should I ask about {svc} in?"),
]  # fmt: skip
CHINESE = [
    ("{svc}的数据库迁移定在周四晚上十点。", "{svc}什么时候做数据库迁移？"),
    ("值班手机号码已经换成了新的，放在共享文档里。", "新的值班电话在哪里能找到？"),
    ("{person}不喜欢在周会上讨论预算。", "{person}在周会上不想聊什么？"),
]  # fmt: skip
CHINESE_ROUTINE = [
    "{svc}部署完成，没有报错。", "{svc}的夜间备份已完成。", "{svc}的告警已恢复。",
    "已为{svc}扩容到{k}个副本。",
]  # fmt: skip
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday"]


def build(seed: int = 23, days: int = 10, routine_per_day: int = 14) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    samples = []
    for number, agent in enumerate(AGENTS):
        chinese = agent in ("zh-bot", "cn-bot")
        svc, person = rng.choice(SERVICES), rng.choice(PEOPLE)
        fill = {
            "svc": svc,
            "person": person,
            "team": rng.choice(TEAMS),
            "chan": f"team-{rng.choice(TEAMS).lower()}",
        }
        facts = Facts(days)
        place, ask = facts.place, facts.ask

        if chinese:
            for note, question in CHINESE:
                spot = place(rng.randint(1, days), note.format(**fill))
                ask(question.format(**fill), [spot], "zh")
        else:
            for note, question in SINGLE + PARAPHRASE:
                spot = place(rng.randint(1, days), note.format(**fill))
                kind = "paraphrase" if (note, question) in PARAPHRASE else "single"
                ask(question.format(**fill), [spot], kind)
            for note, question in CHANGING:
                chosen = sorted(rng.sample(range(1, days + 1), 3))
                spots = []
                for day in chosen:
                    value = {**fill, "person": rng.choice(PEOPLE), "day": rng.choice(DAYS)}
                    spots.append(place(day, note.format(**value)))
                ask(question, [spots[-1]], "latest")
            for (first, second), question in MULTI:
                one = rng.randint(1, days - 3)
                later = rng.randint(one + 2, days)
                spots = [place(one, first.format(**fill)), place(later, second.format(**fill))]
                ask(question.format(**fill), spots, "multi")
        conversation: dict[str, Any] = {"speaker_a": agent, "speaker_b": "user"}
        start = datetime(2024, 5, 6, 8, 0) + timedelta(days=2 * number)
        for day in range(1, days + 1):
            when = start + timedelta(days=day - 1, hours=day % 7)
            conversation[f"session_{day}_date_time"] = when.strftime("%I:%M %p on %d %B, %Y")
            routine = []
            for _ in range(routine_per_day):
                value = {
                    "svc": rng.choice(SERVICES),
                    "person": rng.choice(PEOPLE),
                    "v": f"{rng.randint(1, 5)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
                    "n": rng.randint(1000, 9999),
                    "ms": rng.randint(200, 900),
                    "k": rng.randint(3, 12),
                    "m": rng.randint(4, 40),
                    "lib": rng.choice(LIBS),
                }
                template = rng.choice(CHINESE_ROUTINE if chinese else ROUTINE)
                routine.append(template.format(**value))
            conversation[f"session_{day}"] = facts.day(rng, routine, agent, day)
        qa = facts.questions()
        samples.append({"sample_id": f"notes-{number}", "conversation": conversation, "qa": qa})
    return samples
