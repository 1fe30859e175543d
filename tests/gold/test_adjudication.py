"""Human adjudication: gold/adjudications.yaml validated with located errors, applied by one
pure function, honoured alike by a live session and ``ragv2 rescore``, shown in every report."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.deciding.adjudicate import apply
from pytest_ragv2.deciding.records import ChatRecord, RetrievalRecord, RunRecord
from pytest_ragv2.gold.adjudication import Adjudications, load_adjudications
from pytest_ragv2.gold.cases import load_catalog
from pytest_ragv2.report.adjudication import adjudication_lines, adjudication_markdown
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.scoring.veto_record import Veto
from tests.plugin.test_plugin import RUN_ID, gate, summary_of

CASES = """\
- id: C01
  category: technical_table
  prompt_en: "What is the maximum pressure?"
  prompt_de: "Wie hoch ist der maximale Druck?"
  required_evidence:
    - file_id: datasheet
      page: 2
- id: C02
  category: exact_lookup
  prompt_en: "Which part is the seal kit?"
  layers: [A]
  required_evidence:
    - file_id: parts
      row: NX-450B
"""


def _catalog(tmp_path: Path, adjudications: str) -> tuple[Path, Any]:
    (tmp_path / "cases").mkdir()
    (tmp_path / "gold").mkdir()
    (tmp_path / "cases" / "development.yaml").write_text(CASES)
    path = tmp_path / "gold" / "adjudications.yaml"
    path.write_text(textwrap.dedent(adjudications))
    return path, load_catalog(tmp_path / "cases", tmp_path / "gold")


# --------------------------------------------------------------------------- loading


def test_a_valid_file_loads_every_scope_and_kind(tmp_path: Path) -> None:
    path, catalog = _catalog(
        tmp_path,
        """\
        - reviewer: A. Reviewer
          date: 2026-11-30
          case: C01
          system: v2
          lang: de
          rep: 1
          met: true
          note: the answer names the right page; the scorer missed the umlaut
        - reviewer: B. Reviewer
          date: 2026-11-29
          case: C02
          system: v1
          layer: A
          override: {recall@5: 0.5, exact_metadata: false}
          note: row key NX-450B and NX450B are the same part
        - reviewer: A. Reviewer
          date: 2026-11-30
          case: C02
          disputed: true
          note: two engineers disagree on the row
        """,
    )
    assert catalog.errors == []
    assert path in catalog.gold_files
    adjudications = catalog.adjudications
    assert [a.entry.scope for a in adjudications.entries] == [
        "v2-de-r1",
        "all runs of v1 (layer A)",
        "all runs",
    ]
    assert [a.location.line for a in adjudications.entries] == [1, 9, 16]
    assert adjudications.entries[2].entry.kind == "disputed gold"


@pytest.mark.parametrize(
    ("entry", "line", "field", "message"),
    [
        ("case: C09\n  met: true\n  note: n", 3, "case", "unknown case: no case file defines"),
        ("case: C01\n  system: v2\n  lang: fr\n  rep: 1\n  met: true\n  note: n", 5, "lang", "fr"),
        ("case: C02\n  layer: B\n  met: true\n  note: n", 4, "layer", "does not run at layer B"),
        ("case: C01\n  met: true", 1, "note", "Field required"),
        ("case: C01\n  met: true\n  note: '  '", 5, "note", "must not be blank"),
        ("case: C01\n  met: true\n  date: 2026-02-30\n  note: n", 5, None, "invalid value"),
        ("case: C01\n  met: true\n  note: n\n  datum: x", 6, "datum", "unknown field"),
        ("case: C01\n  note: n", 1, None, "give met: true|false, override"),
        ("case: C01\n  system: v2\n  rep: 1\n  met: true\n  note: n", 1, None, "system, lang"),
        (
            "case: C01\n  override: {recall@7: 1}\n  note: n",
            4,
            "override.recall@7",
            "unknown dimension",
        ),
        (
            "case: C01\n  override: {rubric.accuracy: GOOD}\n  note: n",
            4,
            "override.rubric.accuracy",
            "a grade",
        ),
        (
            "case: C01\n  override: {recall@5: 5}\n  note: n",
            4,
            "override.recall@5",
            "a share, from 0 to 1",
        ),
        ("case: C01\n  override: {veto.fabricated_identifier: true}\n  note: n", 4, None, "only"),
        ("case: C01\n  disputed: true\n  system: v2\n  note: n", 1, None, "case-wide"),
    ],
)
def test_an_invalid_entry_is_a_located_error_and_is_not_applied(
    tmp_path: Path, entry: str, line: int, field: str | None, message: str
) -> None:
    text = "- reviewer: R\n  date: 2026-11-30\n  " + entry + "\n"
    if "date: 2026-02-30" in entry:
        text = text.replace("  date: 2026-11-30\n", "  role: x\n")
    path, catalog = _catalog(tmp_path, text)
    errors = [e for e in catalog.errors if e.path == path]
    assert errors, "expected an error"
    found = errors[0]
    assert message in found.message
    assert found.line == line
    if field is not None:
        assert found.field == field
    assert catalog.adjudications.entries == ()


def test_errors_name_file_and_line_duplicates_and_unknown_systems(tmp_path: Path) -> None:
    path, catalog = _catalog(
        tmp_path,
        """\
        - reviewer: R
          date: 2026-11-30
          case: C01
          met: true
          note: first
        - reviewer: R
          date: 2026-11-30
          case: C01
          met: false
          note: the same ruling again
        - reviewer: R
          date: 2099-01-01
          case: C01
          system: v3
          met: true
          note: from the future
        """,
    )
    shown = [str(error) for error in catalog.errors]
    assert any(
        s.startswith(f"{path}:6: case C01: duplicate adjudication: the entry at line 1")
        for s in shown
    )
    assert any(f"{path}:12: case C01: date:" in s and "in the future" in s for s in shown)
    assert len(catalog.adjudications.entries) == 1
    # systems are checked where they are known: the configuration, the run's manifest
    loaded, errors = load_adjudications(path, catalog.known_cases(), systems={"v1", "v2"})
    # every error of the entry is reported, not only the first: the date and the system
    assert [str(e) for e in errors if e.line in {12, 14}] == [
        f"{path}:12: case C01: date: 2099-01-01 is in the future",
        f"{path}:14: case C01: system: unknown system 'v3' (configured: v1, v2)",
    ]
    checked, unknown = Adjudications(
        path, tuple(loaded.entries), loaded.invalid, loaded.errors
    ).check_systems({"v1"})
    assert checked.entries == loaded.entries  # the valid entry names no system
    assert unknown == []


def test_every_error_of_an_entry_is_reported_each_at_its_own_line(tmp_path: Path) -> None:
    """An entry is never half-reported: a reviewer fixing one error must not meet the next
    only on the following run. Field errors, every dimension's, the scope's, the catalog's and
    the systems' errors come together, each at the line of what is wrong."""
    path, catalog = _catalog(
        tmp_path,
        """\
        - reviewer: R
          date: 2099-01-01
          case: C01
          system: v3
          lang: fr
          override:
            recall@5: 2
            rubric.accuracy: GOOD
            veto.fabricated_identifier: true
          note: several mistakes at once
        - reviewer: R
          date: 2026-11-30
          case: C09
          layer: B
          override: {exact_metadata: true}
          note: an unknown case, and a layer-A metric at layer B
        """,
    )
    _, errors = load_adjudications(path, catalog.known_cases(), systems={"v1", "v2"})
    assert [(e.line, e.case_id, e.field, e.message) for e in errors] == [
        (2, "C01", "date", "2099-01-01 is in the future"),
        (7, "C01", "override.recall@5", "a share, from 0 to 1 (got 2)"),
        (8, "C01", "override.rubric.accuracy", "a grade, one of PASS, PARTIAL, FAIL (got 'GOOD')"),
        (
            9,
            "C01",
            "override.veto.fabricated_identifier",
            "only false (lift the veto) can be adjudicated",
        ),
        (1, "C01", None, "one run needs system, lang and rep together (or none of lang, rep)"),
        (5, "C01", "lang", "unknown language 'fr' for this case (de, en)"),
        (4, "C01", "system", "unknown system 'v3' (configured: v1, v2)"),
        (15, "C09", "override.exact_metadata", "not a layer-B metric"),
        (13, "C09", "case", "unknown case: no case file defines it"),
    ]
    assert catalog.adjudications.entries == ()
    assert catalog.adjudications.invalid == 2


