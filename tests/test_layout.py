"""The package's plan holds: only ``plugin/`` imports pytest (or its plugins), and the import
graph — module level, inside functions and under TYPE_CHECKING alike — is what docs/design.md
draws."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "src" / "pytest_ragv2"
PYTEST_WORLD = ("pytest", "_pytest", "xdist", "pytest_html", "execnet", "pluggy")


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imported(path: Path, module: str) -> Iterator[str]:
    """Every module name ``path`` imports, at any level of the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def test_only_the_plugin_package_imports_pytest() -> None:
    outside = {
        name: sorted(
            {found for found in imported(path, name) if found.split(".")[0] in PYTEST_WORLD}
        )
        for name, path in modules().items()
        if not name.startswith("pytest_ragv2.plugin")
    }
    assert {name: found for name, found in outside.items() if found} == {}


def test_the_plugin_package_is_where_pytest_is() -> None:
    hooks = set(imported(PACKAGE / "plugin" / "hooks.py", "pytest_ragv2.plugin.hooks"))
    assert "pytest" in hooks


def _graph() -> dict[str, set[str]]:
    found = modules()

    def owner(name: str) -> str | None:
        while name and name not in found:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        edges = graph.setdefault(name, set())
        for imported_name in imported(path, name):
            target = owner(imported_name) if imported_name.startswith("pytest_ragv2") else None
            if target is None or target == name:
                continue
            edges.add(target)
            # importing a submodule runs its packages' __init__ first
            parent = target.rpartition(".")[0]
            while parent in found and not name.startswith(parent + "."):
                edges.add(parent)
                parent = parent.rpartition(".")[0]
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_import_graph_has_no_cycle() -> None:
    """Counting imports inside functions and under TYPE_CHECKING: a cycle is a module that
    cannot be understood, tested or moved without the others."""
    assert cycles(_graph()) == []


def test_a_cycle_is_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]


def test_the_layer_names_the_schemas_accept_are_the_registrys() -> None:
    """A case's ``layers`` and an adjudication's ``layer`` are typed Literals (for the JSON
    Schema's enum); the registry declares the layers: the two must agree."""
    import typing

    from pytest_ragv2.gold.adjudication import AdjudicationEntry
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.layers.registry import LAYERS

    (case_layer,) = typing.get_args(Case.model_fields["layers"].annotation)
    assert typing.get_args(case_layer) == tuple(LAYERS)
    ruled = typing.get_args(AdjudicationEntry.model_fields["layer"].annotation)
    assert typing.get_args(ruled[0]) == tuple(LAYERS)


def _layer_branches(path: Path) -> list[int]:
    """Lines comparing something named like a layer with a layer's name ("A", "B", "C")."""
    from pytest_ragv2.layers.registry import LAYERS

    def names_a_layer(node: ast.AST) -> bool:
        return "layer" in ast.unparse(node).lower()

    def layer_names(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in LAYERS
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(layer_names(element) for element in node.elts)
        return False

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(layer_names(o) for o in operands) and any(names_a_layer(o) for o in operands):
                found.append(node.lineno)
    return found


def test_no_module_outside_the_layers_branches_on_a_layers_name() -> None:
    """What differs between layers is declared in the registry or behind the protocol."""
    branches = {
        name: lines
        for name, path in modules().items()
        if not name.startswith("pytest_ragv2.layers.") and (lines := _layer_branches(path))
    }
    assert branches == {}


def test_a_layer_branch_is_seen(tmp_path: Path) -> None:
    module = tmp_path / "branchy.py"
    module.write_text('def f(record):\n    return record.key.layer == "B"\n')
    assert _layer_branches(module) == [2]


MODULE_LINES_MAX = 600


def test_no_module_is_over_600_lines() -> None:
    """A module a newcomer can read whole: past 600 lines it holds more than one thing."""
    long = {
        name: count
        for name, path in modules().items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MODULE_LINES_MAX
    }
    assert long == {}


# the tests of the demo package (src/ragv2_demo) and the cross-cutting ones at the top
TEST_ROOMS_BEYOND_PACKAGE = {"demo"}
TESTS_AT_THE_TOP = {
    "test_docs.py",
    "test_fast_paths.py",
    "test_layout.py",
    "test_moved_modules.py",
    "test_own_evaluation_guide.py",
}


def test_the_tests_mirror_the_package_rooms() -> None:
    tests = REPO_ROOT / "tests"
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    folders = {p.name for p in tests.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert folders - TEST_ROOMS_BEYOND_PACKAGE <= rooms, "a test folder names no package room"
    assert {p.name for p in tests.glob("test_*.py")} == TESTS_AT_THE_TOP, (
        "a new test goes in the folder of the package room it tests"
    )


def test_no_property_test_has_a_deadline() -> None:
    """Hypothesis's default 200 ms deadline per example is a wall-clock assertion: the suite
    runs every property test without one (tests/conftest.py), and none sets its own."""
    import re

    from hypothesis import settings

    assert settings.default.deadline is None
    tests = Path(__file__).resolve().parent
    timed = [
        f"{path.relative_to(tests)}:{number}"
        for path in sorted(tests.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"deadline\s*=\s*(?!None)[\w.(]", line) and "settings" in line
    ]
    assert timed == []
