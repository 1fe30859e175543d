"""The kinds of value a typed claim may declare (docs/case-format.md: typed claims): the case
schema validates them and the value reader reads answers into them (a leaf).
"""

from __future__ import annotations

from typing import Literal

ClaimKind = Literal[
    "quantity", "money", "percent", "date", "time", "phone", "email", "url", "identifier", "count"
]
CLAIM_KINDS: tuple[ClaimKind, ...] = (
    "quantity",
    "money",
    "percent",
    "date",
    "time",
    "phone",
    "email",
    "url",
    "identifier",
    "count",
)