def test_an_unknown_system_is_an_error_where_systems_are_known(tmp_path: Path) -> None:
    path, catalog = _catalog(
        tmp_path,
        """\
        - reviewer: R
          date: 2026-11-30
          case: C01
          system: v3
          met: true
          note: a system nobody configured
        """,
    )
    assert catalog.errors == []  # the catalog does not know the systems
    checked, errors = catalog.adjudications.check_systems({"v1", "v2"})
    assert [str(e) for e in errors] == [
        f"{path}:4: case C01: system: unknown system 'v3' (configured: v1, v2)"
    ]
    assert checked.entries == ()
    assert checked.errors == tuple(errors)
    _, direct = load_adjudications(path, catalog.known_cases(), systems={"v1", "v2"})
    assert [str(e) for e in direct] == [str(e) for e in errors]


def test_the_file_must_be_a_list(tmp_path: Path) -> None:
    path, catalog = _catalog(tmp_path, "reviewer: R\n")
    assert [str(e) for e in catalog.errors] == [
        f"{path}:1: expected a list of adjudications (- reviewer: ..., case: ..., note: ...)"
    ]


# --------------------------------------------------------------------------- applying


def _retrieval(case: str, system: str, rep: int = 1, lang: str = "en", **kw: Any) -> RunRecord:
    values: dict[str, Any] = {
        "category": "technical_table",
        "split": "development",
        "role": "candidate" if system == "v2" else "baseline",
        "ok": True,
        "met": False,
        "latency_s": 0.1,
        "reasons": ("required evidence missing",),
        "metrics": {"recall@5": 0.0, "leaked": []},
    }
    values.update(kw)
    return RetrievalRecord(key=RunKey(case, system, rep, lang, "A"), **values)


