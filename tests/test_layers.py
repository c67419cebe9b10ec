"""The package's layers, read from its own imports (lazy imports inside functions included; ``TYPE_CHECKING`` blocks
and the lazy package ``__init__`` are not edges): no cycle, and at most 12 floors from ``__main__`` down."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "metametric_jax"
MAX_FLOORS = 12


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            submodules = {f"{base}.{a.name}" for a in node.names} & modules.keys()
            found |= submodules
            if base in modules and len(submodules) < len(node.names):
                found.add(base)
    return found - {name, "metametric_jax", "metametric_jax.tasks", "metametric_jax.commands"}


@functools.cache
def _graph() -> dict[str, frozenset[str]]:
    modules = _modules()
    return {name: frozenset(_imports(name, path, modules)) for name, path in modules.items()}


def _longest_chain(graph: dict[str, frozenset[str]], start: str) -> list[str]:
    best: dict[str, list[str]] = {}

    def walk(name: str, stack: tuple[str, ...]) -> list[str]:
        assert name not in stack, "import cycle: " + " -> ".join([*stack, name])
        if name not in best:
            below = [walk(d, (*stack, name)) for d in sorted(graph[name])]
            best[name] = [name, *max(below, key=len, default=[])]
        return best[name]

    return walk(start, ())


def test_no_import_cycle() -> None:
    graph = _graph()
    for name in graph:
        _longest_chain(graph, name)


def test_at_most_twelve_floors_from_main() -> None:
    chain = _longest_chain(_graph(), "metametric_jax.__main__")
    assert len(chain) <= MAX_FLOORS, " -> ".join(chain)


def test_the_check_sees_a_cycle_and_a_tall_stack() -> None:
    cyclic = {"a": frozenset({"b"}), "b": frozenset({"a"})}
    try:
        _longest_chain(cyclic, "a")
    except AssertionError as err:
        assert "a -> b -> a" in str(err)
    else:
        raise AssertionError("a cycle went unseen")
    tall = {str(i): frozenset({str(i + 1)}) for i in range(13)} | {"13": frozenset()}
    assert len(_longest_chain(tall, "0")) == 14
