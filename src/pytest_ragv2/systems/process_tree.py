"""Every process a command started, whatever its process group or session (Linux ``/proc``).

A command run in a session of its own can still start processes that leave it: Codex puts
each MCP server in a process group of its own, and a server may ``setsid``. Killing the
command's process group misses those. ``ProcessTree`` finds the command's processes by
reading ``/proc``: everything in the root's session, everything descended from a process
already found, and everything found by an earlier ``scan`` that is still the same process
(same start time) even after its parent died. Scanning while the command runs (the command
adapter does, a few times a second) is what keeps track of a process whose parent exits.

The root must stay unreaped while the tree is used: its pid is then the session id of the
processes still in its session and cannot be taken by another process.

A process that leaves at once — a helper that calls ``setsid`` and is orphaned, a daemon
that forks twice — can be gone from the session and from the descent before any scan. So
the command is started with a variable of its own (:data:`MARK_VARIABLE`, a fresh token per
turn) in its environment, which every descendant inherits whatever its session: a process
started after the root whose environment carries the token is the command's too. (Jenkins'
process-tree killer finds a build's processes by the same kind of cookie.) A descendant that
clears its environment and double-forks at once is the one left out.

Without ``/proc`` (not Linux) only the root's process group is signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass

_PROC = "/proc"
MARK_VARIABLE = "RAGV2_TURN_TOKEN"


@dataclass(frozen=True, slots=True)
class _Stat:
    pid: int
    ppid: int
    pgrp: int
    session: int
    start: int  # clock ticks after boot: with the pid, identifies the process
    zombie: bool


def _read_stat(pid: int) -> _Stat | None:
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as stream:
            data = stream.read()
    except OSError:
        return None
    # the command name is in parentheses and may contain anything, spaces and ")" included
    fields = data[data.rindex(b")") + 2 :].split()
    try:
        return _Stat(
            pid=pid,
            ppid=int(fields[1]),
            pgrp=int(fields[2]),
            session=int(fields[3]),
            start=int(fields[19]),
            zombie=fields[0] in (b"Z", b"X"),
        )
    except (IndexError, ValueError):
        return None


def _all_stats() -> list[_Stat]:
    stats: list[_Stat] = []
    for name in os.listdir(_PROC):
        if name.isdigit():
            stat = _read_stat(int(name))
            if stat is not None:
                stats.append(stat)
    return stats


class ProcessTree:
    """The processes of one command, remembered across scans (pid -> start time)."""

    def __init__(self, root: int, mark: str | None = None) -> None:
        self.root = root
        self.known: dict[int, int] = {}
        self.available = os.path.isdir(f"{_PROC}/self")
        # MARK_VARIABLE=<token> as it stands in /proc/<pid>/environ, NUL-separated
        self._mark = None if mark is None else f"\0{MARK_VARIABLE}={mark}\0".encode()
        self._not_marked: dict[int, int] = {}  # pid -> start time: read once, not marked
        root_stat = _read_stat(root) if self.available else None
        self._root_start = root_stat.start if root_stat is not None else None

    def scan(self) -> list[_Stat]:
        """The command's live processes now (the root excluded), remembering them."""
        if not self.available:
            return []
        stats = _all_stats()
        members: dict[int, _Stat] = {}
        for stat in stats:
            if stat.pid == self.root:
                continue
            if (
                stat.session == self.root
                or self.known.get(stat.pid) == stat.start
                or self._marked(stat)
            ):
                members[stat.pid] = stat
        parents = {self.root, *members}
        grew = True
        while grew:  # descendants of anything found, whatever their session
            grew = False
            for stat in stats:
                if stat.pid not in members and stat.pid != self.root and stat.ppid in parents:
                    members[stat.pid] = stat
                    parents.add(stat.pid)
                    grew = True
        for stat in members.values():
            self.known[stat.pid] = stat.start
        return [stat for stat in members.values() if not stat.zombie]

    def _marked(self, stat: _Stat) -> bool:
        """Whether ``stat``'s process was started after the root and carries the turn's
        token in its environment (each process is read once: its environment's start is
        fixed when it execs, and a process that did not inherit the token never will)."""
        if self._mark is None or self._root_start is None or stat.start < self._root_start:
            return False
        if self._not_marked.get(stat.pid) == stat.start:
            return False
        try:
            with open(f"{_PROC}/{stat.pid}/environ", "rb") as stream:
                environment = b"\0" + stream.read() + b"\0"
        except OSError:  # gone, or another user's: not ours either way
            return False
        if self._mark in environment:
            return True
        self._not_marked[stat.pid] = stat.start
        return False

    def alive(self) -> list[int]:
        """The pids of the command's processes still running (the root excluded)."""
        return sorted(stat.pid for stat in self.scan())

    def signal(self, signum: signal.Signals) -> None:
        """Send ``signum`` to the root's process group and to every process of the tree,
        and to the process groups they lead or belong to."""
        members = self.scan()
        own_group = os.getpgrp()
        groups = {self.root} | {stat.pgrp for stat in members}
        for group in sorted(groups - {own_group, 0, 1}):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signum)
        for stat in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(stat.pid, signum)
