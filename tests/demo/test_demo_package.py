"""The demo is a system under test: its package never imports the judge's side of the plugin.

Each ``ragv2_demo`` module is imported alone in a fresh interpreter, and none of the
scorers, the session, the case catalog or the gold may have been imported with it; the
plugin reaches the demo through ``pytest_ragv2.run.demo`` only.
"""

from __future__ import annotations

import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ragv2_demo

FORBIDDEN = (
    "pytest_ragv2.scoring",
    "pytest_ragv2.deciding.aggregate",
    "pytest_ragv2.gold.cases",
    "pytest_ragv2.gold.answers",
)
DEMO_MODULES = sorted(
    f"ragv2_demo.{info.name}" for info in pkgutil.iter_modules(ragv2_demo.__path__)
)
DEMO_NAME = re.compile(r"\bragv2_demo\b")  # the package, not a key such as ragv2_demo_url
SRC = Path(ragv2_demo.__file__).resolve().parent.parent

PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(sys.modules)))
"""


def _imported_with(module: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, module], capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(result.stdout)
    return loaded


def test_every_demo_module_is_probed() -> None:
    assert {"ragv2_demo.answer", "ragv2_demo.engine", "ragv2_demo.reference"} <= set(DEMO_MODULES)
    assert "ragv2_demo.server" in DEMO_MODULES


@pytest.mark.parametrize("module", DEMO_MODULES)
def test_demo_module_never_imports_the_judge(module: str) -> None:
    loaded = _imported_with(module)
    assert module in loaded
    peeking = [
        name
        for name in loaded
        if any(name == part or name.startswith(part + ".") for part in FORBIDDEN)
    ]
    assert peeking == [], f"{module} imports {peeking}"


def test_the_probe_sees_a_forbidden_import() -> None:
    # the control: the probe does report the scorers when a module pulls them in
    assert "pytest_ragv2.scoring" in _imported_with("pytest_ragv2.scoring.evidence")


def test_only_the_bridge_imports_the_demo() -> None:
    plugin = SRC / "pytest_ragv2"
    importers = sorted(
        str(path.relative_to(plugin))
        for path in plugin.rglob("*.py")
        if DEMO_NAME.search(path.read_text(encoding="utf-8"))
    )
    # tools/cli.py names the server once, lazily, for `ragv2 demo serve`
    assert importers == ["run/demo.py", "tools/cli.py"]
