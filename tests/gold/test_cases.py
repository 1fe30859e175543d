"""Loading gold cases: located errors, splits, gold merging, the allow-list."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_ragv2.config.located_yaml import CaseError, CaseLoadError, SourceLocation
from pytest_ragv2.gold.allowlist import AllowedFile, Allowlist, load_allowlist
from pytest_ragv2.gold.cases import load_case_file, load_catalog, warning_text
from pytest_ragv2.gold.schema import Claim, Evidence


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Paths in messages are shown as given; relative paths keep the expected strings short.
    monkeypatch.chdir(tmp_path)


def write(relative: str, text: str) -> Path:
    path = Path(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def messages(errors: list[CaseError]) -> list[str]:
    return [str(e) for e in errors]


GOOD_CASE = """
- id: B01
  category: exact_lookup
  prompt_en: "What is the SLA?"
  required_evidence:
    - file_id: contrat
      page: 2
"""


def test_case_error_format() -> None:
    error = CaseError(Path("cases/dev.yaml"), 12, "B07", "required_evidence[0].page", "bad")
    assert str(error) == "cases/dev.yaml:12: case B07: required_evidence[0].page: bad"
    assert str(CaseError(Path("gold/a.yaml"), None, None, None, "bad")) == "gold/a.yaml: bad"


def test_clean_file_loads_with_location_and_split() -> None:
    write("cases/development.yaml", GOOD_CASE)
    catalog = load_catalog(Path("cases"), None)
    assert catalog.errors == []
    [loaded] = catalog.cases(["development"])
    assert loaded.case.id == "B01"
    assert loaded.split == "development"
    assert loaded.location == SourceLocation(Path("cases/development.yaml"), 1)
    assert loaded.case.evidence == [Evidence(file_id="contrat", page=2)]
    assert loaded.evidence_locations == {
        "required_evidence[0]": SourceLocation(Path("cases/development.yaml"), 5)
    }
    assert catalog.cases(["holdout"]) == []


def test_yaml_syntax_error_is_located_and_other_files_still_load() -> None:
    write("cases/a_broken.yaml", GOOD_CASE + "  - bad: [unclosed\n")
    write(
        "cases/b_ok.yaml",
        """
        - id: C01
          category: semantic
          prompt_en: "Why?"
          required_evidence: []
        """,
    )
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/a_broken.yaml:7: YAML syntax error: did not find expected key (column 3)"
    ]
    assert [c.case.id for c in catalog.cases(["development"])] == ["C01"]
    assert not catalog.files[0].readable
    assert catalog.files[0].cases == []


def test_indentation_error_points_at_the_offending_line() -> None:
    write(
        "cases/dev.yaml",
        """
        - id: B01
          category: exact_lookup
           prompt_en: "x"
        """,
    )
    [error] = load_catalog(Path("cases"), None).errors
    assert str(error) == (
        "cases/dev.yaml:3: YAML syntax error: mapping values are not allowed in this context"
        " (column 13)"
    )


def test_unknown_field_is_an_error_with_a_hint_and_only_that_case_is_dropped() -> None:
    write(
        "cases/dev.yaml",
        """
        - id: B01
          category: exact_lookup
          prompt_en: "What?"
          requried_evidence: []
        - id: B02
          category: exact_lookup
          prompt_en: "What else?"
          required_evidence: []
          colour: blue
        - id: B03
          category: semantic
          prompt_en: "Fine"
          required_evidence: []
        """,
    )
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/dev.yaml:4: case B01: requried_evidence: unknown field"
        " (did you mean 'required_evidence'?)",
        "cases/dev.yaml:9: case B02: colour: unknown field",
    ]
    assert [c.case.id for c in catalog.cases()] == ["B03"]


def test_wrong_type_deep_inside_required_evidence() -> None:
    write(
        "cases/dev.yaml",
        """
        - id: B07
          category: technical_table
          prompt_en: "Max pressure?"
          required_evidence:
            - file_id: fiche
              page: 3
            - file_id: fiche
              page: "three"
              row: [1, 2]
              table_cells:
                header: Pression
                unit: [bar]
                colour: red
            - page: 4
        """,
    )
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/dev.yaml:8: case B07: required_evidence[1].page: Input should be a valid integer"
        " (got 'three')",
        "cases/dev.yaml:9: case B07: required_evidence[1].row: Input should be a valid integer"
        " or Input should be a valid string (got a list)",
        "cases/dev.yaml:12: case B07: required_evidence[1].table_cells.unit:"
        " Input should be a valid string (got a list)",
        "cases/dev.yaml:13: case B07: required_evidence[1].table_cells.colour: unknown field",
        "cases/dev.yaml:14: case B07: required_evidence[2]: evidence needs a file_id or a filename",
    ]
    assert catalog.cases() == []


def test_missing_required_field_points_at_the_case() -> None:
    write(
        "cases/dev.yaml",
        """
        - id: B01
          prompt_en: "What?"
          required_evidence: []
        """,
    )
    assert messages(load_catalog(Path("cases"), None).errors) == [
        "cases/dev.yaml:1: case B01: category: Field required"
    ]


def test_duplicate_id_across_files_names_both_places() -> None:
    write("cases/dev.yaml", "# development cases\n" + GOOD_CASE.lstrip("\n"))
    write(
        "cases/holdout.yaml",
        """
        - id: H01
          category: semantic
          prompt_en: "Other"
          required_evidence: []
        - id: B01
          category: semantic
          prompt_en: "Again"
          required_evidence: []
        """,
    )
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/holdout.yaml:5: case B01: id: B01 already defined at cases/dev.yaml:2"
    ]
    assert [(c.case.id, c.split) for c in catalog.cases()] == [
        ("B01", "development"),
        ("H01", "holdout"),
    ]


def test_duplicate_id_within_a_file() -> None:
    write("cases/dev.yaml", GOOD_CASE + GOOD_CASE.lstrip("\n"))
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/dev.yaml:7: case B01: id: B01 already defined at cases/dev.yaml:1"
    ]
    assert len(catalog.cases()) == 1


def test_duplicate_yaml_key_is_an_error() -> None:
    write(
        "cases/dev.yaml",
        """
        - id: B01
          category: exact_lookup
          prompt_en: "What?"
          required_evidence: []
          category: semantic
        """,
    )
    assert messages(load_catalog(Path("cases"), None).errors) == [
        "cases/dev.yaml:5: case B01: category: duplicate key (first given at line 2)"
    ]


def test_yaml_merge_keys_are_not_duplicates() -> None:
    write(
        "cases/dev.yaml",
        """
        - &base
          id: B01
          category: exact_lookup
          prompt_en: "What?"
          required_evidence: []
        - <<: *base
          id: B02
          prompt_en: "And this?"
        """,
    )
    catalog = load_catalog(Path("cases"), None)
    assert catalog.errors == []
    second = catalog.cases()[1].case
    assert (second.id, second.category, second.prompt_en) == ("B02", "exact_lookup", "And this?")


def test_missing_evidence_is_an_error_unless_refusal_is_expected() -> None:
    write(
        "cases/dev.yaml",
        """
        - id: B01
          category: semantic
          prompt_en: "What?"
        - id: B02
          category: safe_no_answer
          prompt_en: "Clients in Japan?"
          safe_refusal_expected: true
        - id: B03
          category: semantic
          prompt_en: "Nothing to find"
          required_evidence: []
        """,
    )
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/dev.yaml:1: case B01: required_evidence:"
        " no required_evidence: give [] if none is expected"
    ]
    assert [c.case.id for c in catalog.cases()] == ["B02", "B03"]


def test_split_by_file_name_and_by_split_key() -> None:
    case = "- {id: %s, category: x, prompt_en: q, required_evidence: []}\n"
    write("cases/development.yaml", case % "D1")
    write("cases/sub/final-holdout.yml", case % "H1")
    write("cases/extra.yaml", "split: holdout\ncases:\n" + textwrap.indent(case % "H2", "  "))
    write(
        "cases/zz_holdout.yaml", "split: development\ncases:\n" + textwrap.indent(case % "D2", "  ")
    )
    catalog = load_catalog(Path("cases"), None)
    assert catalog.errors == []
    assert [f.path.as_posix() for f in catalog.files] == [
        "cases/development.yaml",
        "cases/extra.yaml",
        "cases/sub/final-holdout.yml",
        "cases/zz_holdout.yaml",
    ]
    assert [c.case.id for c in catalog.cases(["development"])] == ["D1", "D2"]
    assert [c.case.id for c in catalog.cases(["holdout"])] == ["H2", "H1"]
    assert [c.case.id for c in catalog.cases(["development", "holdout"])] == [
        "D1",
        "H2",
        "H1",
        "D2",
    ]


def test_mapping_form_errors() -> None:
    write(
        "cases/dev.yaml",
        """
        split: blind
        kases: []
        """,
    )
    assert messages(load_catalog(Path("cases"), None).errors) == [
        "cases/dev.yaml:1: split: expected one of development, holdout (got 'blind');"
        " the file's cases are not run",
        "cases/dev.yaml:1: cases: Field required",
        "cases/dev.yaml:2: kases: unknown field (expected split and cases)",
    ]


def test_a_case_that_is_not_a_mapping_and_an_empty_file() -> None:
    write("cases/a.yaml", "- just a string\n")
    write("cases/b.yaml", "# nothing yet\n")
    write("cases/c.yaml", "a scalar\n")
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/a.yaml:1: a case must be a mapping (got str)",
        "cases/c.yaml:1: expected a list of cases or {split, cases}",
    ]
    assert messages(catalog.warnings) == [
        "cases/b.yaml:1: no case: the file is empty or only comments"
    ]


def test_prompts_are_merged_and_conflicts_are_errors() -> None:
    write(
        "cases/dev.yaml",
        """
        - id: B01
          category: semantic
          prompt_en: "Which SLA?"
          prompt_de: "Welches SLA?"
          prompts:
            fr: "Quel SLA ?"
          required_evidence: []
        - id: B02
          category: semantic
          prompt_en: "Same"
          prompts: {en: "Same"}
          required_evidence: []
        - id: B03
          category: semantic
          prompts:
            en: "One"
            de: "Eins"
          prompt_en: "Two"
          required_evidence: []
        """,
    )
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/dev.yaml:18: case B03: prompt_en: prompt_en and prompts.en differ:"
        " give the prompt once"
    ]
    first, second = (c.case for c in catalog.cases())
    assert first.prompts == {"fr": "Quel SLA ?", "en": "Which SLA?", "de": "Welches SLA?"}
    assert first.prompt_en == "Which SLA?"
    assert second.prompts == {"en": "Same"}


GOLD_CASES = """
- id: B01
  category: exact_lookup
  prompt_en: "What is the SLA?"
