"""MkDocs hooks: the parts of the documentation made from the code at each build, so they cannot
drift from it. A page asks for one with a marker line:

- `<!-- generated: settings -->`: every setting of config.toml, from the settings models;
- `<!-- generated: endpoints -->`: the REST API's endpoints, from its OpenAPI document;
- `<!-- generated: modules -->`: the module map, from the package tree and each module's
  docstring;
- `<!-- generated: layers -->`: the layers, from the import contracts in pyproject.toml;
- `<!-- include: FILE -->`: a file of the repository (CONTRIBUTING.md, CHANGELOG.md);
- `images/*.svg`: the dashboard's pictures, from the demo (scripts/docs_pictures.py).

The same functions are what the documentation's tests check."""

from __future__ import annotations

import ast
import importlib.util
import re
import tempfile
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- (generated|include): ([\w./-]+) -->$", re.M)
LINK_INTO_DOCS = re.compile(r"\]\(docs/")


def on_files(files: Any, config: Any) -> Any:
    """The pictures, made now from the demo, in place of any copy in docs/images/."""
    from mkdocs.structure.files import File

    for name, svg in _pictures().make_pictures().items():
        uri = f"images/{name}"
        kept = files.get_file_from_path(uri)
        if kept is not None:
            files.remove(kept)
        files.append(File.generated(config, uri, content=svg))
    return files


def _pictures() -> types.ModuleType:
    """docs_pictures.py beside this file (MkDocs loads a hook by its path, not as a package)."""
    spec = importlib.util.spec_from_file_location(
        "docs_pictures", ROOT / "scripts" / "docs_pictures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return MARKER.sub(lambda match: made(match.group(1), match.group(2)), markdown)


def made(kind: str, what: str) -> str:
    if kind == "include":
        text = (ROOT / what).read_text(encoding="utf-8").split("\n", 1)[1].strip()  # no title
        # A file of the repository links pages as `docs/PAGE.md` (right on a forge); in the
        # site it stands among them.
        return LINK_INTO_DOCS.sub("](", text)
    makers = {
        "settings": settings_reference,
        "endpoints": endpoints,
        "modules": module_map,
        "layers": layers,
    }
    return makers[what]()


# config.toml ---------------------------------------------------------------------------------


def settings_reference() -> str:
    from oryxtui.config import Settings

    return "\n\n".join(_section_table(name, model) for name, model in _sections(Settings, ""))


def _sections(model: type[BaseModel], prefix: str) -> list[tuple[str, type[BaseModel]]]:
    found = [(prefix, model)] if prefix else []
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            found += _sections(kind, f"{prefix}.{name}" if prefix else name)
    return found


def _section_table(name: str, model: type[BaseModel]) -> str:
    rows = [f"### `[{name}]`", "", "| key | type | default |", "| --- | --- | --- |"]
    for key, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            continue  # a section of its own
        default = field.get_default(call_default_factory=True)
        shown = "—" if default is None else f"`{default!r}`".replace("|", "\\|")
        rows.append(f"| `{key}` | {_type_name(kind)} | {shown} |")
    return "\n".join(rows)


def _type_name(kind: Any) -> str:
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return " or ".join(_type_name(part) for part in typing.get_args(kind))
    if typing.get_origin(kind) is typing.Literal:
        return " or ".join(f"`{value!r}`" for value in typing.get_args(kind))
    if kind is type(None):
        return "unset"
    name = getattr(kind, "__name__", None) or str(kind)
    return f"`{name}`".replace("|", "\\|")


# The REST API --------------------------------------------------------------------------------


def endpoints() -> str:
    from oryxtui.api.app import create_api
    from oryxtui.config import Settings
    from oryxtui.workspace import init_workspace

    with tempfile.TemporaryDirectory() as folder:
        schema = create_api(init_workspace(folder), Settings()).openapi()
    rows = ["| method | path | what it does |", "| --- | --- | --- |"]
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            said = (operation.get("description") or operation.get("summary") or "").split("\n\n")
            first = " ".join(said[0].split()).replace("|", "\\|")
            rows.append(f"| {method.upper()} | `{path}` | {first} |")
    return "\n".join(rows)


# The module map ------------------------------------------------------------------------------


def modules() -> list[tuple[str, str]]:
    """(module, the first sentence of its docstring) of every module of the package."""
    package = ROOT / "oryxtui"
    found = []
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        first = " ".join(doc.split("\n\n")[0].split())
        found.append((name, first))
    return found


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def module_map() -> str:
    rows = ["| module | what it is |", "| --- | --- |"]
    rows += [f"| `{name}` | {_cell(said)} |" for name, said in modules()]
    return "\n".join(rows)


def layers() -> str:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = project["tool"]["importlinter"]["contracts"]
    (layered,) = [c for c in contracts if c["type"] == "layers"]
    rows = [
        " | ".join(name.removeprefix("oryxtui.") for name in layer.split(" | "))
        for layer in layered["layers"]
    ]
    return "```\n" + "\n".join(rows) + "\n```"
