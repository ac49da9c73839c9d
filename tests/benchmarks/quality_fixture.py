"""A self-made conversational-memory data set in LoCoMo's schema, for `bench_quality.py` and the
recall-quality test: long multi-session chats between two people, the facts they mention
spread over sessions among small talk, and questions with their evidence turns — single-hop
(the question's words differ from the turn's), multi-hop (two turns), temporal ("when …"),
paraphrase (no content word shared: only meaning finds them) and Chinese.

Generated from a seed, so every run sees the same data; written for no particular engine (the
templates were written before any ranking was measured on them)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

PEOPLE = [
    ("Caroline", "Melanie"), ("Jon", "Gina"), ("Priya", "Tom"), ("Ahmed", "Lena"),
    ("Sofia", "Marcus"), ("Kenji", "Ava"), ("Nora", "Diego"), ("Iris", "Felix"),
]  # fmt: skip
CHINESE_PEOPLE = [("小王", "小李"), ("阿明", "阿芳")]

SMALL_TALK = [
    "Hey! How have you been?", "That sounds great, I'm happy for you.",
    "Honestly it has been a long week.", "Haha, same here.", "What have you been up to?",
    "I know what you mean.", "That's so cool!", "Oh wow, really?", "Let's catch up soon.",
    "I've been pretty busy with work lately.", "Anyway, how was your weekend?",
    "Thanks for asking, I'm doing fine.", "Good to hear from you again.",
    "I can't believe it's already this late in the year.", "Tell me more about it!",
    "Did you see the weather today? So much rain.", "We should grab coffee sometime.",
]  # fmt: skip
CHINESE_SMALL_TALK = [
    "最近怎么样？", "哈哈，我也是。", "太好了，替你高兴。", "这周真的好累。",
    "改天一起喝咖啡吧。", "你周末过得怎么样？", "说得对。", "真的吗？",
]  # fmt: skip

# (what the person says, the question, the answer); {p} is the speaker's name.
SINGLE = [
    ("I went to an LGBTQ support group meeting yesterday, it was really moving.",
     "What kind of group meeting did {p} attend?", "an LGBTQ support group"),
    ("I've started researching adoption agencies for when we grow our family.",
     "What has {p} been researching?", "adoption agencies"),
    ("We painted a huge sunrise over the lake with the kids last Saturday.",
     "What did {p} paint with the kids?", "a sunrise over the lake"),
    ("My new job is at a small robotics startup downtown.",
     "Where does {p} work now?", "a robotics startup"),
    ("I signed up for a pottery class that meets on Thursdays.",
     "Which class did {p} sign up for?", "pottery"),
    ("We adopted a rescue greyhound and named him Biscuit.",
     "What is the name of {p}'s greyhound?", "Biscuit"),
    ("I ran my first half marathon in Porto and finished in under two hours.",
     "Which city was {p}'s first half marathon in?", "Porto"),
    ("My grandmother taught me her lentil soup recipe over the holidays.",
     "Whose recipe did {p} learn over the holidays?", "the grandmother's"),
    ("I'm learning to play the cello, mostly Bach suites so far.",
     "Which instrument is {p} learning?", "the cello"),
    ("Our book club is reading a novel about lighthouse keepers.",
     "What is {p}'s book club reading about?", "lighthouse keepers"),
]  # fmt: skip
# The question shares no content word with the turn: only meaning finds it.
PARAPHRASE = [
    ("We finally bought a little cottage near the coast!",
     "Did {p} purchase a house by the sea?", "yes, a cottage near the coast"),
    ("I've been feeling really anxious before exams lately.",
     "Is {p} stressed about tests?", "yes"),
    ("My daughter just took her first steps this morning.",
     "Has {p}'s baby started walking?", "yes"),
    ("I quit smoking three months ago and I feel healthier.",
     "Did {p} give up cigarettes?", "yes, three months ago"),
    ("Our flight to Tokyo got cancelled because of the typhoon.",
     "Why was {p}'s plane trip to Japan called off?", "a typhoon"),
    ("I volunteer at the animal shelter every Sunday morning.",
     "Does {p} help out with pets on weekends?", "yes, at the animal shelter"),
]  # fmt: skip
# Two turns, two sessions apart; the question needs both.
MULTI = [
    (("My sister moved to Lisbon for her new job.",
      "I'm flying out to visit my sister next month."),
     "Which city will {p} fly to next month?", "Lisbon"),
    (("My brother is a chef at a seafood restaurant.",
      "I'm having my birthday dinner at my brother's restaurant."),
     "What kind of restaurant is {p}'s birthday dinner at?", "seafood"),
    (("Our team project is a mobile app for farmers.",
      "We demoed our team project to investors on Friday."),
     "What did {p}'s team demo to investors?", "a mobile app for farmers"),
]  # fmt: skip
# Asked as "when": the answer is the session's date.
TEMPORAL = [
    ("I got my driver's license today, finally!", "When did {p} get a driver's license?"),
    ("We moved into the new apartment this week.", "When did {p} move into the apartment?"),
    ("I presented my thesis to the committee this morning.",
     "When did {p} present the thesis?"),
    ("I started the new yoga routine on Monday.", "When did {p} start the yoga routine?"),
]  # fmt: skip
CHINESE = [
    ("我上周去了杭州的西湖，风景特别美。", "{p}上周去了哪里？", "杭州西湖"),
    ("我最近在学做川菜，麻婆豆腐已经会了。", "{p}最近在学做什么菜？", "川菜"),
    ("我们公司下个月要搬到浦东新办公室。", "{p}的公司要搬到哪里？", "浦东"),
    ("我女儿考上了北京大学的医学院。", "{p}的女儿考上了哪所大学？", "北京大学"),
    ("周末我和朋友去爬了黄山，累但是值得。", "{p}周末去爬了什么山？", "黄山"),
]  # fmt: skip
CATEGORY = {"single": 4, "multi": 1, "temporal": 2, "paraphrase": 3, "chinese": 4}


def build(seed: int = 7, sessions: int = 8, turns: int = 14) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    samples = []
    pairs = [(pair, False) for pair in PEOPLE] + [(pair, True) for pair in CHINESE_PEOPLE]
    for number, ((a, b), chinese) in enumerate(pairs):
        conversation: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
        plan: list[tuple[str, Any]] = []
        if chinese:
            plan += [("chinese", item) for item in CHINESE]
        else:
            plan += [("single", item) for item in rng.sample(SINGLE, 6)]
            plan += [("paraphrase", item) for item in rng.sample(PARAPHRASE, 3)]
            plan += [("temporal", item) for item in rng.sample(TEMPORAL, 2)]
            plan += [("multi", item) for item in rng.sample(MULTI, 1)]
        rng.shuffle(plan)
        placed: dict[int, list[tuple[str, str]]] = {s: [] for s in range(1, sessions + 1)}
        qa = []
        for kind, item in plan:
            speaker = rng.choice([a, b])
            if kind == "multi":
                (first, second), question, answer = item
                one = rng.randint(1, sessions - 2)
                two = rng.randint(one + 2, sessions)
                ids = [_place(placed, one, speaker, first), _place(placed, two, speaker, second)]
                qa.append(_qa(question, speaker, answer, ids, kind))
                continue
            session = rng.randint(1, sessions)
            text = item[0]
            dia = _place(placed, session, speaker, text)
            if kind == "temporal":
                qa.append(_qa(item[1], speaker, f"session {session}", [dia], kind))
            else:
                qa.append(_qa(item[1], speaker, item[2], [dia], kind))
        start = datetime(2023, 3, 1, 10, 0) + timedelta(days=3 * number)
        for session in range(1, sessions + 1):
            when = start + timedelta(days=9 * (session - 1), hours=session % 5)
            conversation[f"session_{session}_date_time"] = when.strftime("%I:%M %p on %d %B, %Y")
            facts_here = placed[session]
            chat = []
            talk = CHINESE_SMALL_TALK if chinese else SMALL_TALK
            for turn in range(turns):
                speaker = a if turn % 2 == 0 else b
                chat.append((speaker, rng.choice(talk)))
            for index, (speaker, text) in enumerate(facts_here):
                chat.insert(rng.randint(1, len(chat)), (speaker, f"§{index}§{text}"))
            dialogue = []
            for position, (speaker, text) in enumerate(chat, 1):
                dia_id = f"D{session}:{position}"
                if text.startswith("§"):
                    marker, _, text = text[1:].partition("§")
                    facts_here[int(marker)] = (speaker, dia_id)  # where it landed
                dialogue.append({"speaker": speaker, "dia_id": dia_id, "text": text})
            conversation[f"session_{session}"] = dialogue
        # Evidence placeholders become the dia_ids where the facts landed.
        for item in qa:
            item["evidence"] = [placed[s][i][1] for s, i in item.pop("places")]
        samples.append({"sample_id": f"fixture-{number}", "conversation": conversation, "qa": qa})
    return samples


def _place(placed: dict[int, list[tuple[str, str]]], session: int, speaker: str, text: str):
    placed[session].append((speaker, text))
    return session, len(placed[session]) - 1


def _qa(question: str, speaker: str, answer: str, places: list, kind: str) -> dict[str, Any]:
    return {
        "question": question.format(p=speaker),
        "answer": answer,
        "places": places,
        "category": CATEGORY[kind],
        "kind": kind,
    }
