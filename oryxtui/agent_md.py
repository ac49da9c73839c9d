"""AGENT.md: an agent's definition — YAML front matter with the keys oryxtui reads, then the
instructions. Apart from the workspace, so that a command that reads no AGENT.md (a save, a
recall) never builds these models."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from oryxtui.errors import AgentDefinitionError


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class IdentitySpec(_Open):
    prompt: str = ""


class ProviderSpec(_Open):
    name: str | None = None
    model: str | None = None
    temperature: float | None = None


class AgentSettingsSpec(_Open):
    max_iterations: int = Field(10, ge=1)
    max_history_turns: int | None = Field(None, ge=1)


class AgentDefinition(_Open):
    """AGENT.md: the front matter keys oryxtui reads (unknown keys are kept and ignored) + body."""

    name: str
    description: str = ""
    identity: IdentitySpec = IdentitySpec()
    provider: ProviderSpec = ProviderSpec()
    tools: list[str] = []
    bootstrap: list[str] = []
    settings: AgentSettingsSpec = AgentSettingsSpec()
    body: str = ""


def parse_agent_markdown(text: str, folder_name: str, source: Path) -> AgentDefinition:
    """Split YAML front matter between '---' fences from the body; no closing fence: all body."""
    import yaml  # here, not at the top: scripted memory commands never read an AGENT.md

    lines = text.removeprefix("\ufeff").split("\n")
    front: dict[str, Any] = {}
    body = text.removeprefix("\ufeff")
    if lines and lines[0].rstrip() == "---":
        closing = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
        if closing is not None:
            try:
                loaded = yaml.safe_load("\n".join(lines[1:closing]))
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" at line {mark.line + 2}" if mark else ""
                raise AgentDefinitionError(
                    f"{source}: the front matter is not valid YAML{where}; fix it in an editor."
                ) from None
            if loaded is not None and not isinstance(loaded, Mapping):
                raise AgentDefinitionError(
                    f"{source}: the front matter must be a mapping of keys to values."
                )
            front = dict(loaded or {})
            body = "\n".join(lines[closing + 1 :])
    front.setdefault("name", folder_name)
    try:
        return AgentDefinition.model_validate({**front, "body": body.strip("\n")})
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"])
        raise AgentDefinitionError(
            f"{source}: front matter key '{key}': {error['msg']}; fix it in an editor."
        ) from None


def agent_markdown(name: str, description: str = "") -> str:
    """A new agent's AGENT.md: front matter with the keys oryxtui reads, then the body."""
    import yaml  # here, not at the top: scripted memory commands never write an AGENT.md

    front = {
        "name": name,
        "description": " ".join(description.split()),
        "identity": {"prompt": f"You are {name}, an assistant with long-term memory."},
        "tools": ["save_memory", "recall_memory"],
    }
    text = yaml.safe_dump(front, allow_unicode=True, sort_keys=False)
    # The other keys oryxtui reads, as comments (the body below the fence is in the prompt,
    # so it holds nothing until someone writes the agent's instructions there).
    return f"---\n{text}{AGENT_MD_HINTS}---\n"


AGENT_MD_HINTS = """\
# provider: {name: openai, model: qwen2.5:7b, temperature: 0.2}   # else [llm] in config.toml
# bootstrap: [USER.md, SOUL.md]   # files of .oryxos/ read into the prompt, in this order
# settings: {max_iterations: 10, max_history_turns: 20}
# Below the closing fence: the agent's instructions, in the prompt after identity.prompt.
"""