def _entries(tmp_path: Path, text: str) -> Adjudications:
    _path, catalog = _catalog(tmp_path, text)
    assert catalog.errors == []
    adjudications: Adjudications = catalog.adjudications
    return adjudications


def test_apply_is_pure_and_the_most_specific_entry_wins(tmp_path: Path) -> None:
    adjudications = _entries(
        tmp_path,
        """\
        - reviewer: Run Reviewer
          date: 2026-11-30
          case: C01
          system: v2
          lang: en
          rep: 1
          override: {recall@5: 0.5}
          note: half the table is on page 3
        - reviewer: Case Reviewer
          date: 2026-11-29
          case: C01
          met: true
          override: {recall@5: 1.0}
          note: page 2 and 3 hold the same table
        """,
    )
    records = [_retrieval("C01", "v2"), _retrieval("C01", "v1"), _retrieval("C02", "v2")]
    snapshot = [record.to_json() for record in records]
    new, applied = apply(records, adjudications)
    assert [record.to_json() for record in records] == snapshot  # the inputs are untouched
    assert new[2] is records[2]  # a run no entry names is the same record
    v2, v1 = new[0], new[1]
    assert v2.met is True
    assert v2.metric("recall@5") == 0.5
    assert v1.met is True
    assert v1.metric("recall@5") == 1.0
    assert v2.reasons[0] == (
        "adjudicated by Run Reviewer on 2026-11-30: recall@5 1 → 0.5: half the table is on page 3"
    )
    assert v2.reasons[1].startswith("adjudicated by Case Reviewer on 2026-11-29: met false → true")
    assert v2.adjudication is not None
    assert v2.adjudication is not None
    assert v2.adjudication.by == ("Case Reviewer", "Run Reviewer")
    assert v2.adjudication.to_json()["rulings"][1]["changes"] == {"recall@5": [1.0, 0.5]}
    assert [len(item.runs) for item in applied] == [2, 1]  # case-wide first, then the run
    assert RetrievalRecord is type(v2)
    # the record's JSON carries the ruling (per-run views, xdist) and reads back
    from pytest_ragv2.deciding.records import as_record

    assert as_record(v2.to_json()) == v2


def test_disputed_gold_skips_the_runs_and_lifts_gold_vetoes_only(tmp_path: Path) -> None:
    adjudications = _entries(
        tmp_path,
        """\
        - reviewer: R
          date: 2026-11-30
          case: C01
          disputed: true
          note: the datasheet and the manual disagree
        """,
    )
    chat = ChatRecord(
        key=RunKey("C01", "v2", 1, "en", "B"),
        category="technical_table",
        split="development",
        role="candidate",
        ok=True,
        met=False,
        latency_s=1.0,
        vetoes=(
            Veto("fabricated_identifier", 1, "X", ""),
            Veto("outside_allowlist", 1, "secret.pdf", ""),
        ),
    )
    (new,), (item,) = apply([chat], adjudications)
    assert isinstance(new, ChatRecord)
    assert new.skipped is not None
    assert new.skipped.startswith("gold disputed")
    assert "adjudicated by R on 2026-11-30" in new.skipped
    assert [veto.kind for veto in new.vetoes] == ["outside_allowlist"]  # a leak still counts
    assert item.runs == {
        "C01[v2-en-r1]": {
            "skipped": (None, "disputed gold"),
            "vetoes": (["fabricated_identifier"], []),
        }
    }