- id: B02
  category: technical_table
  prompt_en: "Max pressure?"
"""


def test_gold_answers_and_evidence_are_merged() -> None:
    write("cases/dev.yaml", GOLD_CASES)
    write(
        "gold/evidence.yaml",
        """
        B01:
          - file_id: contrat
            page: 2
            section: "3.2 Disponibilité"
        B02:
          - filename: fiche.xlsx
            table: Limites
            row: 4
          - file_id: fiche
            row: "P-200"
        """,
    )
    write(
        "gold/answers.yaml",
        """
        B01:
          required_claims:
            - "99,7 %"
            - {text: "monthly", any_of: [mensuel]}
          forbidden_claims: ["99,9 %"]
        """,
    )
    catalog = load_catalog(Path("cases"), Path("gold"))
    assert catalog.errors == []
    assert catalog.gold_files == [Path("gold/answers.yaml"), Path("gold/evidence.yaml")]
    first, second = catalog.cases()
    assert first.case.evidence == [Evidence(file_id="contrat", page=2, section="3.2 Disponibilité")]
    assert first.case.expected_answer is not None
    assert first.case.expected_answer.required_claims == [
        Claim(text="99,7 %"),
        Claim(text="monthly", any_of=["mensuel"]),
    ]
    assert second.case.expected_answer is None
    assert second.case.evidence[1] == Evidence(file_id="fiche", row="P-200")
    assert second.evidence_locations == {
        "required_evidence[0]": SourceLocation(Path("gold/evidence.yaml"), 6),
        "required_evidence[1]": SourceLocation(Path("gold/evidence.yaml"), 9),
    }


def test_gold_for_an_unknown_case_is_located_in_the_gold_file() -> None:
    write("cases/dev.yaml", GOOD_CASE)
    write(
        "gold/answers.yaml",
        """
        B01:
          required_claims: ["99,7 %"]
        B99:
          required_claims: ["nothing"]
        """,
    )
    catalog = load_catalog(Path("cases"), Path("gold"))
    assert messages(catalog.gold_errors) == [
        "gold/answers.yaml:3: case B99: expected_answer: gold for an unknown case:"
        " no case file defines B99"
    ]
    assert catalog.errors == catalog.gold_errors
    assert [c.case.id for c in catalog.cases()] == ["B01"]


def test_gold_for_a_case_of_an_unreadable_file_says_so() -> None:
    write("cases/dev.yaml", "- id: B01\n  prompt_en: [\n")
    write("gold/evidence.yaml", "B01: []\n")
    catalog = load_catalog(Path("cases"), Path("gold"))
    assert str(catalog.gold_errors[0]) == (
        "gold/evidence.yaml:1: case B01: required_evidence: gold for an unknown case:"
        " no case file defines B01 (cases/dev.yaml could not be read)"
    )


def test_inline_and_gold_evidence_is_ambiguous() -> None:
    write("cases/dev.yaml", GOOD_CASE)
    write("gold/evidence.yaml", "# evidence\nB01:\n  - file_id: contrat\n    page: 3\n")
    catalog = load_catalog(Path("cases"), Path("gold"))
    assert messages(catalog.errors) == [
        "cases/dev.yaml:4: case B01: required_evidence: defined inline and in"
        " gold/evidence.yaml:2 (ambiguous gold: keep one)"
    ]
    assert catalog.cases() == []


def test_gold_schema_error_is_located_in_gold_and_the_case_is_not_loaded() -> None:
    write("cases/dev.yaml", GOLD_CASES)
    write(
        "gold/evidence.yaml",
        """
        B01:
          - file_id: contrat
            page: 0
        B02:
          - file_id: fiche
        """,
    )
    write(
        "gold/answers.yaml",
        """
        B02:
          required_claims:
            - text: "12 bar"
              number: twelve
          optional_claim: []
        """,
    )
    catalog = load_catalog(Path("cases"), Path("gold"))
    assert messages(catalog.errors) == [
        "cases/dev.yaml:1: case B01: required_evidence: the gold entry at gold/evidence.yaml:1"
        " is invalid (see the error there)",
        "cases/dev.yaml:4: case B02: expected_answer: the gold entry at gold/answers.yaml:1"
        " is invalid (see the error there)",
        "gold/answers.yaml:4: case B02: expected_answer.required_claims[0].number:"
        " Input should be a valid number (got 'twelve')",
        "gold/answers.yaml:5: case B02: expected_answer.optional_claim: unknown field"
        " (did you mean 'optional_claims'?)",
        "gold/evidence.yaml:3: case B01: required_evidence[0].page:"
        " Input should be greater than or equal to 1 (got 0)",
    ]
    assert catalog.cases() == []


def test_gold_file_shape_errors() -> None:
    write("cases/dev.yaml", GOOD_CASE)
    write("gold/answers.yaml", "- not a mapping\n")
    write("gold/evidence.yaml", "B01: []\nB01: []\n")
    catalog = load_catalog(Path("cases"), Path("gold"))
    assert messages(catalog.gold_errors) == [
        "gold/answers.yaml:1: expected a mapping: case id → gold",
        "gold/evidence.yaml:2: case B01: B01 already has a gold entry at gold/evidence.yaml:1",
    ]


def test_missing_cases_directory_and_empty_directory() -> None:
    assert messages(load_catalog(Path("nowhere"), None).errors) == [
        "nowhere: cases directory not found"
    ]
    Path("empty").mkdir()
    assert messages(load_catalog(Path("empty"), None).errors) == [
        "empty: no case file (*.yaml, *.yml) found"
    ]


def test_gold_directory_inside_cases_directory_is_not_read_as_cases() -> None:
    write("suite/cases.yaml", GOLD_CASES)
    write("suite/gold/evidence.yaml", "B01: []\nB02: []\n")
    catalog = load_catalog(Path("suite"), Path("suite/gold"))
    assert catalog.errors == []
    assert [f.path.name for f in catalog.files] == ["cases.yaml"]


def test_load_case_file_alone_reports_cross_file_duplicates_through_known_ids() -> None:
    path = write("dev.yaml", GOOD_CASE)
    known = {"B01": SourceLocation(Path("other.yaml"), 7)}
    case_file = load_case_file(path, known_ids=known)
    assert messages(case_file.errors) == [
        "dev.yaml:1: case B01: id: B01 already defined at other.yaml:7"
    ]
    fresh = load_case_file(path)
    assert [c.case.id for c in fresh.cases] == ["B01"]
    assert fresh.case_ids == {"B01": SourceLocation(path, 1)}


# --------------------------------------------------------------------------- allow-list


ALLOWLIST = """
files:
  - file_id: contrat
    filename: contrat-service.pdf
    sha256: "%s"
  - file_id: fiche
    filename: fiche.xlsx
