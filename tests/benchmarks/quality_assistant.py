"""A third self-made data set, built by another generator in another style, and held out from
every calibration: a personal assistant's memory of the person it works for. The assistant
writes in the third person and at length ("The user mentioned that …", two sentences, with the
why); most entries are routine (reminders set, a forecast looked up, a list kept) and look
alike; the person asks in the first person and in their own words ("Where do I get my hair
cut?"). Facts: one-off details, preferences said in passing, facts that changed (the newest
is the answer), two entries that answer together, dates, and Chinese for two of the people.
Same schema as the others (LoCoMo's), one speaker (the assistant). Written before any ranking
or floor was measured on it; no floor or weight was set on it (`bench_quality --set
assistant`)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from quality_layout import Facts

PEOPLE = ["Hannah", "Marco", "Yusuf", "Elena", "Tom", "Priya", "小陈", "林老师"]
FRIENDS = ["Ana", "Bilal", "Chloe", "Dev", "Farah", "Greta", "Ivo", "Jana"]
CITIES = ["Lisbon", "Leeds", "Utrecht", "Lyon", "Graz", "Porto", "Aarhus", "Bologna"]
ROUTINE = [
    "Set a reminder for {person} to water the plants at {h}:00; {person} asked for it to repeat "
    "every {n} days.",
    "Looked up the weather for {person}: {t} degrees and light rain expected in the afternoon, so "
    "an umbrella was suggested.",
    "Added {item} to {person}'s shopping list; the list now has {n} items on it.",
    "Confirmed {person}'s {h}:00 video call on the calendar and sent the link by email.",
    "Summarised three newsletters for {person}; nothing needed an answer today.",
    "Played the morning playlist for {person} and turned the volume down at {h}:00.",
    "Tracked a parcel for {person}: it left the depot and should arrive within {n} days.",
    "Converted {t} US dollars to euros for {person}, who was checking a hotel price.",
]
ITEMS = ["oat milk", "batteries", "rice", "tomatoes", "dish soap", "coffee beans", "bread"]
# (what the assistant wrote, what the person asks); the question mostly in other words.
SINGLE = [
    ("The user told me their haircuts are always at Studio Nine on Elm Street, because the "
     "barber there remembers how they like it.", "Where do I get my hair cut?"),
    ("The user is allergic to penicillin; they asked me to mention it whenever a doctor's "
     "appointment is booked.", "Which medicine must I never be given?"),
    ("The user's landlord is Mr. Okafor, reachable on 0161 555 0199 for anything about the "
     "flat.", "Who do I call when something breaks in my apartment?"),
    ("The home wifi password is on the back of the router in the hallway, the user said, not "
     "in any app.", "Where can I find the internet password at home?"),
    ("The user's manager is {boss}; they meet every Tuesday morning for a one-to-one.",
     "Who is my boss?"),
]  # fmt: skip
PARAPHRASE = [  # no content word shared with the question
    ("The user drinks a flat white with oat milk every morning and skips sugar.",
     "How do I take my coffee?"),
    ("The user's daughter started at Greenfield Primary in September, in Mrs. Patel's class.",
     "Which school does my kid go to?"),
    ("The user runs 5 km along the canal on Saturdays before breakfast.",
     "What exercise do I do at the weekend?"),
    ("The user finds loud restaurants exhausting and prefers quiet places for dinner.",
     "What kind of place should you book when we eat out?"),
]  # fmt: skip
CHANGING = [  # several versions over time: the newest is the answer
    ("The user moved; their new address is {n} {street}, and post should go there from now on.",
     "What is my current address?"),
    ("The user switched gyms and now trains at {gym}, which is closer to the office.",
     "Which gym am I a member of now?"),
]  # fmt: skip
STREETS = ["Rose Lane", "Mill Road", "Harbour Street", "Kingsway", "Elm Grove", "Park Row"]
GYMS = ["PureGym Central", "FitHub", "The Iron Room", "CityMove", "Anytime Fitness"]
MULTI = [  # two entries answer together
    (("The user's sister is {friend}; they talk on the phone most Sundays.",
      "{friend} lives in {city} and works as a nurse there."),
     "Which city does my sister live in?"),
]  # fmt: skip
DATED = [  # the answer is the date the entry holds
    ("Booked the user's dentist check-up for {date} at 9:30 with Dr. Lind.",
     "When is my next dental appointment?"),
]  # fmt: skip
CHINESE = [
    ("用户说他对花生过敏，点外卖时一定要备注。", "我对什么食物过敏？"),
    ("用户每周三晚上去上书法课，地点在文化宫二楼。", "我的书法课在哪里上？"),
    ("用户的车停在小区地下车库B2层的38号车位。", "我的车位是几号？"),
]  # fmt: skip
CHINESE_ROUTINE = [
    "已为用户设置早上{h}点的闹钟。", "帮用户查了天气：明天{t}度，有小雨。",
    "已把{n}件商品加入用户的购物清单。", "提醒用户{h}点参加视频会议。",
]  # fmt: skip


def build(seed: int = 41, days: int = 12, routine_per_day: int = 10) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    samples = []
    for number, person in enumerate(PEOPLE):
        chinese = not person.isascii()
        friend, boss = rng.sample(FRIENDS, 2)
        fill = {"friend": friend, "boss": boss, "city": rng.choice(CITIES), "person": person}
        facts = Facts(days)
        place = facts.place

        def ask(
            question: str,
            spots: list[tuple[int, int]],
            kind: str,
            fill: Any = fill,
            facts: Facts = facts,
        ) -> None:
            facts.ask(question.format(**fill), spots, kind)

        if chinese:
            for entry, question in CHINESE:
                ask(question, [place(rng.randint(1, days), entry)], "zh")
        else:
            for entry, question in SINGLE + PARAPHRASE:
                kind = "paraphrase" if (entry, question) in PARAPHRASE else "single"
                ask(question, [place(rng.randint(1, days), entry.format(**fill))], kind)
            for entry, question in CHANGING:
                chosen = sorted(rng.sample(range(1, days + 1), 3))
                spots = []
                for day in chosen:
                    value = {"n": rng.randint(2, 90), "street": rng.choice(STREETS),
                             "gym": rng.choice(GYMS)}  # fmt: skip
                    spots.append(place(day, entry.format(**value)))
                ask(question, [spots[-1]], "latest")
            for (first, second), question in MULTI:
                one = rng.randint(1, days - 3)
                later = rng.randint(one + 2, days)
                ask(question, [place(one, first.format(**fill)),
                               place(later, second.format(**fill))], "multi")  # fmt: skip
            for entry, question in DATED:
                date = f"{rng.randint(1, 28)} {rng.choice(['March', 'April', 'May'])}"
                ask(question, [place(rng.randint(1, days), entry.format(date=date))], "date")
        conversation: dict[str, Any] = {"speaker_a": "assistant", "speaker_b": person}
        start = datetime(2024, 2, 5, 7, 30) + timedelta(days=3 * number)
        for day in range(1, days + 1):
            when = start + timedelta(days=day - 1, hours=day % 5)
            conversation[f"session_{day}_date_time"] = when.strftime("%I:%M %p on %d %B, %Y")
            entries = []
            for _ in range(routine_per_day):
                value = {"person": "用户" if chinese else "the user", "h": rng.randint(6, 21),
                         "n": rng.randint(2, 9), "t": rng.randint(3, 31),
                         "item": rng.choice(ITEMS)}  # fmt: skip
                text = rng.choice(CHINESE_ROUTINE if chinese else ROUTINE).format(**value)
                entries.append(text[0].upper() + text[1:])
            conversation[f"session_{day}"] = facts.day(rng, entries, "assistant", day)
        qa = facts.questions()
        samples.append({"sample_id": f"assistant-{number}", "conversation": conversation, "qa": qa})
    return samples
