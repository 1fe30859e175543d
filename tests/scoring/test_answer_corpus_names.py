"""An identifier or filename the passages do not hold but the corpus does is real, not
invented: no ``fabricated_identifier`` veto, and Grounding holds ("nothing asserted beyond
the corpus"). An identifier found nowhere in the corpus, or one given in place of a claim's
own value, or a value the gold forbids, is still made up."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import pytest

from pytest_ragv2.gold.corpus_names import (
    CorpusNamesWarning,
    corpus_names_source,
    read_corpus_names,
)
from pytest_ragv2.layers.chat.run import scoring_options
from pytest_ragv2.scoring.answer_records import AnswerScore
from pytest_ragv2.scoring.answers import score_transcript
from pytest_ragv2.scoring.grounding import CorpusNames, Fact
from pytest_ragv2.scoring.values import read_values
from tests.scoring.test_answer_scoring import NO_LANGID, item, kinds, one_turn
from tests.scoring.test_answer_verdicts import gold

POLICY_TEXT = (
    "Policy HR-07, version 2.0, effective 1 January 2026. Owner: People & Culture.\n\n"
    "4. Remote days\n\nEmployees may work remotely up to 2 days per week. Unused remote days "
    "do not carry over to the following week."
)
SECTION = item(
    "remote-work-policy",
    "docx",
    "4. Remote days. Employees may work remotely up to 2 days per week. Unused remote days "
    "do not carry over to the following week.",
)
CORPUS = CorpusNames.of([("remote-work-policy.docx", POLICY_TEXT), ("kits.md", "Kit WS-30-6")])
CASE = gold(
    "NAMES",
    "How many remote days per week, and do unused days carry over?",
    "en",
    required=[
        {"text": "up to 2 days per week", "kind": "quantity", "value": "2 days"},
        {"text": "unused days do not carry over", "any_of": ["not carry over"]},
    ],
    forbidden=[{"text": "kit WS-30-6", "kind": "identifier", "value": "WS-30-6"}],
)


def _score(answer: str, corpus: CorpusNames | None = CORPUS) -> AnswerScore:
    options = dataclasses.replace(
        NO_LANGID, corpus_names=None if corpus is None else (lambda: corpus)
    )
    prompt = CASE.all_prompts()["en"]
    return score_transcript(
        CASE, "en", one_turn(prompt, answer, evidence=[SECTION]), options=options
    )


def _fact(text: str) -> Fact:
    (value,) = read_values(text, "en")
    return Fact("identifier", value.text, value.span, False, value)


def test_the_corpus_holds_an_identifier_whatever_its_separators() -> None:
    assert CORPUS.holds(_fact("HR-07"))
    assert CORPUS.holds(_fact("HR 07"))
    assert not CORPUS.holds(_fact("HR-08"))
    assert CORPUS.holds(Fact("filename", "remote-work-policy.docx", (0, 23), False))
    assert CORPUS.holds(Fact("filename", "Remote-Work-Policy.pdf", (0, 22), False))  # stem
    assert not CORPUS.holds(Fact("filename", "remote-work-policy-v3.docx", (0, 26), False))


def test_a_real_reference_beyond_the_passages_is_no_invention() -> None:
    answer = (
        "Under policy HR-07 you may work remotely up to 2 days per week [1]; unused remote "
        "days do not carry over [1]."
    )
    scored = _score(answer)
    assert "fabricated_identifier" not in kinds(scored)
    assert scored.rubric["Grounding"].verdict == "PASS"
    assert scored.rubric["Accuracy"].verdict == "PASS"
    # without the corpus, the passages alone decide: the reference looks invented
    assert "fabricated_identifier" in kinds(_score(answer, corpus=None))


def test_an_identifier_found_nowhere_is_still_invented() -> None:
    scored = _score(
        "Under policy HR-12 you may work remotely up to 2 days per week [1]; unused remote "
        "days do not carry over [1]."
    )
    assert "fabricated_identifier" in kinds(scored)


def test_a_value_the_gold_forbids_is_made_up_here_even_if_the_corpus_holds_it() -> None:
    scored = _score(
        "Up to 2 days per week [1], and unused days do not carry over [1]; ask for kit WS-30-6."
    )
    assert "fabricated_identifier" in kinds(scored)
    assert scored.rubric["Accuracy"].verdict == "FAIL"


def test_the_corpus_is_read_only_when_an_answer_needs_it() -> None:
    reads: list[int] = []

    def names() -> CorpusNames:
        reads.append(1)
        return CORPUS

    options = dataclasses.replace(NO_LANGID, corpus_names=names)
    prompt = CASE.all_prompts()["en"]
    answer = "Up to 2 days per week [1]; unused days do not carry over [1]."
    score_transcript(CASE, "en", one_turn(prompt, answer, evidence=[SECTION]), options=options)
    assert reads == []
    answer = "Policy HR-07: up to 2 days per week [1]; unused days do not carry over [1]."
    score_transcript(CASE, "en", one_turn(prompt, answer, evidence=[SECTION]), options=options)
    assert reads == [1]


def test_the_corpus_directory_is_read_with_the_demo_parsers(tmp_path: Path) -> None:
    docx = pytest.importorskip("docx")
    document = docx.Document()
    document.add_paragraph("Policy HR-07, version 2.0.")
    document.save(tmp_path / "policy.docx")
    (tmp_path / "notes.md").write_text("# Notes\n\nSee datasheet DB-TVS75-DE-09.\n", "utf-8")
    (tmp_path / "facts.yaml").write_text("secret: ID-999-Z\n", "utf-8")  # not a document
    (tmp_path / "broken.pdf").write_bytes(b"not a pdf at all")
    read_corpus_names.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = corpus_names_source(tmp_path)
        assert source is not None
        names = source()
    assert names.holds(_fact("HR-07"))
    assert names.holds(_fact("DB-TVS75-DE-09"))
    assert not names.holds(_fact("ID-999-Z"))
    assert names.holds(Fact("filename", "policy.docx", (0, 11), False))
    (warning,) = [w for w in caught if issubclass(w.category, CorpusNamesWarning)]
    assert "broken.pdf" in str(warning.message)
    assert str(tmp_path) not in str(warning.message)  # a path relative to the corpus


def test_the_option_switches_the_lookup_off(tmp_path: Path) -> None:
    assert scoring_options({}, corpus=tmp_path).corpus_names is not None
    assert scoring_options({"corpus_names": False}, corpus=tmp_path).corpus_names is None
    assert scoring_options({}, corpus=tmp_path / "missing").corpus_names is None
    assert scoring_options({}).corpus_names is None
    with pytest.raises(ValueError, match="corpus_names must be true or false"):
        scoring_options({"corpus_names": "yes"}, corpus=tmp_path)


def test_a_corpus_that_cannot_be_listed_is_warned_of_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_ragv2.run.demo as bridge

    def fail(corpus: Path) -> None:
        raise PermissionError(f"cannot list {corpus.name}")

    monkeypatch.setattr(bridge, "corpus_documents", fail)
    read_corpus_names.cache_clear()
    with pytest.warns(CorpusNamesWarning, match="could not be read"):
        names = read_corpus_names(tmp_path)
    assert names == CorpusNames()
    read_corpus_names.cache_clear()