""" % ("ab" * 32)


def test_allowlist_loads() -> None:
    allowlist = load_allowlist(write("gold/allowlist.yaml", ALLOWLIST))
    assert allowlist == Allowlist(
        (
            AllowedFile("contrat", "contrat-service.pdf", "ab" * 32),
            AllowedFile("fiche", "fiche.xlsx", None),
        )
    )
    assert allowlist.file_ids == frozenset({"contrat", "fiche"})
    assert allowlist.filenames == frozenset({"contrat-service.pdf", "fiche.xlsx"})


def test_allowlist_accepts_a_bare_list() -> None:
    allowlist = load_allowlist(write("a.yaml", "- {file_id: a, filename: a.md}\n"))
    assert allowlist.file_ids == frozenset({"a"})


def test_allowlist_errors_are_located() -> None:
    path = write(
        "gold/allowlist.yaml",
        """
        files:
          - file_id: a
            filename: a.md
            sha256: nothex
          - file_id: a
            filename: b.md
          - filename: c.md
            size: 3
          - just-a-name
        """,
    )
    with pytest.raises(CaseLoadError) as raised:
        load_allowlist(path)
    assert isinstance(raised.value, ValueError)
    assert str(raised.value).splitlines() == [
        "gold/allowlist.yaml:4: files[0].sha256: expected 64 lowercase hex digits",
        "gold/allowlist.yaml:5: files[1].file_id: 'a' already listed at line 2",
        "gold/allowlist.yaml:7: files[2].file_id: a non-empty string is required",
        "gold/allowlist.yaml:8: files[2].size: unknown field",
        "gold/allowlist.yaml:9: files[3]: expected a mapping",
    ]


def test_allowlist_missing_or_unparsable() -> None:
    with pytest.raises(CaseLoadError, match=r"^none\.yaml: file not found$"):
        load_allowlist(Path("none.yaml"))
    with pytest.raises(CaseLoadError, match=r"^bad\.yaml:2: YAML syntax error"):
        load_allowlist(write("bad.yaml", "files: [\n"))
    with pytest.raises(CaseLoadError, match=r"^x\.yaml:1: files: expected a list"):
        load_allowlist(write("x.yaml", "files: 3\n"))


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev are POSIX")
def test_an_allowlist_linked_to_dev_zero_or_a_fifo_is_a_located_error_within_5_s() -> None:
    Path("zero.yaml").symlink_to("/dev/zero")
    os.mkfifo("pipe.yaml")
    for name, shown in (
        ("zero.yaml", "a character device (a link to /dev/zero)"),
        ("pipe.yaml", "a FIFO (named pipe)"),
    ):
        with pytest.raises(CaseLoadError) as refused:
            _within_5_s(lambda name=name: load_allowlist(Path(name)))
        assert str(refused.value) == f"{name}: not read: {shown}, not a regular file"


def test_evidence_outside_the_allowlist_is_an_error_inline_and_in_gold() -> None:
    allowlist = load_allowlist(write("gold/allowlist.yaml", ALLOWLIST))
    write(
        "cases/dev.yaml",
        """
        - id: B01
          category: exact_lookup
          prompt_en: "SLA?"
          required_evidence:
            - file_id: contrat
              filename: contrat-service.pdf
            - file_id: secret
        - id: B02
          category: exact_lookup
          prompt_en: "Pressure?"
        - id: B03
          category: exact_lookup
          prompt_en: "Fine"
          required_evidence:
            - filename: fiche.xlsx
        """,
    )
    write(
        "gold/evidence.yaml",
        """
        B02:
          - file_id: fiche
            filename: other.xlsx
          - filename: nowhere.pdf
        """,
    )
    catalog = load_catalog(Path("cases"), Path("gold"), allowlist=allowlist)
    assert messages(catalog.errors) == [
        "cases/dev.yaml:7: case B01: required_evidence[1]: file_id 'secret' is not in the"
        " allow-list",
        "cases/dev.yaml:8: case B02: required_evidence: the gold entry at gold/evidence.yaml:1"
        " is invalid (see the error there)",
        "gold/evidence.yaml:2: case B02: required_evidence[0]: file_id 'fiche' is allow-listed"
        " as 'fiche.xlsx', not 'other.xlsx'",
        "gold/evidence.yaml:4: case B02: required_evidence[1]: filename 'nowhere.pdf' is not in"
        " the allow-list",
    ]
    assert [c.case.id for c in catalog.cases()] == ["B03"]


# --------------------------------------------------------------------------- speed


def test_500_cases_with_gold_load_through_libyaml(tmp_path: Path) -> None:
    cases, evidence, answers = [], {}, {}
    for i in range(500):
        case_id = f"P{i:03d}"
        cases.append(
            {
                "id": case_id,
                "category": "technical_table",
                "prompt_en": f"What is the maximum pressure of model {i}?",
                "prompts": {"fr": f"Quelle est la pression maximale du modèle {i} ?"},
                "tags": ["table"],
            }
        )
        evidence[case_id] = [
            {
                "file_id": f"f{i % 6}",
                "filename": f"doc{i % 6}.pdf",
                "page": i % 9 + 1,
                "section": "3.2 Limites",
                "table_cells": {"header": "Pression", "row": f"M{i}", "unit": "bar"},
            }
        ]
        answers[case_id] = {"required_claims": [{"text": "12 bar", "number": 12}, "model"]}
    Path("cases").mkdir()
    Path("gold").mkdir()
    Path("cases/development.yaml").write_text(yaml.safe_dump(cases[:400]), encoding="utf-8")
    Path("cases/holdout.yaml").write_text(yaml.safe_dump(cases[400:]), encoding="utf-8")
    Path("gold/evidence.yaml").write_text(yaml.safe_dump(evidence), encoding="utf-8")
    Path("gold/answers.yaml").write_text(yaml.safe_dump(answers), encoding="utf-8")

    catalog = load_catalog(Path("cases"), Path("gold"))
    assert catalog.errors == []
    assert len(catalog.cases(["development"])) == 400
    assert len(catalog.cases(["holdout"])) == 100
    # how fast is bench_targets.py's "collection" target (20,000 items); here, that the
    # files are composed by libyaml, not the pure-Python constructor ten times slower
    from pytest_ragv2.config import located_yaml

    if yaml.__with_libyaml__:
        assert located_yaml._Loader is yaml.CSafeLoader


def test_evidence_of_a_turn_outside_the_allowlist_is_located() -> None:
    allowlist = Allowlist((AllowedFile("contrat", "contrat.pdf", None),))
    write(
        "cases/dev.yaml",
        """
        - id: M01
          category: multi_turn
          required_evidence: []
          turns:
            - prompts: {fr: "Bonjour"}
            - prompts: {fr: "Et le SLA ?"}
              required_evidence:
                - file_id: contrat
                - file_id: brouillon
        """,
    )
    catalog = load_catalog(Path("cases"), None, allowlist=allowlist)
    assert messages(catalog.errors) == [
        "cases/dev.yaml:9: case M01: turns[1].required_evidence[1]: file_id 'brouillon' is not"
        " in the allow-list"
    ]


# --------------------------------------------------------------------------- gold as used


def test_an_invalid_claim_pattern_is_a_located_error_inline_and_in_gold() -> None:
    write(
        "cases/dev.yaml",
        """
        - id: B01
          category: exact_lookup
          prompt_en: "What is the SLA?"
          required_evidence: []
          expected_answer:
            required_claims:
              - text: "16 bar"
                pattern: "16 (bar"
        - id: B02
          category: exact_lookup
          prompt_en: "And the pressure?"
          required_evidence: []
        """,
    )
    write(
        "gold/answers.yaml",
        """
        B02:
          forbidden_claims:
            - text: "a lot"
              pattern: "a [lot"
        """,
    )
    catalog = load_catalog(Path("cases"), Path("gold"))
    assert messages(catalog.errors) == [
        "cases/dev.yaml:8: case B01: expected_answer.required_claims[0].pattern:"
        " invalid regular expression: missing ), unterminated subpattern at position 3",
        "cases/dev.yaml:9: case B02: expected_answer: the gold entry at gold/answers.yaml:1"
        " is invalid (see the error there)",
        "gold/answers.yaml:4: case B02: expected_answer.forbidden_claims[0].pattern:"
        " invalid regular expression: unterminated character set at position 2",
    ]
    assert catalog.cases() == []


def test_a_claim_pattern_is_compiled_as_the_scorer_compiles_it() -> None:
    # typographic quotes are folded before compiling, as in the answer; flags as scored
    assert Claim(text="x", pattern="’(a|b)").pattern == "’(a|b)"
    with pytest.raises(ValueError, match="invalid regular expression"):
        Claim(text="x", pattern="(?P<a>x)(?P<a>y)")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", 1, "no case: the file is empty or only comments"),
        ("# cases to come\n# (none yet)\n", 1, "no case: the file is empty or only comments"),
        ("[]\n", 1, "no case: the list of cases is empty"),
        ("split: holdout\ncases: []\n", 2, "no case: the list of cases is empty"),
    ],
)
def test_a_file_without_cases_is_a_located_warning_not_an_error(
    text: str, line: int, message: str
) -> None:
    write("cases/development.yaml", GOOD_CASE)
    Path("cases/empty.yaml").write_text(text, encoding="utf-8")
    catalog = load_catalog(Path("cases"), None)
    assert catalog.errors == []
    assert messages(catalog.warnings) == [f"cases/empty.yaml:{line}: {message}"]
    assert warning_text(catalog.warnings[0]) == f"cases/empty.yaml:{line}: warning: {message}"
    assert [c.case.id for c in catalog.cases()] == ["B01"]


def test_an_invalid_split_is_a_located_error_that_excludes_the_file() -> None:
    write("cases/development.yaml", GOOD_CASE)
    write(
        "cases/extra.yaml",
        """
        split: holdot
        cases:
          - id: B02
            category: exact_lookup
            prompt_en: "What is the SLA?"
            required_evidence: []
          - id: B03
            category: exact_lookup
            prompt_en: "What is the SLA?"
            required_evidence: [{file_id: contrat, pages: 2}]
        """,
    )
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/extra.yaml:1: split: expected one of development, holdout (got 'holdot');"
        " the file's cases are not run",
        # its cases are still checked
        "cases/extra.yaml:10: case B03: required_evidence[0].pages: unknown field"
        " (did you mean 'page'?)",
    ]
    extra = next(f for f in catalog.files if f.path.name == "extra.yaml")
    assert extra.excluded
    assert extra.cases == []
    assert [c.case.id for c in catalog.cases()] == ["B01"]


def test_an_unknown_category_is_a_located_warning_with_a_suggestion(tmp_path: Path) -> None:
    from pytest_ragv2.gold.cases import load_catalog

    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "development.yaml").write_text(
        "- id: X01\n  category: exact_lookpu\n  prompt_en: 'q?'\n  required_evidence: []\n"
        "- id: X02\n  category: field_service\n  prompt_en: 'q?'\n  required_evidence: []\n"
        "- id: X03\n  category: technical_table\n  prompt_en: 'q?'\n  required_evidence: []\n"
    )
    catalog = load_catalog(cases, None)
    assert catalog.errors == []  # a warning: nothing fails, the cases run
    assert [str(w) for w in catalog.warnings] == [
        f"{cases / 'development.yaml'}:1: case X01: category: unknown category 'exact_lookpu' "
        "(did you mean exact_lookup?); declare it in the configuration's categories to use a "
        "category of your own",
        f"{cases / 'development.yaml'}:5: case X02: category: unknown category "
        "'field_service'; declare it in the configuration's categories to use a category of "
        "your own",
    ]
    declared = load_catalog(cases, None, categories=["field_service"])
    assert [w.case_id for w in declared.warnings] == ["X01"]


# --- a case file is read one case at a time ----------------------------------------------


def test_a_case_file_is_composed_one_case_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import weakref

    import pytest_ragv2.gold.cases as cases

    write("cases/dev.yaml", "".join(GOOD_CASE.replace("B01", f"B{n:02d}") for n in range(5)))
    nodes: list[weakref.ref[yaml.Node]] = []
    alive_before: list[int] = []
    load_case = cases._load_case

    def watching(path: Path, raw: object, node: yaml.Node, *args: object) -> object:
        # when a case is loaded, no earlier case's node tree is held anywhere
        alive_before.append(sum(ref() is not None for ref in nodes))
        nodes.append(weakref.ref(node))
        return load_case(path, raw, node, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(cases, "_load_case", watching)
    loaded = load_case_file(Path("cases/dev.yaml"))
    assert [c.case.id for c in loaded.cases] == [f"B{n:02d}" for n in range(5)]
    assert alive_before == [0, 0, 0, 0, 0]


def test_a_split_key_after_the_cases_applies_to_them() -> None:
    write(
        "cases/dev.yaml",
        """
        cases:
          - id: H01
            category: exact_lookup
            prompt_en: "What?"
            required_evidence: []
        split: holdout
        """,
    )
    [loaded] = load_case_file(Path("cases/dev.yaml")).cases
    assert loaded.split == "holdout"


def test_a_syntax_error_after_some_cases_loses_the_file_s_cases_and_their_ids() -> None:
    write("cases/dev.yaml", GOOD_CASE + GOOD_CASE.replace("B01", "B02") + "- id: [unclosed\n")
    known: dict[str, SourceLocation] = {"A01": SourceLocation(Path("cases/a.yaml"), 1)}
    loaded = load_case_file(Path("cases/dev.yaml"), known_ids=known)
    assert not loaded.readable
    assert (loaded.cases, loaded.case_ids) == ([], {})
    assert [e.line for e in loaded.errors] == [15]
    assert list(known) == ["A01"]  # B01 and B02 are free for another file to define


def test_a_key_of_the_file_s_mapping_written_twice_is_located() -> None:
    write(
        "cases/dev.yaml",
        """
        split: development
        cases:
          - id: B01
            category: exact_lookup
            prompt_en: "What?"
            required_evidence: []
        cases: []
        """,
    )
    loaded = load_case_file(Path("cases/dev.yaml"))
    assert messages(loaded.errors) == [
        "cases/dev.yaml:7: cases: duplicate key (first given at line 2)"
    ]


def test_a_tagged_or_anchored_list_of_cases_still_loads() -> None:
    write(
        "cases/dev.yaml",
        """
        split: development
        cases: &all
          - id: B01
            category: exact_lookup
            prompt_en: "What?"
            required_evidence: []
        """,
    )
    write("cases/root.yaml", "!!seq\n" + textwrap.dedent(GOOD_CASE).replace("B01", "B02"))
    catalog = load_catalog(Path("cases"), None)
    assert catalog.errors == []
    assert [c.case.id for c in catalog.cases()] == ["B01", "B02"]


def test_cases_given_the_same_fields_share_one_set_of_their_names() -> None:
    import pydantic

    write(
        "cases/development.yaml",
        GOOD_CASE
        + """
