"""``ragv2 export trec``: the exported files give trec_eval (pytrec_eval here) the report's
recall@k and MRR, on real layer-A sessions; and the command's errors say what is wrong."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.tools.cli import main
from pytest_ragv2.tools.export_trec import plugin_means
from tests.conftest import pyproject
from tests.layers.test_layer_b import CHAT_CASES, CHATBOT, chat_pyproject

pytrec_eval = pytest.importorskip("pytrec_eval")

KS = (1, 3, 5, 10)
RECALL = {"recall.1,3,5,10"}
PerQuery = dict[str, dict[str, float]]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, zero, docno, rel = line.split()
        assert zero == "0"
        assert docno not in qrels[qid], f"{path.name}: {qid} judges {docno} twice"
        qrels[qid][docno] = int(rel)
    return dict(qrels)


def read_run(path: Path, tag: str) -> dict[str, dict[str, float]]:
    """A run file as trec_eval reads it, checking what trec_eval relies on: six columns, one
    tag, no docno twice in a query, and scores that fall as the rank rises."""
    run: dict[str, dict[str, float]] = defaultdict(dict)
    last: dict[str, tuple[int, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, q0, docno, rank, score, found_tag = line.split()
        assert (q0, found_tag) == ("Q0", tag), line
        assert docno not in run[qid], f"{path.name}: {qid} retrieves {docno} twice"
        if qid in last:
            assert int(rank) == last[qid][0] + 1, line
            assert float(score) < last[qid][1], line
        last[qid] = (int(rank), float(score))
        run[qid][docno] = float(score)
    return dict(run)


def evaluate(folder: Path, view: str, system: str, measures: set[str]) -> PerQuery:
    suffix = ".entries" if view == "entries" else ""
    qrels = read_qrels(folder / f"qrels{suffix}.txt")
    run = read_run(folder / f"{system}{suffix}.run", system)
    results: PerQuery = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    return results


def case_means(per_query: Mapping[str, Mapping[str, float]], measure: str) -> float:
    """The plugin's aggregation, written out here independently of the export module: entry
    queries (``case/lang/rep/gJ``) averaged per run, runs per case, then the cases."""
    runs: dict[str, list[float]] = defaultdict(list)
    for qid, values in per_query.items():
        runs["/".join(qid.split("/")[:3])].append(values[measure])
    cases: dict[str, list[float]] = defaultdict(list)
    for run, values in runs.items():
        cases[run.split("/")[0]].append(sum(values) / len(values))
    means = [sum(values) / len(values) for values in cases.values()]
    return sum(means) / len(means)


def export(run_dir: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    status = main(["export", "trec", str(run_dir), "--out", str(out)])
    text = capsys.readouterr().out
    assert status == 0, text
    return text


def summary_of(pytester: pytest.Pytester, run_id: str) -> dict[str, Any]:
    path = pytester.path / "reports" / run_id / "summary.json"
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_bundled_benchmark_export_gives_trec_eval_the_reports_figures(
    bundled: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    bundled.runpytest("--ragv2-layer=A", "--ragv2-run-id=trec", "--ragv2-reps=2", "-q")
    summary = summary_of(bundled, "trec")
    out = bundled.path / "exported"
    printed = export(bundled.path / "raw-runs" / "trec", out, capsys)
    assert "left out" in printed  # the safe-no-answer cases: no evidence, no recall

    assert set(summary["systems"]) == {"demo-v1", "demo-v2"}
    for system, row in summary["systems"].items():
        queries = evaluate(out, "queries", system, {"recip_rank", *RECALL})
        entries = evaluate(out, "entries", system, RECALL)
        # every run with required evidence is a query: 2 repetitions of each case-language
        assert {qid.split("/")[2] for qid in queries} == {"r1", "r2"}
        assert {qid.rsplit("/", 1)[0] for qid in entries} == set(queries)

        assert case_means(queries, "recip_rank") == pytest.approx(row["mrr"], abs=1e-9)
        for k in KS:
            value = case_means(entries, f"recall_{k}")
            assert value == pytest.approx(row[f"recall@{k}"], abs=1e-9), (system, k)
        # the export's own helper aggregates the same way
        assert plugin_means(entries)["recall_5"] == pytest.approx(row["recall@5"], abs=1e-9)
        assert plugin_means(queries)["recip_rank"] == pytest.approx(row["mrr"], abs=1e-9)
        # every case here runs in the same number of languages and repetitions, so
        # trec_eval's "all" line (the mean over queries) is already the report's MRR
        mean = sum(values["recip_rank"] for values in queries.values()) / len(queries)
        assert mean == pytest.approx(row["mrr"], abs=1e-9)

    # demo V1's whole-section chunks are often the first match of several gold entries: the
    # query view cannot count one line twice, which is why recall has its entry view
    v1 = evaluate(out, "queries", "demo-v1", RECALL)
    assert case_means(v1, "recall_5") < summary["systems"]["demo-v1"]["recall@5"]
    assert "demo-v1: " in printed
    assert "use the entry view for recall" in printed
    # where no item is the first match of two entries, the query view gives recall too
    v2 = evaluate(out, "queries", "demo-v2", RECALL)
    assert case_means(v2, "recall_5") == pytest.approx(
        summary["systems"]["demo-v2"]["recall@5"], abs=1e-9
    )


def test_a_run_of_layers_a_and_b_exports_its_layer_a_runs(
    bundled: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    bundled.runpytest(
        "--ragv2-layer=A,B", "--ragv2-reps=1", "--ragv2-run-id=ab", "-k", "B06 or K01", "-q"
    )
    path = bundled.path / "reports" / "ab" / "A" / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    out = bundled.path / "exported"
    export(bundled.path / "raw-runs" / "ab", out, capsys)
    for system, row in summary["systems"].items():
        queries = evaluate(out, "queries", system, {"recip_rank"})
        assert {qid.split("/")[0] for qid in queries} == {"B06", "K01"}
        assert case_means(queries, "recip_rank") == pytest.approx(row["mrr"], abs=1e-9)
        entries = evaluate(out, "entries", system, RECALL)
        assert case_means(entries, "recall_5") == pytest.approx(row["recall@5"], abs=1e-9)
    assert {path.name for path in out.glob("*.run")} == {
        f"{system}{view}.run" for system in summary["systems"] for view in ("", ".entries")
    }


def test_failed_runs_are_empty_rankings_trec_eval_sees(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.path / "pyproject.toml").write_text(pyproject(baseline="broken"))
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=err", "-q")
    summary = summary_of(project, "err")
    assert summary["systems"]["v1"]["errors"] == summary["systems"]["v1"]["runs"] > 0
    out = project.path / "reports" / "err" / "trec"
    project.chdir()
    capsys.readouterr()
    assert main(["export", "trec", "raw-runs/err"]) == 0  # default: <reports>/<run-id>/trec
    printed = capsys.readouterr().out
    assert "v1: recall@1 0.0000" in printed
    assert "failed or empty ranking" in printed

    broken = (out / "v1.run").read_text(encoding="utf-8").splitlines()
    # C01 and C02 in en and de; C03 requires no evidence and is left out
    assert broken == [f"{qid} Q0 none 1 0 v1" for qid in ("C01/de/r1", "C01/en/r1")] + [
        f"{qid} Q0 none 1 0 v1" for qid in ("C02/de/r1", "C02/en/r1")
    ]
    queries = evaluate(out, "queries", "v1", {"recip_rank", *RECALL})
    assert set(queries) == {"C01/de/r1", "C01/en/r1", "C02/de/r1", "C02/en/r1"}
    assert all(value == 0.0 for values in queries.values() for value in values.values())
    good = evaluate(out, "queries", "v2", {"recip_rank"})
    assert case_means(good, "recip_rank") == pytest.approx(summary["systems"]["v2"]["mrr"])
    assert summary["systems"]["v1"]["recall@5"] == 0.0
    assert (out / "qrels.txt").read_text(encoding="utf-8").splitlines() == [
        "C01/de/r1 0 g1 1",
        "C01/en/r1 0 g1 1",
        "C02/de/r1 0 g1 1",
        "C02/en/r1 0 g1 1",
    ]
    assert "C01\ten\tg1\tdatasheet.pdf p.2" in (out / "gold.tsv").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "raw-runs/nope: no such folder (expected raw-runs/<run-id>)"),
        ("no-manifest", "raw-runs/nope: not a raw-runs/<run-id> folder (no manifest.json)"),
        ("layer-b", "raw-runs/nope: a layer B run; a TREC export needs the retrieval runs of"),
        ("layers-b-c", "raw-runs/nope: a layer B,C run; a TREC export needs the retrieval"),
        ("no-runs", "raw-runs/nope: no layer-A raw runs to export"),
    ],
)
def test_export_errors_name_the_folder_and_the_problem(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str], setup: str, message: str
) -> None:
    run_dir = project.path / "raw-runs" / "nope"
    if setup != "missing":
        run_dir.mkdir(parents=True)
    if setup in ("layer-b", "layers-b-c", "no-runs"):
        layer = {"layer-b": "B", "layers-b-c": "B,C"}.get(setup, "A")
        manifest = {"run_id": "nope", "seed": 1, "options": {"layer": layer}}
        (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    project.chdir()
    capsys.readouterr()
    assert main(["export", "trec", "raw-runs/nope"]) == 2
    assert capsys.readouterr().out.startswith(message)
    assert not (project.path / "reports").exists()


def test_a_real_layer_b_run_is_refused_with_the_layer_it_is(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.path / "chatbot.py").write_text(CHATBOT)
    (project.path / "cases" / "development.yaml").write_text(CHAT_CASES)
    (project.path / "pyproject.toml").write_text(chat_pyproject())
    project.runpytest("--ragv2-layer=B", "--ragv2-run-id=chat", "-q")
    run_dir = project.path / "raw-runs" / "chat"
    assert (run_dir / "manifest.json").is_file()
    capsys.readouterr()
    assert main(["export", "trec", str(run_dir)]) == 2
    assert capsys.readouterr().out == (
        f"{run_dir}: a layer B run; a TREC export needs the retrieval runs of layer A"
        " (pytest --ragv2-layer=A)\n"
    )


def test_a_run_whose_cases_are_gone_is_refused(
    project: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    project.runpytest("--ragv2-layer=A", "--ragv2-run-id=gone", "-q")
    (project.path / "cases" / "development.yaml").write_text(
        "- id: Z01\n  category: other\n  prompt_en: q\n  required_evidence: []\n"
    )
    capsys.readouterr()
    assert main(["export", "trec", str(project.path / "raw-runs" / "gone")]) == 2
    out = capsys.readouterr().out
    assert "none of the run's cases is in" in out
    assert "C01, C02, C03" in out


def test_export_needs_a_run_folder_argument(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["export", "trec"])
    assert exited.value.code == 2
    assert "run_dir" in capsys.readouterr().err