def test_rubric_and_veto_overrides_touch_chat_records_only(tmp_path: Path) -> None:
    adjudications = _entries(
        tmp_path,
        """\
        - reviewer: R
          date: 2026-11-30
          case: C01
          override:
            rubric.accuracy: PASS
            veto.fabricated_identifier: false
            exact_answer: 1
          note: NX-450B is in the parts list
        """,
    )
    chat = ChatRecord(
        key=RunKey("C01", "v2", 1, "en", "B"),
        category="technical_table",
        split="development",
        role="candidate",
        ok=True,
        met=False,
        latency_s=1.0,
        rubric={"accuracy": "FAIL", "overall": "FAIL"},
        metrics={"exact_answer": 0.0},
        vetoes=(Veto("fabricated_identifier", 1, "NX-450B", ""),),
    )
    retrieval = _retrieval("C01", "v2")
    (new_chat, new_retrieval), _ = apply([chat, retrieval], adjudications)
    assert isinstance(new_chat, ChatRecord)
    assert new_chat.rubric["accuracy"] == "PASS"
    assert new_chat.vetoes == ()
    assert new_chat.metric("exact_answer") == 1.0
    assert new_retrieval is retrieval  # no layer-A dimension named: unchanged


# --------------------------------------------------------------------------- sessions


FLIP = """\
- reviewer: Dana Reviewer
  date: 2026-11-30
  case: C01
  system: v2
  layer: A
  met: false
  override: {recall@5: 0.0}
  note: page 2 is the superseded datasheet; the gold should point at revision B
- reviewer: Dana Reviewer
  date: 2026-11-30
  case: C02
  system: v2
  override: {recall@5: 0.0}
  note: NX-450B was withdrawn; the seal kit is NX-451
"""


def _rescore(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, output: str) -> int:
    from pytest_ragv2.tools.cli import main

    monkeypatch.chdir(project.path)
    return main(["rescore", "raw-runs/testrun", "--output", output])


