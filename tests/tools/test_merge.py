"""--ragv2-shard=I/N and ``ragv2 merge``: shards of a CI matrix merged into one decision
equal to an unsharded run of the same seed; shards that do not make one run are refused."""

from __future__ import annotations

import io
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_ragv2.run.shards import Shard, ShardError, ShardPlan, deal
from pytest_ragv2.tools.cli import main
from pytest_ragv2.tools.merge import merge_command
from tests.run.test_resume import _comparable, _differences

SEED = "--ragv2-seed=11"


def _summary(project: pytest.Pytester, run_id: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (project.path / "reports" / run_id / "summary.json").read_text(encoding="utf-8")
    )
    return data


def _raw_keys(run_dir: Path) -> list[tuple[str, str, int, str]]:
    keys = []
    for path in sorted(run_dir.glob("runs-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            key = json.loads(line)["key"]
            keys.append((key["case"], key["system"], key["rep"], key["lang"]))
    return keys


def _shards(project: pytest.Pytester, count: int, *args: str) -> list[Path]:
    for index in range(1, count + 1):
        result = project.runpytest(
            "--ragv2-layer=A", SEED, f"--ragv2-shard={index}/{count}",
            f"--ragv2-run-id=s{index}", *args,
        )  # fmt: skip
        assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return [project.path / "raw-runs" / f"s{index}" for index in range(1, count + 1)]


def _merge(*run_dirs: Path, run_id: str = "merged", config: str | None = None) -> tuple[int, str]:
    out = io.StringIO()
    status = merge_command(list(run_dirs), config, run_id, out)
    return status, out.getvalue()


# -- the deal ---------------------------------------------------------------------------


def test_a_shard_value_is_i_of_n() -> None:
    assert Shard.parse("2/3") == Shard(2, 3)
    assert Shard.parse(" 1 / 1 ").label == "1/1"
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2"):
        with pytest.raises(ShardError):
            Shard.parse(bad)


@given(
    st.dictionaries(
        st.text("abcdef0123456789", min_size=1, max_size=6),
        st.sampled_from(["exact_lookup", "table", "refusal", "multi_turn"]),
        max_size=60,
    ),
    st.integers(1, 7),
)
def test_every_case_is_in_one_shard_each_category_spread_and_shares_within_one(
    categories: dict[str, str], count: int
) -> None:
    shard_of = deal(categories.items(), count)
    assert set(shard_of) == set(categories)
    sizes = Counter(shard_of.values())
    assert max(sizes.values(), default=0) - min(sizes.get(i, 0) for i in range(1, count + 1)) <= 1
    for category in set(categories.values()):
        spread = Counter(shard_of[case] for case, cat in categories.items() if cat == category)
        in_category = sum(spread.values())
        # a category of n cases reaches min(n, count) shards, none holding more than its turn
        assert len(spread) == min(in_category, count)
        assert max(spread.values()) <= -(-in_category // count) + 1
    plans = [ShardPlan.of(Shard(i, count), categories.items()) for i in range(1, count + 1)]
    assert len({plan.digest for plan in plans}) <= 1
    assert sum(len(plan.cases) for plan in plans) == len(categories)


def test_the_deal_does_not_depend_on_the_order_cases_are_listed_in() -> None:
    cases = [(f"C{n:02}", "table" if n % 3 else "refusal") for n in range(20)]
    assert deal(cases, 3) == deal(list(reversed(cases)), 3)


# -- a shard's session ------------------------------------------------------------------


def test_a_shard_runs_every_run_of_its_cases_and_its_verdict_is_partial(
    bundled: pytest.Pytester,
) -> None:
    result = bundled.runpytest("--ragv2-layer=A", SEED, "--ragv2-shard=2/3", "--ragv2-run-id=s2")
    assert result.ret == pytest.ExitCode.OK  # the shard ran: its gates decide nothing
    assert "verdict: PARTIAL" in result.stdout.str()
    assert "shard 2/3" in result.stdout.str()
    summary = _summary(bundled, "s2")
    assert summary["verdict"] == "partial"
    manifest = json.loads((bundled.path / "raw-runs" / "s2" / "manifest.json").read_text())
    share = manifest["shard"]
    assert (share["index"], share["count"]) == (2, 3)
    assert summary["shard"] == {
        "index": 2,
        "count": 3,
        "cases": len(share["cases"]),
        "plan_cases": share["plan_cases"],
    }
    runs = _raw_keys(bundled.path / "raw-runs" / "s2")
    assert {case for case, *_ in runs} == set(share["cases"])
    # every run of a case is in its shard: both systems, every language
    per_case = Counter(case for case, *_ in runs)
    systems = {(case, system) for case, system, *_ in runs}
    assert all((case, name) in systems for case in per_case for name in ("demo-v1", "demo-v2"))
    html = (bundled.path / "reports" / "s2" / "report.html").read_text(encoding="utf-8")
    assert "Verdict: PARTIAL" in html
    assert "not a decision" in html


def test_a_shard_value_that_is_not_i_of_n_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-shard=4/3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--ragv2-shard=4/3" in result.stderr.str()
    assert not (project.path / "raw-runs").exists()


# -- the merge ----------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_three_shards_merged_equal_the_unsharded_run(
    bundled: pytest.Pytester, workers: list[str]
) -> None:
    whole = bundled.runpytest("--ragv2-layer=A", SEED, "--ragv2-run-id=whole")
    assert whole.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    shards = _shards(bundled, 3, *workers)
    status, said = _merge(*shards)
    assert status == whole.ret, said
    merged, unsharded = _summary(bundled, "merged"), _summary(bundled, "whole")
    assert merged["runs"] == unsharded["runs"]
    assert not _differences(_comparable(unsharded), _comparable(merged))
    assert merged["verdict"] == unsharded["verdict"]
    assert "shard" not in merged
    assert sorted(_raw_keys(bundled.path / "raw-runs" / "merged")) == sorted(
        _raw_keys(bundled.path / "raw-runs" / "whole")
    )
    manifest = json.loads((bundled.path / "raw-runs" / "merged" / "manifest.json").read_text())
    assert [entry["shard"] for entry in manifest["merged_from"]] == ["1/3", "2/3", "3/3"]
    assert (bundled.path / "reports" / "merged" / "report.html").is_file()
    # the merged run is a run like any other: its rescore decides the same
    assert main(["rescore", str(bundled.path / "raw-runs" / "merged")]) == whole.ret


def test_shards_that_overlap_or_miss_one_are_refused(project: pytest.Pytester) -> None:
    one, two, three = _shards(project, 3)
    shutil.copytree(two, project.path / "raw-runs" / "two-again")
    status, said = _merge(one, two, project.path / "raw-runs" / "two-again", three)
    assert status == 2
    assert "overlapping shards" in said
    assert "shard 2/3" in said
    status, said = _merge(one, three)
    assert status == 2
    assert "missing shard(s) 2/3" in said
    assert not (project.path / "raw-runs" / "merged").exists()  # nothing written


def test_shards_of_another_split_or_of_a_whole_run_are_refused(project: pytest.Pytester) -> None:
    one, two = _shards(project, 2)
    project.runpytest("--ragv2-layer=A", SEED, "--ragv2-shard=3/3", "--ragv2-run-id=t3")
    status, said = _merge(one, two, project.path / "raw-runs" / "t3")
    assert status == 2
    assert "split their runs differently" in said
    project.runpytest("--ragv2-layer=A", SEED, "--ragv2-run-id=whole")
    status, said = _merge(one, project.path / "raw-runs" / "whole")
    assert status == 2
    assert "not a shard of a run" in said


def test_shards_of_another_seed_gold_or_system_are_refused_each_named(
    project: pytest.Pytester,
) -> None:
    (one,) = _shards(project, 2)[:1]
    gold = project.path / "gold" / "allowlist.yaml"
    gold.write_text(gold.read_text() + "  - {file_id: extra, filename: extra.md}\n")
    (project.path / "pyproject.toml").write_text(
        (project.path / "pyproject.toml")
        .read_text()
        .replace('index_version = "v1-2026-11"', 'index_version = "v1-2026-12"')
    )
    project.runpytest(
        "--ragv2-layer=A", "--ragv2-seed=12", "--ragv2-shard=2/2", "--ragv2-run-id=other"
    )
    status, said = _merge(one, project.path / "raw-runs" / "other")
    assert status == 2, said
    assert "seed 12" in said
    assert "allowlist.yaml differs" in said
    assert "system v1 is configured otherwise" in said


def test_a_replica_of_its_own_per_shard_is_not_a_difference(project: pytest.Pytester) -> None:
    """Each job may have its own deployment replica: the URLs and slots may differ."""
    from pytest_ragv2.tools.merge import system_identity

    here = {"v2": {"role": "candidate", "slot": "a", "retrieval": {"url": "http://a:1/q"}}}
    there = {"v2": {"role": "candidate", "slot": "b", "retrieval": {"url": "http://b:2/q"}}}
    assert system_identity(here) == system_identity(there)
    other = {"v2": {"role": "candidate", "retrieval": {"url": "http://b:2/q", "k": 9}}}
    assert system_identity(here) != system_identity(other)


def test_runs_outside_a_shards_share_are_refused(project: pytest.Pytester) -> None:
    one, two = _shards(project, 2)
    stray = next(iter(sorted(two.glob("runs-*.jsonl"))))
    (one / "runs-extra.jsonl").write_bytes(stray.read_bytes())
    status, said = _merge(one, two)
    assert status == 2
    assert "outside its share" in said


def test_more_shards_than_cases_is_a_usage_error(project: pytest.Pytester) -> None:
    result = project.runpytest("--ragv2-layer=A", "--ragv2-shard=40/40")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "this shard's share is empty" in result.stderr.str()
    assert not (project.path / "raw-runs").exists()
