"""The API package's house (issue 58): its modules import each other without a circle —
type-only imports counted — so the shared state is a floor the others stand on, and no module
reaches into another's private names."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "oryxtui" / "api"


def imports() -> dict[str, list[tuple[str, list[str]]]]:
    """Each module of oryxtui.api: the oryxtui.api modules it imports, with the names."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        edges = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("oryxtui.api."):
                    edges.append((node.module.split(".")[2], [a.name for a in node.names]))
                elif node.module == "oryxtui.api":
                    edges += [(a.name, []) for a in node.names]
        found[path.stem] = edges
    return found


def test_no_module_of_the_api_imports_in_a_circle() -> None:
    graph = {module: {target for target, _ in edges} for module, edges in imports().items()}
    circles = []

    def visit(module: str, path: list[str]) -> None:
        for target in sorted(graph.get(module, ())):
            if target in path:
                circles.append([*path[path.index(target) :], target])
            elif target in graph:
                visit(target, [*path, target])

    for module in graph:
        visit(module, [module])
    assert not circles, circles[:5]


def test_no_module_reaches_into_anothers_private_names() -> None:
    reached = [
        (module, target, name)
        for module, edges in imports().items()
        for target, names in edges
        for name in names
        if name.startswith("_")
    ]
    assert not reached, reached
