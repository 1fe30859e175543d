"""The raw run store: append-only lines, torn-line tolerance, the manifest's git commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_ragv2.run.rawruns import (
    RawRunWriter,
    build_manifest,
    git_commit,
    read_raw_runs,
    recorded_config,
)


def test_git_commit_read_from_the_repository_matches_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f").write_text("x")
    for args in (["add", "f"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m"]):
        subprocess.run(["git", *args], cwd=tmp_path, check=True)
    expected = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    (tmp_path / "sub").mkdir()
    assert git_commit(tmp_path / "sub") == expected
    subprocess.run(["git", "pack-refs", "--all"], cwd=tmp_path, check=True)
    assert git_commit(tmp_path) == expected  # from packed-refs


def test_no_repository_means_no_commit(tmp_path: Path) -> None:
    if any((parent / ".git").exists() for parent in (tmp_path, *tmp_path.parents)):
        pytest.skip("the temporary directory lies inside a git repository")
    assert git_commit(tmp_path) is None


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    writer = RawRunWriter(tmp_path, "main")
    writer.append({"n": 1})
    writer.append({"n": 2})
    writer.close()
    with (tmp_path / "runs-main.jsonl").open("a", encoding="utf-8") as stream:
        stream.write('{"n": 3, "tor')  # a process killed mid-write
    assert [run["n"] for run in read_raw_runs(tmp_path)] == [1, 2]


def test_a_resumption_replaces_earlier_lines_of_the_same_key(tmp_path: Path) -> None:
    first = RawRunWriter(tmp_path, "gw0")
    for case, error in (("C1", None), ("C2", "timeout"), ("C3", None)):
        first.append({"key": {"case": case}, "error": error})
    first.append({"key": {"case": "C2"}, "judge": {"grade": 1}})
    first.close()
    second = RawRunWriter(tmp_path, "main", generation=1)  # --ragv2-retry-errors: C2 again
    second.append({"key": {"case": "C2"}, "error": None})
    second.append({"key": {"case": "C4"}, "error": None})
    second.close()
    third = RawRunWriter(tmp_path, "gw1", generation=10)
    third.append({"key": {"case": "C4"}, "error": "transport"})
    third.close()
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "runs-gw0.jsonl",
        "runs-gw1.r10.jsonl",
        "runs-main.r1.jsonl",
    ]
    assert [
        (run["key"]["case"], run.get("error"), "judge" in run) for run in read_raw_runs(tmp_path)
    ] == [
        ("C1", None, False),
        ("C3", None, False),
        ("C2", None, True),  # the judge's line has its own identity: kept
        ("C2", None, False),
        ("C4", "transport", False),  # generation 10 after 1, not before (numeric order)
    ]


def test_compressed_raw_runs_read_as_plain_ones_and_a_torn_member_is_skipped(
    tmp_path: Path,
) -> None:
    import gzip

    writer = RawRunWriter(tmp_path, "gw0", compress=True)
    for n in range(3):
        writer.append({"key": {"case": f"C{n}"}, "answer": "Überdruck " * 200 + "\u202e"})
    writer.close()
    path = tmp_path / "runs-gw0.jsonl.gz"
    whole = path.read_bytes()
    assert len(whole) < 3 * len("Überdruck " * 200) / 5  # compressed
    # any gzip reader reads it: one member per line
    assert gzip.decompress(whole).decode("utf-8").count("\n") == 3
    resumed = RawRunWriter(tmp_path, "main", generation=1, compress=True)
    resumed.append({"key": {"case": "C3"}, "answer": "x"})
    resumed.close()
    cases = [run["key"]["case"] for run in read_raw_runs(tmp_path)]
    assert cases == ["C0", "C1", "C2", "C3"]
    assert {run["answer"] for run in read_raw_runs(tmp_path)} >= {"Überdruck " * 200 + "\u202e"}
    member = len(gzip.compress(b"x"))  # a killed process: the last member cut short
    path.write_bytes(whole[: len(whole) - member // 2])
    assert [run["key"]["case"] for run in read_raw_runs(tmp_path)] == ["C0", "C1", "C3"]
    path.write_bytes(whole + b"\x1f\x8b\x08")  # a member that barely began
    assert [run["key"]["case"] for run in read_raw_runs(tmp_path)] == ["C0", "C1", "C2", "C3"]


def _manifest(rootdir: Path, config: Path | None) -> dict[str, object]:
    return build_manifest(
        run_id="r1",
        seed=1,
        rootdir=rootdir,
        config_path=config,
        case_files=[],
        gold_files=[],
        allowlist=None,
        systems={},
        options={},
    )


def test_the_manifest_records_the_configuration_file_and_rootdir(tmp_path: Path) -> None:
    config = tmp_path / "ragv2.yaml"
    config.write_text("cases: c\n", encoding="utf-8")
    manifest = _manifest(tmp_path, config)
    assert manifest["config_path"] == str(config.resolve())
    assert manifest["rootdir"] == str(tmp_path.resolve())
    found = recorded_config(manifest, tmp_path / "raw-runs" / "r1")
    assert (found.rootdir, found.path) == (tmp_path.resolve(), config.resolve())
    assert found.how == "recorded in the run's manifest"

    config.write_text("cases: d\n", encoding="utf-8")
    assert recorded_config(manifest, tmp_path / "raw-runs" / "r1").how == (
        "recorded in the run's manifest, changed since the run"
    )


def test_a_run_without_a_configuration_file(tmp_path: Path) -> None:
    found = recorded_config(_manifest(tmp_path, None), tmp_path / "elsewhere" / "r1")
    assert (found.rootdir, found.path) == (tmp_path.resolve(), None)
    assert found.how == "the run had no configuration file"


def test_an_older_manifest_without_configuration_lies_in_raw_runs(tmp_path: Path) -> None:
    old = {"config": {}}  # written before config_path and rootdir were recorded
    found = recorded_config(old, tmp_path / "raw-runs" / "r1")
    assert (found.rootdir, found.path) == (tmp_path.resolve(), None)
    elsewhere = recorded_config(old, tmp_path / "runs" / "r1")
    assert elsewhere.rootdir is None
    assert elsewhere.how.startswith("the run's manifest does not record")


def test_two_sessions_with_the_same_seed_in_the_same_second_get_their_own_folder(
    tmp_path: Path,
) -> None:
    from concurrent.futures import ThreadPoolExecutor
    from datetime import UTC, datetime

    from pytest_ragv2.run.rawruns import claim_run_dir

    now = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(lambda _: claim_run_dir(tmp_path, None, 7, now=now), range(16)))
    assert len(set(ids)) == 16
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(ids)
    assert "20261201T120000Z-s7" in ids
    assert "20261201T120000Z-s7-16" in ids


@pytest.mark.parametrize(
    "run_id", ["../x", "/abs", "a/b", "..", ".hidden", "x\x1b[2J", "a" * 129, "a..b", "é", " x"]
)
def test_an_unsafe_run_id_is_refused_before_anything_is_written(
    tmp_path: Path, run_id: str
) -> None:
    from pytest_ragv2.run.rawruns import RunIdError, claim_run_dir

    with pytest.raises(RunIdError, match="a run id is 1 to 128 letters"):
        claim_run_dir(tmp_path / "raw-runs", run_id, 1)
    assert list(tmp_path.iterdir()) == []


def test_a_given_run_id_is_claimed_once(tmp_path: Path) -> None:
    from pytest_ragv2.run.rawruns import RunIdError, claim_run_dir

    assert claim_run_dir(tmp_path, "nightly-2026.12.01_a", 1) == "nightly-2026.12.01_a"
    with pytest.raises(RunIdError, match="already exists"):
        claim_run_dir(tmp_path, "nightly-2026.12.01_a", 2)
    # a plan writes nothing: it only picks the id
    assert claim_run_dir(tmp_path, "planned", 1, claim=False) == "planned"
    assert not (tmp_path / "planned").exists()


@pytest.mark.parametrize("compress", [False, True])
def test_runs_of_cases_not_asked_for_are_skipped_and_every_asked_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compress: bool
) -> None:
    import json

    import pytest_ragv2.run.rawruns as rawruns

    writer = RawRunWriter(tmp_path, "main", compress=compress)
    for case in ("C0", "C1", 'Q"7', "C2"):  # an id JSON escapes is read by parsing
        writer.append({"key": {"case": case, "system": "v2"}, "answer": "a"})
    writer.append({"answer": "b", "key": {"case": "C3"}})  # key not first: parsed
    writer.close()
    parsed: list[str] = []
    loads = json.loads

    def counting(text: str) -> object:
        parsed.append(text)
        return loads(text)

    monkeypatch.setattr(rawruns.json, "loads", counting)
    read = [run["key"]["case"] for run in read_raw_runs(tmp_path, {"C1", 'Q"7'})]
    assert read == ["C1", 'Q"7', "C3"]  # the callers still check the key they were given
    assert len(parsed) == 3  # C0 and C2 skipped unparsed
    assert [run["key"]["case"] for run in read_raw_runs(tmp_path)] == [
        "C0",
        "C1",
        'Q"7',
        "C2",
        "C3",
    ]
