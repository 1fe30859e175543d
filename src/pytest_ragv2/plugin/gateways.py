"""Workers on other hosts: pytest-xdist's execnet gateways (``--tx socket=HOST:PORT``,
``--tx ssh=HOST``) rather than local ``popen`` processes.

A remote worker runs in its own checkout of the project (``//chdir=``) and cannot write
into the controller's run folder, so it writes no raw run to its own disk: each raw line
travels, exactly as the local writer would encode it, on the report of the item that made
it (``report.ragv2_raw_lines``), and the controller appends it to ``runs-<worker>.jsonl``
(``.jsonl.gz`` at the chat layers) in its run folder before the report is aggregated.

Before a remote worker starts, the controller asks its host (through the gateway) for the
sha256 of every file that defines the run (configuration, case files, gold, allow-list)
and refuses the session, naming each differing file, when they are not the controller's.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.run.fingerprint import fingerprint, package_version
from pytest_ragv2.run.rawruns import RawRunWriteError, RawRunWriter

WORKER_SHIPS_RAW_RUNS = "ragv2_ship_raw_runs"
RAW_LINES_ATTRIBUTE = "ragv2_raw_lines"
FINGERPRINT_TIMEOUT_S = 120.0


def is_remote(spec: Any) -> bool:
    """A gateway whose worker does not share the controller's working directory: any
    gateway but a plain ``popen`` (xdist's own test for shipping files to a gateway)."""
    return not spec.popen or bool(spec.chdir)


def remote_gateways(config: pytest.Config) -> list[str]:
    """The ``--tx`` specs of this session whose workers run on another host."""
    if getattr(config.option, "dist", "no") == "no" or not getattr(config.option, "tx", None):
        return []
    import execnet
    from xdist.workermanage import parse_tx_spec_config

    return [spec for spec in parse_tx_spec_config(config) if is_remote(execnet.XSpec(spec))]


@dataclass(frozen=True, slots=True)
class DefiningFiles:
    """The files that define a run, as ``/``-separated paths relative to the rootdir:
    single files, and folders whose YAML files all count (``recursive``: subfolders too)."""

    files: tuple[str, ...]
    folders: tuple[tuple[str, bool], ...]

    def hashes(self, rootdir: Path) -> dict[str, str | None]:
        return fingerprint(rootdir, self.files, self.folders)


def defining_files(
    rootdir: Path,
    config_path: Path | None,
    cases: Path,
    gold: Path,
    allowlist: Path | None,
) -> DefiningFiles:
    """What the run manifest hashes (``config``, ``case_files``, ``gold_files``,
    ``allowlist``), named relative to the rootdir."""
    files = [path for path in (config_path, allowlist) if path is not None]
    return DefiningFiles(
        files=tuple(relative_path(path, rootdir) for path in files),
        folders=((relative_path(cases, rootdir), True), (relative_path(gold, rootdir), False)),
    )


def relative_path(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path.resolve(), start.resolve())).as_posix()


def differing_files(
    expected: Mapping[str, str | None], found: Mapping[str, str | None]
) -> list[str]:
    """Each file that is not the same on the worker's host, with how it differs."""
    lines: list[str] = []
    for name in sorted(set(expected) | set(found)):
        here, there = expected.get(name), found.get(name)
        if here == there:
            continue
        if there is None:
            lines.append(f"{name}: missing on the worker's host")
        elif here is None:
            lines.append(f"{name}: on the worker's host only, not part of this run")
        else:
            lines.append(f"{name}: differs (sha256 here {here[:12]}…, there {there[:12]}…)")
    return lines


def check_same_gold(
    node: Any, rootdir: str, wanted: DefiningFiles, expected: Mapping[str, str | None]
) -> None:
    """Refuse (a usage error) a remote worker whose host does not hold this run's files
    (``expected``: their hashes here) or another version of the plugin. ``rootdir`` is the
    rootdir relative to the controller's invocation directory, for which the worker's
    working directory stands."""
    from pytest_ragv2.run import fingerprint as module

    channel = node.gateway.remote_exec(module)
    request = {"rootdir": rootdir, "files": list(wanted.files), "folders": wanted.folders}
    channel.send(request)
    answer: dict[str, Any] = channel.receive(timeout=FINGERPRINT_TIMEOUT_S)
    where = f"worker {node.gateway.id} (--tx {node.gateway.spec._spec}), working in {answer['cwd']}"
    changed = differing_files(expected, answer["files"])
    if answer["version"] != package_version():
        changed.insert(0, f"pytest-ragv2 {answer['version']} there, {package_version()} here")
    if changed:
        lines = "\n".join(f"  {line}" for line in changed)
        raise pytest.UsageError(
            f"{where}: not this run's files, {len(changed)} difference(s):\n{lines}\n"
            "(every host runs a checkout of the same commit in the same environment; point "
            "the gateway at it with //chdir=, relative to where its server runs)"
        )


class ShippedRawRuns:
    """The controller's writers of its remote workers' raw runs, one file per worker."""

    def __init__(self, new_writer: Callable[[str], RawRunWriter]) -> None:
        self._new_writer = new_writer
        self._writers: dict[str, RawRunWriter] = {}

    def receive(self, worker: str, lines: Iterable[str]) -> str | None:
        """Append a report's raw lines to its worker's file; why they could not be written,
        once they could not (the session then ends with exit status 3)."""
        writer = self._writers.get(worker)
        if writer is None:
            writer = self._writers[worker] = self._new_writer(worker)
        try:
            for line in lines:
                writer.append_line(line.encode("utf-8"))
        except RawRunWriteError as exc:
            return str(exc)
        return None

    def close(self) -> None:
        for writer in self._writers.values():
            writer.close()


def worker_of(report: Any) -> str | None:
    node = getattr(report, "node", None)
    workerinput: Mapping[str, Any] = getattr(node, "workerinput", None) or {}
    worker = workerinput.get("workerid")
    return str(worker) if worker is not None else None


def without_implicit_rsync(config: pytest.Config) -> None:
    """No copy of pytest itself into a remote worker's checkout: xdist 3 sends its own
    sources to every non-popen gateway unless told otherwise (a deprecated feature, gone in
    xdist 4); each host has its own environment. Directories the user asks to rsync
    (``--rsyncdir``) still are."""
    if config.getoption("rsyncdir", None) or config.getini("rsyncdirs"):
        return
    manager = getattr(config.pluginmanager.get_plugin("dsession"), "nodemanager", None)
    if manager is not None:
        manager.roots = []


def refuse_remote_resume(config: pytest.Config, given: str) -> None:
    remote = remote_gateways(config)
    if remote:
        raise pytest.UsageError(
            f"--ragv2-resume={given}: a resumption reads the run's earlier raw runs in every "
            f"worker, and workers on other hosts ({', '.join(remote)}) do not have them; "
            "resume on this host (-n N or no xdist)"
        )
