"""Finding and reading the ragv2 configuration file, without importing pydantic.

Kept apart from settings.py so that an inert plugin (no layer asked for) can look for a
``layer`` key at almost no start-up cost.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pytest_ragv2.config.inputs import (
    CONFIG_FILE_MAX_BYTES,
    InputFileError,
    present,
    read_input_text,
)


class SettingsError(ValueError):
    """A configuration that cannot be used; the message names the file and the field."""


def find_config(
    rootdir: Path, explicit: str | None, invocation_dir: Path | None = None
) -> Path | None:
    """An explicit path is taken relative to where pytest was invoked (like any command-line
    path); without one, ragv2.yaml, else pyproject.toml, in the rootdir."""
    if explicit:
        path = Path(explicit)
        if not path.is_absolute():
            path = (invocation_dir or rootdir) / path
        if not present(path):
            raise SettingsError(f"{explicit}: configuration file not found")
        return path
    # one that is there but is no regular file (a FIFO, a folder) is refused when read,
    # never passed over for the next one
    for name in ("ragv2.yaml", "ragv2.yml"):
        if present(rootdir / name):
            return rootdir / name
    pyproject = rootdir / "pyproject.toml"
    if present(pyproject):
        return pyproject
    return None


def _read(path: Path) -> str:
    try:
        return read_input_text(path, CONFIG_FILE_MAX_BYTES, "a configuration file")
    except InputFileError as exc:
        where = f"{path}:{exc.line}" if exc.line is not None else str(path)
        raise SettingsError(f"{where}: cannot read configuration: {exc.message}") from None


def read_config(path: Path) -> dict[str, Any]:
    """The ragv2 mapping of a pyproject.toml ([tool.ragv2]) or a ragv2.yaml (top level or
    under a ``ragv2:`` key)."""
    text = _read(path)
    if path.suffix == ".toml":
        try:
            section = tomllib.loads(text).get("tool", {}).get("ragv2", {})
        except tomllib.TOMLDecodeError as exc:
            found = re.search(r"at line (\d+)", str(exc))
            where = f"{path}:{found.group(1)}" if found else str(path)
            raise SettingsError(f"{where}: cannot read configuration: {exc}") from None
    else:
        import yaml

        try:
            section = yaml.safe_load(text) or {}
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
            problem = exc.problem or exc.context or "invalid YAML"
            raise SettingsError(f"{where}: cannot read configuration: {problem}") from None
        except yaml.YAMLError as exc:
            raise SettingsError(f"{path}: cannot read configuration: {exc}") from None
        if isinstance(section, dict) and isinstance(section.get("ragv2"), dict):
            section = section["ragv2"]
    if not isinstance(section, dict):
        raise SettingsError(f"{path}: the ragv2 configuration must be a mapping")
    return section