def test_an_adjudication_changes_the_verdict_and_gates_on_rescore_and_says_by_whom(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.OK
    live = summary_of(project)
    assert live["verdict"] == "pass"
    assert "adjudication" not in live
    (project.path / "gold" / "adjudications.yaml").write_text(FLIP)
    assert _rescore(project, monkeypatch, "adjudicated") == 1
    out = project.path / "adjudicated"
    rescored = json.loads((out / "summary.json").read_text())
    assert rescored["verdict"] == "fail"
    assert gate(rescored, "recall_improvement")["decision"] == "fail"
    found = rescored["adjudication"]
    assert (found["verdict_before"], found["verdict_after"]) == ("pass", "fail")
    assert found["reviewers"] == ["Dana Reviewer"]
    assert found["file"] == "gold/adjudications.yaml"
    changed = {g["name"]: (g["before"], g["after"]) for g in found["gates_changed"]}
    assert changed["recall_improvement"] == ("pass", "fail")
    first = found["entries"][0]
    assert first["reviewer"] == "Dana Reviewer"
    assert first["date"] == "2026-11-30"
    assert first["runs_affected"] == 2
    assert first["runs"] == ["C01[v2-de-r1]", "C01[v2-en-r1]"]
    assert first["changes"]["C01[v2-en-r1]"] == {"met": [True, False], "recall@5": [1.0, 0.0]}
    assert "superseded datasheet" in first["note"]
    assert found["runs_adjudicated"] == 4
    # the per-run view: the overridden runs carry who ruled
    assert any(
        run["run"] == "C01[v2-en-r1]"
        and run["reasons"][0].startswith(
            "adjudicated by Dana Reviewer on 2026-11-30: met true → false, recall@5 1 → 0: page 2"
        )
        for run in rescored["unmet_runs"]
    )
    markdown = (out / "summary.md").read_text()
    assert "## Adjudication" in markdown
    assert "**Verdict without adjudication: PASS; with it: FAIL.**" in markdown
    assert "| recall_improvement | pass | fail |" in markdown
    assert "Dana Reviewer" in markdown
    page = (out / "report.html").read_text()
    assert "Verdict without adjudication: PASS; with it: FAIL." in page
    assert "Dana Reviewer" in page
    assert "NX-450B was withdrawn" in page
    # a met run's panel shows the ruling too (the rescored records are the adjudicated ones)
    assert "adjudicated by Dana Reviewer on 2026-11-30: recall@5 1 → 0: NX-450B" in page
    lines = adjudication_lines(rescored)
    assert lines[1] == "verdict without adjudication PASS, with it FAIL (human rulings changed it)"
    assert any("Dana Reviewer" in line for line in lines)
    assert all(len(line) <= 120 for line in lines)
    # the raw runs are untouched: without the file the machine's verdict is back
    (project.path / "gold" / "adjudications.yaml").unlink()
    assert _rescore(project, monkeypatch, "plain") == 0


def test_a_live_session_applies_it_and_rescore_agrees(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.path / "gold" / "adjudications.yaml").write_text(FLIP)
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    live = summary_of(project)
    assert live["verdict"] == "fail"
    assert live["adjudication"]["verdict_before"] == "pass"
    # the terminal says it too, by whom, in lines of at most 120 characters
    result.stdout.fnmatch_lines(
        [
            "*verdict without adjudication PASS, with it FAIL (human rulings changed it)*",
            "*C01 all runs of v2 (layer A): by Dana Reviewer on 2026-11-30: met: false*",
        ]
    )
    assert _rescore(project, monkeypatch, "rescored") == 1
    rescored = json.loads((project.path / "rescored" / "summary.json").read_text())
    assert rescored["adjudication"] == live["adjudication"]
    assert [
        (g["name"], g["decision"], g["value"]) for g in rescored["gates"] if "p95" not in g["name"]
    ] == [(g["name"], g["decision"], g["value"]) for g in live["gates"] if "p95" not in g["name"]]
    markdown = (project.path / "reports" / "testrun" / "summary.md").read_text()
    assert "## Adjudication" in markdown


def test_disputed_gold_leaves_a_case_out_of_the_comparison_and_names_it(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project.path / "gold" / "adjudications.yaml").write_text(
        textwrap.dedent(
            """\
            - reviewer: Sam Engineer
              date: 2026-11-28
              case: C02
              disputed: true
              note: the parts list has two seal kits; which one is gold is open
            - reviewer: Sam Engineer
              date: 2026-11-28
              case: H01
              met: true
              note: HOLDOUT-RULING the holdout's page is right
            """
        )
    )
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    live = summary_of(project)
    found = live["adjudication"]
    assert found["disputed_cases"] == [
        {
            "case": "C02",
            "runs_left_out": 4,
            "reviewer": "Sam Engineer",
            "date": "2026-11-28",
            "note": "the parts list has two seal kits; which one is gold is open",
        }
    ]
    assert "C02" not in json.dumps(gate(live, "recall_improvement").get("evidence") or {})
    assert live["systems"]["v2"]["skipped"] == 2
    assert live["by_case"]["v2"]["C02"]["skipped"] == 2
    assert gate(live, "runs_complete")["decision"] == "pass"
    # a ruling on a holdout case is counted, never shown in a development run's reports
    assert found["entries_other_cases"] == 1
    for name in ("summary.json", "summary.md", "report.html"):
        text = (project.path / "reports" / "testrun" / name).read_text()
        assert "HOLDOUT-RULING" not in text
    # the live items show the ruling: the disputed runs are skipped with its reason
    assert result.parseoutcomes().get("skipped") == 4
    result.stdout.no_fnmatch_line("*C02*did not meet its case*")
    markdown = (project.path / "reports" / "testrun" / "summary.md").read_text()
    assert "Disputed gold: **C02**, 4 run(s) left out of the comparisons" in markdown
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    assert _rescore(project, monkeypatch, "rescored") == (0 if live["verdict"] == "pass" else 1)
    rescored = json.loads((project.path / "rescored" / "summary.json").read_text())
    assert rescored["adjudication"]["disputed_cases"] == found["disputed_cases"]


def test_an_invalid_file_fails_gold_valid_and_validate_reports_it(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_ragv2.tools.cli import main

    (project.path / "gold" / "adjudications.yaml").write_text(
        "- reviewer: R\n  date: 2026-11-30\n  case: C01\n  system: v9\n  met: true\n  note: n\n"
        "- reviewer: R\n  date: 2026-11-30\n  case: C01\n  met: true\n"
    )
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    live = summary_of(project)
    details = gate(live, "gold_valid")["details"]
    assert any("adjudications.yaml:7: case C01: note: Field required" in d for d in details)
    assert any("adjudications.yaml:4: case C01: system: unknown system 'v9'" in d for d in details)
    assert live["adjudication"]["entries"] == []
    assert len(live["adjudication"]["errors"]) == 2
    monkeypatch.chdir(project.path)
    capsys.readouterr()
    assert main(["validate"]) == 1
    out = capsys.readouterr().out
    assert "adjudications.yaml:7: case C01: note: Field required" in out
    assert "adjudications.yaml:4: case C01: system: unknown system 'v9'" in out
    assert "gold/adjudications.yaml: 2 errors" in out


def test_markdown_is_empty_without_adjudications() -> None:
    assert adjudication_markdown({"extras": {}}) == []
    assert adjudication_lines({}) == []


def test_the_html_section_is_escaped_and_lists_the_runs_changed() -> None:
    from pytest_ragv2.report.adjudication_view import adjudication_html

    found = {
        "file": "gold/adjudications.yaml",
        "entries": [
            {
                "case": "C01",
                "scope": "all runs",
                "ruling": "met: true",
                "reviewer": "<b>Mallory</b>",
                "date": "2026-11-30",
                "note": "<script>alert(1)</script>",
                "runs_affected": 1,
                "runs": ["C01[v2-en-r1]"],
                "changes": {"C01[v2-en-r1]": {"met": [False, True]}},
            }
        ],
        "entries_applied": 1,
        "runs_adjudicated": 1,
        "errors": ["gold/adjudications.yaml:9: case C01: note: Field required"],
        "disputed_cases": [],
        "verdict_before": "fail",
        "verdict_after": "pass",
        "gates_changed": [
            {"name": "exact_answer", "before": "fail", "after": "pass", "reason_after": "1.0"}
        ],
        "gate_values_changed": ["case_wins"],
    }
    page = adjudication_html({"adjudication": found})  # type: ignore[arg-type]
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;b&gt;Mallory&lt;/b&gt;" in page
    assert "C01[v2-en-r1]: met false → true" in page
    assert "Verdict without adjudication: FAIL; with it: PASS." in page
    assert "Not applied: gold/adjudications.yaml:9" in page
    lines = adjudication_lines({"adjudication": found})
    assert lines[2] == "  gate exact_answer: fail → pass (1.0)"
    assert lines[3] == "  gate values changed, decisions the same: case_wins"
    long = dict(found, entries=[dict(found["entries"][0], note="why " * 80)] * 12)
    shown = adjudication_lines({"adjudication": long})
    assert all(len(line) <= 120 for line in shown)
    assert shown[-2] == "  … and 2 more entries in report.html"


def _chat(case: str, system: str, exact: float) -> ChatRecord:
    return ChatRecord(
        key=RunKey(case, system, 1, "en", "B"),
        category="technical_table",
        split="development",
        role="candidate" if system == "v2" else "baseline",
        ok=True,
        met=exact == 1.0,
        latency_s=1.0,
        metrics={"exact_answer": exact, "citation_correctness": 1.0},
        rubric={"accuracy": "PASS" if exact else "FAIL", "overall": "PASS" if exact else "FAIL"},
        vetoes=() if exact else (Veto("fabricated_identifier", 1, "NX-9", ""),),
    )


def test_layer_b_a_ruling_lifts_a_veto_and_flips_the_verdict_through_decide(
    tmp_path: Path,
) -> None:
    from pytest_ragv2.config.settings import Settings
    from pytest_ragv2.deciding.decision import decide

    adjudications = _entries(
        tmp_path,
        """\
        - reviewer: Kim Engineer
          date: 2026-11-30
          case: C01
          system: v2
          lang: en
          rep: 1
          layer: B
          met: true
          override: {exact_answer: 1, rubric.accuracy: PASS, veto.fabricated_identifier: false}
          note: NX-9 is the 2026 part number; the gold still has the old one
        """,
    )
    records = [_chat("C01", "v2", 0.0), _chat("C02", "v2", 1.0)]
    records += [_chat("C01", "v1", 1.0), _chat("C02", "v1", 1.0)]
    roles = {"v1": "baseline", "v2": "candidate"}
    settings = Settings()
    plain = decide(records, layer="B", settings=settings, roles=roles, expected_runs=4)
    ruled = decide(
        records,
        layer="B",
        settings=settings,
        roles=roles,
        expected_runs=4,
        adjudications=adjudications,
    )
    assert not plain.passed
    assert plain.results.adjudication is None
    assert ruled.passed
    found = ruled.results.adjudication
    assert found is not None
    assert (found["verdict_before"], found["verdict_after"]) == ("fail", "pass")
    changed = {g["name"]: (g["before"], g["after"]) for g in found["gates_changed"]}
    assert changed["fabricated_identifier"] == ("fail", "pass")
    assert changed["exact_answer"] == ("fail", "pass")
    (record,) = [r for r in ruled.results.records if r.key.case == "C01" and r.key.system == "v2"]
    assert isinstance(record, ChatRecord)
    assert record.rubric["accuracy"] == "PASS"
    assert record.adjudication is not None
    assert record.adjudication.by == ("Kim Engineer",)
    # an entry naming a system nobody configured fails gold_valid and is not applied
    path = tmp_path / "gold" / "adjudications.yaml"
    path.write_text(path.read_text().replace("system: v2", "system: v7"))
    unknown, _ = load_adjudications(path)
    wrong = decide(
        records, layer="B", settings=settings, roles=roles, expected_runs=4, adjudications=unknown
    )
    assert not wrong.passed
    gold_valid = next(g for g in wrong.gates if g.name == "gold_valid")
    assert gold_valid.decision == "fail"
    assert "unknown system 'v7'" in gold_valid.details[0]


def test_the_documented_example_is_valid_against_the_bundled_benchmark(tmp_path: Path) -> None:
    import re
    import shutil

    from tests.conftest import REPO_ROOT

    text = (REPO_ROOT / "docs" / "adjudication.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(# gold/adjudications.yaml\n.*?)```", text, re.S)
    assert block is not None
    gold = tmp_path / "gold"
    shutil.copytree(REPO_ROOT / "gold", gold)
    (gold / "adjudications.yaml").write_text(block.group(1), encoding="utf-8")
    catalog = load_catalog(REPO_ROOT / "cases", gold)
    assert [str(error) for error in catalog.errors] == []
    assert len(catalog.adjudications.entries) == 3
    _, unknown = catalog.adjudications.check_systems({"demo-v1", "demo-v2"})
    assert unknown == []
    # the bundled benchmark itself carries no rulings: its verdicts are the machine's
    assert not (REPO_ROOT / "gold" / "adjudications.yaml").exists()


def test_a_ruling_turns_a_failing_run_into_a_pass_on_rescore(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.conftest import pyproject

    (project.path / "pyproject.toml").write_text(pyproject(baseline="good", candidate="good"))
    result = project.runpytest("--ragv2-layer=A", *RUN_ID)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert gate(summary_of(project), "recall_improvement")["decision"] == "fail"
    (project.path / "gold" / "adjudications.yaml").write_text(
        textwrap.dedent(
            """\
            - reviewer: Lee Reviewer
              date: 2026-11-30
              case: C01
              system: v1
              met: false
              override: {recall@5: 0}
              note: the baseline's hit is the superseded datasheet, not the gold page
            - reviewer: Lee Reviewer
              date: 2026-11-30
              case: C02
              system: v1
              met: false
              override: {recall@5: 0}
              note: the baseline's row is the withdrawn part
            """
        )
    )
    assert _rescore(project, monkeypatch, "ruled") == 0
    printed = capsys.readouterr().out
    assert "verdict without adjudication FAIL, with it PASS (human rulings changed it)" in printed
    assert "C01 all runs of v1: by Lee Reviewer on 2026-11-30" in printed
    ruled = json.loads((project.path / "ruled" / "summary.json").read_text())
    assert ruled["verdict"] == "pass"
    found = ruled["adjudication"]
    assert (found["verdict_before"], found["verdict_after"]) == ("fail", "pass")
    assert {g["name"]: g["after"] for g in found["gates_changed"]} == {"recall_improvement": "pass"}
    assert "Lee Reviewer" in (project.path / "ruled" / "report.html").read_text()
