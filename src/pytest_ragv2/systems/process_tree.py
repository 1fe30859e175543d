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

Without ``/proc`` (not Linux) only the root's process group is signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass

_PROC = "/proc"


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

    def __init__(self, root: int) -> None:
        self.root = root
        self.known: dict[int, int] = {}
        self.available = os.path.isdir(f"{_PROC}/self")

    def scan(self) -> list[_Stat]:
        """The command's live processes now (the root excluded), remembering them."""
        if not self.available:
            return []
        stats = _all_stats()
        members: dict[int, _Stat] = {}
        for stat in stats:
            if stat.pid == self.root:
                continue
            if stat.session == self.root or self.known.get(stat.pid) == stat.start:
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
