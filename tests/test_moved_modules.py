"""The modules that moved to the package's rooms keep their old import paths for one release,
each with a DeprecationWarning naming the new path."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from pytest_ragv2._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_gives_the_moved_module(old: str) -> None:
    """In a fresh interpreter: the old path is not imported yet, so the warning is raised."""
    code = (
        "import importlib, warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    module = importlib.import_module({old!r})\n"
        f"assert module is importlib.import_module({MOVED[old]!r}), module\n"
        "print([str(w.message) for w in caught if w.category is DeprecationWarning])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert f"{old} moved to {MOVED[old]}" in done.stdout


def test_every_new_path_exists_and_no_old_path_is_a_real_module() -> None:
    for old, new in MOVED.items():
        importlib.import_module(new)
        assert importlib.util.find_spec(old).loader.__class__.__name__ == "MovedModules"


def test_a_documented_name_imports_from_its_old_path() -> None:
    sys.modules.pop("pytest_ragv2.export_trec", None)
    with pytest.warns(DeprecationWarning, match="pytest_ragv2.tools.export_trec"):
        from pytest_ragv2.export_trec import plugin_means  # type: ignore[import-not-found]
    assert plugin_means.__module__ == "pytest_ragv2.tools.export_trec"
