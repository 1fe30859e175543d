"""The characters that no file the session writes and no line it prints holds raw.

Text from a system (an answer, a file name, an error) or from a case file (a category, a
file's name) may carry control characters: an escape sequence rewrites a terminal (a
fake verdict line), a bidirectional override reorders what a line, a page or a JSON
viewer shows, and invisible characters (zero-width spaces and joiners, the word joiner,
the byte order mark, the tag characters that spell ASCII no one sees) hide text from the
reviewer reading a report, or make two names that look the same differ. They are
declared once here, and every output escapes them its own way:

* the terminal, Markdown and HTML show each as its escape, ``\\x1b`` or ``\\u202e``
  (:func:`printable`, :func:`html_escape`);
* JSON files hold each as a ``\\uXXXX`` escape (:func:`json_dumps`): still valid JSON
  that reads back as the same data.

Tab and line feed are not in the set: they are layout, and every output already treats
them as such (JSON escapes them in strings, Markdown and terminal lines flatten them).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

UNSAFE_CODE_POINTS: frozenset[int] = frozenset(
    [
        *range(0x00, 0x09),  # C0 controls but tab and line feed (ESC, BEL, CR, ...)
        *range(0x0B, 0x20),
        *range(0x7F, 0xA0),  # DEL and the C1 controls (CSI 0x9b)
        0x061C,  # Arabic letter mark
        *range(0x200B, 0x200E),  # zero-width space, non-joiner and joiner
        0x200E,  # left-to-right and right-to-left marks
        0x200F,
        *range(0x202A, 0x202F),  # bidirectional embeddings and overrides (U+202E)
        # the word joiner, the invisible operators, the bidirectional isolates (U+2066 to
        # U+2069) and the deprecated format controls: every one of U+2060 to U+206F
        *range(0x2060, 0x2070),
        0x2028,  # line and paragraph separators: line breaks to JavaScript and editors
        0x2029,
        0xFEFF,  # zero-width no-break space (the byte order mark)
        *range(0xE0000, 0xE0080),  # tag characters: an invisible copy of ASCII
    ]
)


def escaped(code_point: int) -> str:
    """A character as Python writes it in a string literal: ``\\x1b``, ``\\r``, ``\\u202e``."""
    return repr(chr(code_point))[1:-1]


_SHOWN = {code_point: escaped(code_point) for code_point in UNSAFE_CODE_POINTS}


def json_escape(code_point: int) -> str:
    """A character as a JSON string escape: ``\\u202e``; beyond the BMP (a tag character)
    its UTF-16 surrogate pair, ``\\udb40\\udc41``, as JSON writes one."""
    if code_point <= 0xFFFF:
        return f"\\u{code_point:04x}"
    offset = code_point - 0x10000
    return f"\\u{0xD800 + (offset >> 10):04x}\\u{0xDC00 + (offset & 0x3FF):04x}"


_JSON = {code_point: json_escape(code_point) for code_point in UNSAFE_CODE_POINTS}


def _character_class(code_points: set[int] | frozenset[int]) -> str:
    """A regular expression class of ``code_points``, written as ranges: a class listing
    the 128 tag characters one by one made every search 50 times slower."""
    ranges: list[list[int]] = []
    for code_point in sorted(code_points):
        if ranges and ranges[-1][1] == code_point - 1:
            ranges[-1][1] = code_point
        else:
            ranges.append([code_point, code_point])
    return (
        "["
        + "".join(
            re.escape(chr(first)) + ("-" + re.escape(chr(last)) if last > first else "")
            for first, last in ranges
        )
        + "]"
    )


_UNSAFE = re.compile(_character_class(UNSAFE_CODE_POINTS))
# what JSON text may hold raw: json.dumps escapes every C0 control in a string
_UNSAFE_BEYOND_ASCII = re.compile(
    _character_class({code_point for code_point in UNSAFE_CODE_POINTS if code_point >= 0x7F})
)


def has_unsafe(text: str) -> bool:
    """Whether ``text`` holds a character of the unsafe set."""
    return _UNSAFE.search(text) is not None


def printable(text: str) -> str:
    """Text from a system or a case file as it may reach a terminal, Markdown or a page:
    every unsafe character shown as its escape (``\\x1b``), never acted on."""
    # str.translate looks every character up (20x a regex scan): only when there is one
    return text.translate(_SHOWN) if _UNSAFE.search(text) else text


def html_escape(text: str, quote: bool = True) -> str:
    """:func:`html.escape` of :func:`printable` text: no live markup, no raw control."""
    return html.escape(printable(text), quote=quote)


def json_safe(dumped: str) -> str:
    """JSON text (made by :func:`json.dumps`) with every unsafe character that is left
    raw (``ensure_ascii=False`` escapes only C0 controls) written as ``\\uXXXX``. Such a
    character can only stand inside a string, where the escape means the same."""
    if dumped.isascii():  # known without a scan: of the set, JSON leaves only DEL raw
        return dumped.translate(_JSON) if "\x7f" in dumped else dumped
    if dumped.isprintable():  # every unsafe character is a control, format or separator
        return dumped
    return dumped.translate(_JSON) if _UNSAFE_BEYOND_ASCII.search(dumped) else dumped


def json_dumps(value: Any, **options: Any) -> str:
    """:func:`json.dumps` whose text holds no unsafe character raw."""
    return json_safe(json.dumps(value, **options))
