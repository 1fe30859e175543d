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

from pytest_ragv2.run.fingerprint import (
    fingerprint,
    module_hashes,
    package_sources,
    package_version,
)
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
    single files, and folders whose YAML files all count (``recursive``: subfolders too);
    and the python system modules (``pkg.mod``) the run calls."""

    files: tuple[str, ...]
    folders: tuple[tuple[str, bool], ...]
    modules: tuple[str, ...] = ()

    def hashes(self, rootdir: Path) -> dict[str, str | None]:
        return fingerprint(rootdir, self.files, self.folders)


@dataclass(frozen=True, slots=True)
class HostExpectation:
    """What every host must hold, as computed here: the defining files' hashes, the
    plugin's sources' and the python system modules'."""

    wanted: DefiningFiles
    files: Mapping[str, str | None]
    sources: Mapping[str, str]
    modules: Mapping[str, str | None]

    @classmethod
    def here(cls, rootdir: Path, wanted: DefiningFiles) -> HostExpectation:
        return cls(
            wanted,
            wanted.hashes(rootdir),
            package_sources(),
            module_hashes(rootdir, wanted.modules),
        )


def defining_files(
    rootdir: Path,
    config_path: Path | None,
    cases: Path,
    gold: Path,
    allowlist: Path | None,
    modules: Iterable[str] = (),
) -> DefiningFiles:
    """What the run manifest hashes (``config``, ``case_files``, ``gold_files``,
    ``allowlist``), named relative to the rootdir, and the python system modules."""
    files = [path for path in (config_path, allowlist) if path is not None]
    return DefiningFiles(
        files=tuple(relative_path(path, rootdir) for path in files),
        folders=((relative_path(cases, rootdir), True), (relative_path(gold, rootdir), False)),
        modules=tuple(sorted(set(modules))),
    )


def python_modules(systems: Mapping[str, Any]) -> list[str]:
    """The modules of the run's python systems (``callable = "pkg.mod:func"``)."""
    found: list[str] = []
    for system in systems.values():
        for adapter in (system.retrieval, system.chat):
            target = getattr(adapter, "callable", None)
            if isinstance(target, str) and ":" in target:
                found.append(target.split(":", 1)[0])
    return found


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


SOURCES_NAMED = 10  # differing plugin sources named one by one, then counted


def host_differences(expected: HostExpectation, answer: Mapping[str, Any]) -> list[str]:
    """Everything the host's answer does not share with this run."""
    changed = differing_files(expected.files, answer["files"])
    if answer["version"] != package_version():
        changed.insert(0, f"pytest-ragv2 {answer['version']} there, {package_version()} here")
    sources = differing_files(dict(expected.sources), answer.get("sources") or {})
    if sources:
        changed += [f"installed plugin source {line}" for line in sources[:SOURCES_NAMED]]
        if len(sources) > SOURCES_NAMED:
            changed.append(f"… {len(sources) - SOURCES_NAMED} more plugin source file(s)")
    found_modules: Mapping[str, str | None] = answer.get("modules") or {}
    for module in sorted(expected.modules):
        here, there = expected.modules[module], found_modules.get(module)
        if here != there:
            how = "not found" if there is None else "differs"
            changed.append(f"python system module {module}: {how} on the worker's host")
    if answer.get("import_failure"):
        changed.append(f"the plugin or a system module does not import: {answer['import_failure']}")
    return changed


def check_host(node: Any, rootdir: str, expected: HostExpectation) -> dict[str, Any]:
    """Refuse (a usage error) a remote worker whose host does not hold this run's files,
    plugin sources and system modules, or cannot import them; what the host said of itself
    (for the manifest) when it does. ``rootdir`` is the rootdir relative to the controller's
    invocation directory, for which the worker's working directory stands."""
    from pytest_ragv2.run import fingerprint as module

    channel = node.gateway.remote_exec(module)
    wanted = expected.wanted
    request = {
        "rootdir": rootdir,
        "files": list(wanted.files),
        "folders": wanted.folders,
        "modules": list(wanted.modules),
        "imports": True,
    }
    channel.send(request)
    answer: dict[str, Any] = channel.receive(timeout=FINGERPRINT_TIMEOUT_S)
    spec = node.gateway.spec._spec
    where = f"worker {node.gateway.id} (--tx {spec}), working in {answer['cwd']}"
    changed = host_differences(expected, answer)
    if changed:
        lines = "\n".join(f"  {line}" for line in changed)
        commit = f" (checkout at {answer['commit']})" if answer.get("commit") else ""
        raise pytest.UsageError(
            f"{where}{commit}: not this run's files or code, {len(changed)} difference(s):\n"
            f"{lines}\n(every host runs a checkout of the same commit in the same environment; "
            "point the gateway at it with //chdir=, relative to where its server runs; a "
            "socket server keeps the modules an earlier session imported: restart it after "
            "an update)"
        )
    return {"tx": spec, "cwd": answer["cwd"], "commit": answer.get("commit")}


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


