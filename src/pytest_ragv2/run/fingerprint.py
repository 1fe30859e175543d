"""The sha256 of the files that define a run, computed alike on the controller's host and,
sent through an execnet gateway as source, on a remote worker's host before its worker
starts. Standard library only, and nothing imported from the package: on the remote host
this module runs as ``__channelexec__``, before pytest has loaded (and could rewrite) the
plugin.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

YAML_PATTERN = "*.y*ml"
PACKAGE = "pytest-ragv2"


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


def answer(request: Mapping[str, Any]) -> dict[str, Any]:
    """What a host says of itself: its working directory, the plugin's version there and
    the hashes of the requested files under ``request["rootdir"]`` (relative to it)."""
    folders = [(str(name), bool(recursive)) for name, recursive in request["folders"]]
    rootdir = Path(os.getcwd(), str(request["rootdir"]))
    return {
        "cwd": os.getcwd(),
        "version": package_version(),
        "files": fingerprint(rootdir, [str(name) for name in request["files"]], folders),
    }


if __name__ == "__channelexec__":  # pragma: no cover - on the remote worker's host
    channel: Any = globals()["channel"]
    channel.send(answer(channel.receive()))
