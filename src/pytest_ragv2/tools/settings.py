"""The settings a ``ragv2`` command reads: as the plugin loads them with the current folder as
its rootdir, or, to rescore a run, the configuration the run was made with.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragv2.config.file import find_config, read_config

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings


def load_cli_settings(cwd: Path, config: str | None) -> tuple[Settings, dict[str, Any]]:
    """The settings as the plugin loads them with the current folder as its rootdir
    (``--config`` relative to the current folder, else ragv2.yaml, else pyproject.toml),
    and the configuration mapping as written."""
    from pytest_ragv2.config.settings import load_settings

    path = find_config(cwd, config, cwd)
    raw = read_config(path) if path is not None else {}
    return load_settings(cwd, None, path=path, raw=raw), raw


def rescore_settings(
    run_dir: Path, manifest: dict[str, Any], config: str | None, cwd: Path
) -> tuple[Settings, str]:
    """The settings to rescore a run with, and a line saying where they came from.

    ``--config`` wins; else the configuration file the manifest records (paths resolved
    from its folder, as in the run); a manifest from before the file's path was recorded
    is matched by the hash it recorded, searching from the run directory upwards; failing
    that, the current folder's configuration, and the line says so.
    """
    from pytest_ragv2.config.settings import load_settings
    from pytest_ragv2.run.rawruns import recorded_config

    if config is not None:
        settings, _ = load_cli_settings(cwd, config)
        return settings, f"{settings.source} (--config)"
    recorded = recorded_config(manifest, run_dir)
    if recorded.rootdir is not None:
        if recorded.path is None:
            settings = load_settings(recorded.rootdir, None, path=None, raw={})
            return settings, f"none, defaults in {recorded.rootdir} ({recorded.how})"
        settings = load_settings(recorded.rootdir, str(recorded.path))
        return settings, f"{recorded.path} ({recorded.how})"
    settings, _ = load_cli_settings(cwd, None)
    where = settings.source if settings.source is not None else f"none, defaults in {cwd}"
    return settings, f"{where}, of the current folder: {recorded.how}"