PROBE_TIMEOUT_S = 10.0
PROBE_REPLY = b"ragv2-ok"
# one line an execnet socket server evaluates and runs (its protocol: the repr of a source):
# it answers on the connection and goes back to waiting for the next one
PROBE_LINE = (repr(f"clientsock.sendall({PROBE_REPLY!r})") + "\n").encode()


def probe_socket_server(hostport: str, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """Why the execnet socket server at ``host:port`` cannot take a worker now (None: it
    answered). A server serves one connection at a time, so one that is busy with another
    session's worker does not answer either."""
    import socket

    host, _, port = hostport.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s) as connection:
            connection.settimeout(timeout_s)
            connection.sendall(PROBE_LINE)
            reply = connection.recv(len(PROBE_REPLY))
    except TimeoutError:
        return (
            f"no answer from {hostport} within {timeout_s:g} s (unreachable, or its socket "
            "server is busy with another session: a server takes one worker at a time)"
        )
    except (OSError, ValueError) as exc:
        return f"cannot connect to {hostport}: {getattr(exc, 'strerror', None) or exc}"
    if reply != PROBE_REPLY:
        return f"{hostport} did not answer as an execnet socket server does"
    return None


def check_remote_session(config: pytest.Config, *, demo: bool) -> None:
    """Before any gateway opens: refuse (a usage error) workers on other hosts with the
    embedded demo, two workers on one socket server, and a socket server that does not
    answer within the bound, naming each; and stop on a lost host rather than replace it
    (``--max-worker-restart=0`` unless given)."""
    import execnet

    specs = remote_gateways(config)
    if not specs:
        return
    if demo:
        raise pytest.UsageError(
            "workers on other hosts (--tx " + ", ".join(specs) + ") with the embedded demo: "
            "the demo serves on this machine's loopback interface, which other hosts do not "
            "reach; configure systems with URLs every host reaches, or use local workers (-n N)"
        )
    servers: dict[str, list[str]] = {}
    for spec in specs:
        xspec = execnet.XSpec(spec)
        if xspec.socket:
            servers.setdefault(str(xspec.socket), []).append(spec)
    shared = {server: given for server, given in servers.items() if len(given) > 1}
    if shared:
        lines = "\n".join(
            f"  {server}: {len(given)} --tx lines" for server, given in shared.items()
        )
        raise pytest.UsageError(
            f"one execnet socket server takes one worker at a time, so several --tx lines "
            f"for one server wait for ever:\n{lines}\n(start one server per worker, each on "
            "its own port)"
        )
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(8, len(servers)) or 1) as pool:
        answers = dict(zip(servers, pool.map(probe_socket_server, servers), strict=True))
    failed = [
        f"  worker {execnet.XSpec(servers[server][0]).id or '?'} (--tx {servers[server][0]}): "
        f"{problem}"
        for server, problem in answers.items()
        if problem is not None
    ]
    if failed:
        raise pytest.UsageError(
            f"{len(failed)} worker host(s) cannot take a worker:\n" + "\n".join(failed)
        )
    if getattr(config.option, "maxworkerrestart", None) is None:
        # a lost host is not replaced: a new gateway to it would fail or hang
        config.option.maxworkerrestart = "0"


def refuse_remote_resume(config: pytest.Config, given: str) -> None:
    remote = remote_gateways(config)
    if remote:
        raise pytest.UsageError(
            f"--ragv2-resume={given}: a resumption reads the run's earlier raw runs in every "
            f"worker, and workers on other hosts ({', '.join(remote)}) do not have them; "
            "resume on this host (-n N or no xdist)"
        )
