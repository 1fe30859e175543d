"""The sha256 of the files that define a run, computed alike on the controller's host and,
sent through an execnet gateway as source, on a remote worker's host before its worker
starts: the configuration, cases, gold and allow-list, the installed plugin's own sources
(its scorers) and every python system module. The host also says which commit its
checkout is at (``git describe --always --dirty``) and whether the plugin and the system
modules import there (in a subprocess, within a bound: a checkout that cannot import is
named before its worker starts, rather than leaving the session waiting for it). Standard
library only, and nothing imported from the package: on the remote host this module runs
as ``__channelexec__``, before pytest has loaded (and could rewrite) the plugin.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import posixpath
import subprocess
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

YAML_PATTERN = "*.y*ml"
PACKAGE = "pytest-ragv2"
IMPORT_PACKAGE = "pytest_ragv2"
IMPORT_CHECK_TIMEOUT_S = 60.0


def fingerprint(
    rootdir: Path, files: Sequence[str], folders: Sequence[tuple[str, bool]]
) -> dict[str, str | None]:
    """sha256 of ``files`` (None: missing) and of every YAML file in ``folders`` (with
    subfolders when marked recursive), by ``/``-separated path relative to ``rootdir``."""
    found: dict[str, str | None] = {}
    for name in files:
        path = rootdir / name
        found[name] = sha256(path) if path.is_file() else None
    for folder, recursive in folders:
        base = rootdir / folder
        if base.is_dir():
            paths = base.rglob(YAML_PATTERN) if recursive else base.glob(YAML_PATTERN)
            for path in paths:
                if path.is_file():
                    name = posixpath.join(folder, path.relative_to(base).as_posix())
                    found[posixpath.normpath(name)] = sha256(path)
    return found


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def package_version() -> str | None:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def package_sources() -> dict[str, str]:
    """sha256 of every source file of the installed plugin, by path inside its package
    (found without importing it)."""
    spec = importlib.util.find_spec(IMPORT_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    found: dict[str, str] = {}
    for location in locations:
        base = Path(location)
        for path in sorted(base.rglob("*.py")):
            if path.is_file() and "__pycache__" not in path.parts:
                found[posixpath.join(IMPORT_PACKAGE, path.relative_to(base).as_posix())] = sha256(
                    path
                )
    return found


def module_file(rootdir: Path, module: str) -> Path | None:
    """The source file of a python system module (``pkg.mod``): under the rootdir, else
    where the interpreter finds its top package (no module is imported)."""
    parts = module.split(".")
    candidates = [rootdir.joinpath(*parts[:-1], parts[-1] + ".py")]
    candidates.append(rootdir.joinpath(*parts, "__init__.py"))
    spec = importlib.util.find_spec(parts[0]) if not any(p.is_file() for p in candidates) else None
    if spec is not None and spec.submodule_search_locations:
        base = Path(next(iter(spec.submodule_search_locations)))
        candidates += [
            base.joinpath(*parts[1:-1], parts[-1] + ".py"),
            base.joinpath(*parts[1:], "__init__.py"),
        ]
    elif spec is not None and spec.origin and len(parts) == 1:
        candidates.append(Path(spec.origin))
    return next((path for path in candidates if path.is_file()), None)


def module_hashes(rootdir: Path, modules: Sequence[str]) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for module in modules:
        path = module_file(rootdir, module)
        found[module] = sha256(path) if path is not None else None
    return found


def git_output(directory: Path, *arguments: str, timeout_s: float = 30.0) -> str | None:
    """What ``git <arguments>`` prints in ``directory``, stripped; None when git is not
    there, fails (no checkout) or takes longer than ``timeout_s``."""
    try:
        done = subprocess.run(
            ["git", *arguments],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def checkout_commit(rootdir: Path) -> str | None:
    """``git describe --always --dirty`` of the checkout holding ``rootdir``."""
    return git_output(rootdir, "describe", "--always", "--dirty") or None


def import_failure(rootdir: Path, modules: Sequence[str]) -> str | None:
    """Why the plugin or a system module does not import on this host (None: they do),
    asked of a new interpreter so that this process imports nothing."""
    names = [f"{IMPORT_PACKAGE}.plugin.activate", *modules]
    source = "import importlib, sys\nfor name in sys.argv[1:]: importlib.import_module(name)\n"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(rootdir), os.environ.get("PYTHONPATH", "")]),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-c", source, *names],
            cwd=rootdir,
            capture_output=True,
            text=True,
            timeout=IMPORT_CHECK_TIMEOUT_S,
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return f"importing {', '.join(names)} took more than {IMPORT_CHECK_TIMEOUT_S:g} s"
    except OSError as exc:
        return f"{sys.executable} could not be started: {exc}"
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"exit status {done.returncode}"


def answer(request: Mapping[str, Any]) -> dict[str, Any]:
    """What a host says of itself: its working directory, the plugin's version and sources
    there, the hashes of the requested files and python system modules under
    ``request["rootdir"]`` (relative to it), its checkout's commit and, when asked, why the
    plugin or a module does not import."""
    folders = [(str(name), bool(recursive)) for name, recursive in request["folders"]]
    rootdir = Path(os.getcwd(), str(request["rootdir"]))
    modules = [str(name) for name in request.get("modules", ())]
    return {
        "cwd": os.getcwd(),
        "version": package_version(),
        "files": fingerprint(rootdir, [str(name) for name in request["files"]], folders),
        "sources": package_sources(),
        "modules": module_hashes(rootdir, modules),
        "commit": checkout_commit(rootdir),
        "import_failure": import_failure(rootdir, modules) if request.get("imports") else None,
    }


if __name__ == "__channelexec__":  # pragma: no cover - on the remote worker's host
    channel: Any = globals()["channel"]
    channel.send(answer(channel.receive()))
