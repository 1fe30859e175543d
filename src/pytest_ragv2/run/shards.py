"""``--ragv2-shard=I/N``: a deterministic share of the cases, for one job of a CI matrix.

A case belongs to exactly one shard, with every run of it (every system, repetition and
language), so a shard's slot schedule and its alternation of the systems hold within it.
The shares are stratified by category: the cases of each category, in the order of their
ids, are dealt to the shards in turn, the deal going on from one category to the next, so
every category is spread over the shards and no two shards differ by more than one case.
What the plan holds is decided on the catalog (the cases of the selected splits at the
session's layers), never on what ``-k`` or ``-m`` left: every shard job computes the same
deal. ``ragv2 merge`` (:mod:`pytest_ragv2.tools.merge`) makes one decision of all shards.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_ragv2.gold.cases import Catalog

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardError(ValueError):
    """A ``--ragv2-shard`` value that is not I/N with 1 <= I <= N."""


@dataclass(frozen=True, slots=True)
class Shard:
    index: int  # 1-based, as CI matrices count
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        found = _SHARD.match(text)
        if found is None:
            raise ShardError(f"--ragv2-shard={text}: expected I/N, such as 2/3")
        index, count = int(found.group(1)), int(found.group(2))
        if not 1 <= index <= count:
            raise ShardError(f"--ragv2-shard={text}: I must be between 1 and N ({count})")
        return cls(index, count)

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def deal(cases: Iterable[tuple[str, str]], count: int) -> dict[str, int]:
    """Each case id's shard (1-based) among ``count``: ``cases`` are (case id, category)."""
    by_category: dict[str, set[str]] = {}
    for case_id, category in cases:
        by_category.setdefault(category, set()).add(case_id)
    shard_of: dict[str, int] = {}
    turn = 0
    for category in sorted(by_category):
        for case_id in sorted(by_category[category]):
            shard_of.setdefault(case_id, turn % count + 1)
            turn += 1
    return shard_of


def plan_digest(case_ids: Iterable[str]) -> str:
    """One hash of the plan's case ids: shards of the same plan agree on it."""
    text = "\n".join(sorted(set(case_ids)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ShardPlan:
    """One shard's share of the plan, as the run's manifest records it."""

    shard: Shard
    cases: frozenset[str]  # this shard's case ids
    plan_cases: int  # the cases of the whole plan
    digest: str  # :func:`plan_digest` of the whole plan's case ids

    @classmethod
    def of(cls, shard: Shard, cases: Iterable[tuple[str, str]]) -> ShardPlan:
        listed = list(cases)
        shard_of = deal(listed, shard.count)
        mine = frozenset(case for case, index in shard_of.items() if index == shard.index)
        return cls(shard, mine, len(shard_of), plan_digest(shard_of))

    @classmethod
    def of_catalog(
        cls, shard: Shard, catalog: Catalog, splits: Collection[str], layers: Collection[str]
    ) -> ShardPlan:
        """The share of the plan every shard job deals alike: the cases of the selected
        splits at the session's layers."""
        wanted = set(layers)
        planned = [
            (loaded.case_id, loaded.case.category)
            for loaded in catalog.cases(splits)
            if wanted & set(loaded.case.layers)
        ]
        return cls.of(shard, planned)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.shard.index,
            "count": self.shard.count,
            "cases": sorted(self.cases),
            "plan_cases": self.plan_cases,
            "plan_digest": self.digest,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ShardPlan:
        return cls(
            Shard(int(data["index"]), int(data["count"])),
            frozenset(str(case) for case in data["cases"]),
            int(data["plan_cases"]),
            str(data["plan_digest"]),
        )
