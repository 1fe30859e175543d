"""Reading an input file: a case, gold or allow-list file, or the configuration.

A case file comes with a pull request, and a pull request can carry a symbolic link to
``/dev/zero`` or ``/dev/urandom``, or a named pipe: read as a file, the first never ends and
the second never starts. So an input is read only when it is a regular file (a symbolic
link to one is fine), and only up to a size limit:

* the path is ``stat``-ed first, so a device or a FIFO is never even opened (opening some
  devices acts);
* the file is opened with ``O_NONBLOCK`` and ``fstat``-ed again, so a file swapped for a
  FIFO in between cannot block either;
* it is read up to its limit and one byte more: a file that grows past the limit while it
  is read is refused like a larger one.

Anything else raises :class:`InputFileError`, whose message says what the path is ("a
FIFO (named pipe), not a regular file", "a character device (a link to /dev/zero), not a
regular file", "larger than 32 MB, the limit of a case file") without the path: the caller
locates it (a case file's error does not stop the other files; the configuration's or the
allow-list's is a usage error).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MB = 1 << 20
# The bundled case and gold files are 6 to 30 KB; the benchmarks write one case file of
# 100,000 cases (13 MB). A case, gold, adjudication or allow-list file larger than this is
# refused, unread.
CASE_FILE_MAX_BYTES = 32 * MB
# ragv2.yaml, or the pyproject.toml holding [tool.ragv2] (the bundled one is 3 KB)
CONFIG_FILE_MAX_BYTES = 4 * MB

_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once, and a read never waits
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_CHUNK = 1 << 20


class InputFileError(Exception):
    """An input that is not read: not found, not a regular file, too large, not UTF-8, or
    unreadable. ``line`` is the 1-based line of an encoding error (None otherwise);
    ``missing``: nothing is at the path."""

    def __init__(self, message: str, line: int | None = None, *, missing: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.missing = missing


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, as an error message names it."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


def _link_note(path: Path) -> str:
    if not path.is_symlink():
        return ""
    try:
        return f" (a link to {os.path.realpath(path)})"
    except (OSError, ValueError):
        return " (a symbolic link)"


def _refusal(path: Path, mode: int) -> InputFileError:
    return InputFileError(f"{kind_of(mode)}{_link_note(path)}, not a regular file")


def _megabytes(limit: int) -> str:
    return f"{limit / MB:g} MB"


def check_regular(path: Path) -> None:
    """Raise :class:`InputFileError` unless ``path`` is (a link to) a regular file."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if path.is_symlink():
            raise InputFileError(f"a symbolic link to nothing ({os.readlink(path)})") from None
        raise InputFileError("file not found", missing=True) from None
    except OSError as exc:
        raise InputFileError(str(exc.strerror or exc)) from None
    if not stat.S_ISREG(info.st_mode):
        raise _refusal(path, info.st_mode)


def read_input_bytes(path: Path, limit: int, what: str) -> bytes:
    """The content of the regular file ``path``, at most ``limit`` bytes (``what`` names
    the kind of file in the message of a larger one: "a case file")."""
    check_regular(path)
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        raise InputFileError("file not found", missing=True) from None
    except OSError as exc:
        raise InputFileError(str(exc.strerror or exc)) from None
    too_large = InputFileError(f"larger than {_megabytes(limit)}, the limit of {what}")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # swapped since the stat above
            raise _refusal(path, info.st_mode)
        if info.st_size > limit:
            raise too_large
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while it was read (or a file of /proc, sized 0)
                raise too_large
    except OSError as exc:
        raise InputFileError(str(exc.strerror or exc)) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def decode_utf8(data: bytes) -> str:
    """``data`` as UTF-8 text; :class:`InputFileError` naming the line of the first byte
    that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        byte = data[exc.start : exc.start + 1].hex()
        raise InputFileError(
            f"not UTF-8 text: byte 0x{byte} ({exc.reason}); save the file as UTF-8", line
        ) from None


def read_input_text(path: Path, limit: int, what: str) -> str:
    """:func:`read_input_bytes` decoded as UTF-8."""
    return decode_utf8(read_input_bytes(path, limit, what))


def is_regular_file(path: Path) -> bool:
    """Whether ``path`` is (a link to) a regular file; never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def present(path: Path) -> bool:
    """Whether anything is at ``path``: a file of any kind, a folder, or a symbolic link
    (even to nothing). An input that is present is read, or refused saying what it is;
    one that is absent is optional where the format says so."""
    return os.path.lexists(path)
