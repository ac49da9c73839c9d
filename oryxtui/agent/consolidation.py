"""Digests written by the agent's LLM: a short, fixed instruction, the covered entries as they
are, and the answer as the digest's summary. With the offline model, or when the LLM cannot be
reached, the deterministic extractive summary (labelled as such) is written instead."""

from __future__ import annotations

from collections.abc import Sequence

from oryxtui.agent.providers import ChatProvider, ModelTurn, create_provider
from oryxtui.agent.providers.offline import OfflineModel
from oryxtui.config import Settings
from oryxtui.errors import ProviderError
from oryxtui.memory.digest import EXTRACTIVE, Summariser
from oryxtui.memory.format import MemoryEntry
from oryxtui.workspace import Workspace

INSTRUCTION = (
    "Summarise these memory entries of an AI agent in at most {room} characters, as one "
    "paragraph of plain text: keep names, numbers, decisions and preferences; drop repetition; "
    "no preamble, no lists, no markdown."
)


def summariser_of(provider: ChatProvider, warnings: list[str]) -> tuple[Summariser | None, str]:
    """The provider's LLM as a summariser; none for the offline model (extractive)."""
    if isinstance(provider, OfflineModel):
        return None, EXTRACTIVE
    return llm_summariser(provider, warnings), "llm"


def summariser_for(
    workspace: Workspace, settings: Settings, agent: str | None
) -> tuple[Summariser | None, str, list[str]]:
    """(how to summarise, its label, warnings) for the agent: its LLM, else extractive."""
    definition = workspace.read_agent(agent) if agent else None
    warnings: list[str] = []
    summarise, method = summariser_of(create_provider(settings, definition), warnings)
    return summarise, method, warnings


def llm_summariser(provider: ChatProvider, warnings: list[str]) -> Summariser:
    def summarise(entries: Sequence[MemoryEntry], room: int) -> str:
        messages = [
            {"role": "system", "content": INSTRUCTION.format(room=room)},
            {"role": "user", "content": "\n".join(entry.line for entry in entries)},
        ]
        try:
            text = ""
            for part in provider.stream(messages, []):
                if isinstance(part, ModelTurn):
                    text = part.text
            if text.strip():
                return text
            warnings.append("The LLM answered nothing; the extractive summary was used.")
        except ProviderError as exc:
            warnings.append(f"{exc} The extractive summary was used instead.")
        return ""

    return summarise