- id: B02
  category: exact_lookup
  prompt_en: "Who signs?"
  required_evidence:
    - file_id: contrat
      page: 3
- id: B03
  category: exact_lookup
  prompt_en: "When?"
  notes: "a field the others were not given"
  required_evidence:
    - file_id: contrat
      section: "2.1"
""",
    )
    catalog = load_catalog(Path("cases"), None)
    assert catalog.errors == []
    first, second, third = (loaded.case for loaded in catalog.cases(["development"]))
    assert first.model_fields_set is second.model_fields_set
    assert first.evidence[0].model_fields_set is second.evidence[0].model_fields_set
    assert third.model_fields_set == first.model_fields_set | {"notes"}
    assert third.evidence[0].model_fields_set == {"file_id", "section"}
    names = set(first.model_fields_set)
    copied = first.model_copy(update={"notes": "added"})
    assert "notes" in copied.model_fields_set  # the copy's own set grew, not the shared one
    assert first.model_fields_set == names
    assert second.model_fields_set == names
    with pytest.raises(pydantic.ValidationError):
        second.id = "B09"  # type: ignore[misc]  # frozen: the shared set is never added to
    assert second.model_fields_set == names


def test_locations_and_numbers_are_written_as_numbers_within_bounds() -> None:
    """``page: 1e30``, ``page: true`` and ``tolerance: -1`` were accepted (a 31-digit page,
    page 1, a negative tolerance); each is now a located schema error."""
    write(
        "cases/dev.yaml",
        """
        - id: B01
          category: exact_lookup
          prompt_en: "x"
          required_evidence:
            - {file_id: a, page: 1.0e+30}
            - {file_id: a, page: true}
            - {file_id: a, page: 10000001}
            - {file_id: a, page: 2, row: true}
          expected_answer:
            required_claims:
              - {text: "3 bar", number: 3, unit: bar, tolerance: -1}
              - {text: "3 bar", number: .nan}
              - {text: "3 bar", number: true}
          expect_tools:
            search_knowledge_base: {calls: true}
        - id: B02
          category: exact_lookup
          prompt_en: "y"
          required_evidence:
            - {file_id: a, page: 10000000, row: 3}
          expected_answer:
            required_claims: [{text: "3 bar", number: 3, unit: bar, tolerance: 0.5}]
        """,
    )
    catalog = load_catalog(Path("cases"), None)
    assert messages(catalog.errors) == [
        "cases/dev.yaml:5: case B01: required_evidence[0].page: Input should be a valid integer"
        " (got 1e+30)",
        "cases/dev.yaml:6: case B01: required_evidence[1].page: Input should be a valid integer"
        " (got True)",
        "cases/dev.yaml:7: case B01: required_evidence[2].page: Input should be less than or"
        " equal to 10000000 (got 10000001)",
        "cases/dev.yaml:8: case B01: required_evidence[3].row: Input should be a valid integer"
        " or Input should be a valid string (got True)",
        "cases/dev.yaml:11: case B01: expected_answer.required_claims[0].tolerance: Input should"
        " be greater than or equal to 0 (got -1)",
        "cases/dev.yaml:12: case B01: expected_answer.required_claims[1].number: Input should"
        " be a finite number (got nan)",
        "cases/dev.yaml:13: case B01: expected_answer.required_claims[2].number: Input should"
        " be a valid number (got True)",
        "cases/dev.yaml:14: case B01: expect_tools.tools.search_knowledge_base.calls: Input"
        " should be a valid integer (got True)",
    ]
    assert [loaded.case.id for loaded in catalog.cases()] == ["B02"]


def _within_5_s(call: Callable[[], Any]) -> Any:
    from tests.config.test_inputs import REFUSED_WITHIN_S, within

    return within(REFUSED_WITHIN_S, call)


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev are POSIX")
@pytest.mark.parametrize(
    ("target", "shown"),
    [
        ("/dev/zero", "a character device (a link to /dev/zero), not a regular file"),
        ("/dev/urandom", "a character device (a link to /dev/urandom), not a regular file"),
        ("fifo", "a FIFO (named pipe), not a regular file"),
        ("nowhere.yaml", "a symbolic link to nothing (nowhere.yaml)"),
    ],
)
def test_a_case_or_gold_file_that_is_no_regular_file_is_a_located_error_within_5_s(
    target: str, shown: str
) -> None:
    """A pull request can carry a link to /dev/zero or /dev/urandom, or a FIFO: read, the
    session hung with no message. Such a file is now refused unopened, by name; the other
    files load."""
    write("cases/a_ok.yaml", GOOD_CASE)
    write("gold/evidence.yaml", "{}\n")
    for path in (Path("cases/b_pulled.yaml"), Path("gold/answers.yaml")):
        if target == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to(target)
    catalog = _within_5_s(lambda: load_catalog(Path("cases"), Path("gold")))
    assert messages(catalog.errors) == [
        f"cases/b_pulled.yaml: not read: {shown}",
        f"gold/answers.yaml: not read: {shown}",
    ]
    assert [loaded.case.id for loaded in catalog.cases()] == ["B01"]
    assert not catalog.files[1].readable


def test_a_case_file_larger_than_its_limit_is_refused_unread() -> None:
    from pytest_ragv2.config.inputs import CASE_FILE_MAX_BYTES

    write("cases/a_ok.yaml", GOOD_CASE)
    with open("cases/b_huge.yaml", "wb") as stream:
        stream.truncate(CASE_FILE_MAX_BYTES + 1)  # sparse: no disk space taken
    catalog = _within_5_s(lambda: load_catalog(Path("cases"), None))
    assert messages(catalog.errors) == [
        "cases/b_huge.yaml: not read: larger than 32 MB, the limit of a case file"
    ]
    assert [loaded.case.id for loaded in catalog.cases()] == ["B01"]


def test_a_case_file_that_is_not_utf8_is_located_at_its_line() -> None:
    Path("cases").mkdir()
    Path("cases/dev.yaml").write_bytes(GOOD_CASE.lstrip("\n").encode() + b"# caf\xe9\n")
    [error] = load_catalog(Path("cases"), None).errors
    assert str(error) == (
        "cases/dev.yaml:7: not UTF-8 text: byte 0xe9 (invalid continuation byte); save the "
        "file as UTF-8"
    )
