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
