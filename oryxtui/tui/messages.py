"""The dashboard's messages: what workers found on disk, and what changed there.

A newer message about the same agent replaces a queued one (`can_replace`): a burst of writes
or counts is handled once, with the latest news.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from oryxtui.memory.events import Event
from oryxtui.memory.recall.results import IndexStatus
from oryxtui.tui.overview import AgentMemory, AgentSummary
from oryxtui.workspace import AgentName


@dataclass
class AgentsListed(Message):
    names: list[str]

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AgentsListed)


@dataclass
class AgentLoaded(Message):
    memory: AgentMemory


@dataclass
class SummariesLoaded(Message):
    summaries: list[AgentSummary]


@dataclass
class CensusTaken(Message):
    """A big file's entries, all counted (its snapshot holds only the newest)."""

    agent: AgentName
    archival_count: int | None
    lost_count: int

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CensusTaken) and message.agent == self.agent


@dataclass
class MemoryChanged(Message):
    """An agent's MEMORY.md changed on disk (the watcher saw it)."""

    agent: AgentName

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MemoryChanged) and message.agent == self.agent


@dataclass
class HistoryChanged(Message):
    """An agent's history file changed and its MEMORY.md did not (a save held for review)."""

    agent: AgentName

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, HistoryChanged) and message.agent == self.agent


@dataclass
class ServersChanged(Message):
    """An attached server was lost or came back: the sidebar marks it."""


@dataclass
class StoreChanged(Message):
    """Memory kept outside files changed, or may have: which agent is not known.
    `everyone`: count every agent again too (a local database; a remote server is asked only
    about the agent on screen)."""

    everyone: bool

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, StoreChanged) and message.everyone == self.everyone


@dataclass
class AgentsChanged(Message):
    """An agent came or went, or an AGENT.md changed."""

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, AgentsChanged)


@dataclass
class WatchStarted(Message):
    """The workspace is watched from now on: what was written before may not have been seen."""


@dataclass
class IndexChanged(Message):
    """The live index synced an agent: how much of its memory has vectors now."""

    agent: AgentName
    status: IndexStatus

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, IndexChanged) and message.agent == self.agent


@dataclass
class Noticed(Message):
    """Something went wrong beside a result that stands (a worker's notice): said once."""

    text: str


@dataclass(frozen=True)
class Changed:
    """What the dashboard publishes to the views opened over it (a history view follows it):
    one agent's memory changed, or, with `anyone`, any memory may have."""

    agent: AgentName = None
    anyone: bool = False

    def concerns(self, agent: AgentName) -> bool:
        return self.anyone or self.agent == agent


@dataclass
class Heard(Message):
    """What changed, as the watcher, a shared database or a server told it (from any
    thread): the app turns it into the dashboard's messages."""

    event: Event
