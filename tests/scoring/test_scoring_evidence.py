"""Evidence matching: file identity, the granularity ladder, section, table and row rules."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest

from pytest_ragv2.gold.schema import Case, Evidence, TableCells
from pytest_ragv2.scoring.evidence import (
    FULL_STEP,
    GRANULARITIES,
    match_step,
    matches,
    same_file,
    section_matches,
    table_integrity,
)
from pytest_ragv2.scoring.retrieval import score_retrieval
from pytest_ragv2.systems.outputs import RetrievedItem


def item(**fields: Any) -> RetrievedItem:
    fields.setdefault("rank", 1)
    fields.setdefault("text", "")
    return RetrievedItem(**fields)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


# --- file identity -----------------------------------------------------------------------


def test_file_id_decides_when_both_sides_have_one() -> None:
    gold = Evidence(file_id="f-1", filename="Fiche.pdf")
    assert same_file(item(file_id="f-1", filename="Autre.pdf"), gold)
    # Same filename, different file_id: two uploads of one name are different files.
    assert not same_file(item(file_id="f-2", filename="Fiche.pdf"), gold)


def test_filename_is_used_when_a_file_id_is_missing_on_either_side() -> None:
    assert same_file(item(file_id="f-9", filename="fiche.PDF"), Evidence(filename="Fiche.pdf"))
    assert same_file(item(filename="Fiche.pdf"), Evidence(file_id="f-1", filename="fiche.pdf"))
    assert not same_file(item(filename="Fiche.pdf"), Evidence(file_id="f-1"))


def test_item_without_identity_never_matches() -> None:
    assert not same_file(item(), Evidence(filename="Fiche.pdf"))
    assert not same_file(item(page=1), Evidence(file_id="f-1"))


@pytest.mark.parametrize(
    ("retrieved", "gold"),
    [
        (nfd("prüfbericht_größe.pdf"), "Prüfbericht_Größe.PDF"),  # decomposed umlauts
        ("PRÜFBERICHT_GRÖSSE.pdf", "Prüfbericht_Größe.pdf"),  # ß casefolds to ss
        ("/tmp/rag/uploads/Fiche Sécurité.docx", "FICHE SÉCURITÉ.DOCX"),  # server path
        ("C:\\Données\\Fiche Sécurité.docx", nfd("fiche sécurité.docx")),  # Windows path
    ],
)
def test_filenames_compare_by_basename_nfc_casefolded(retrieved: str, gold: str) -> None:
    assert same_file(item(filename=retrieved), Evidence(filename=gold))


def test_different_accents_are_different_files() -> None:
    assert not same_file(item(filename="Resume.pdf"), Evidence(filename="Résumé.pdf"))


# --- the granularity ladder ----------------------------------------------------------------

GOLD_ALL = Evidence(filename="Tarifs.xlsx", page=2, section="3.2", table="Tarifs 2024", row="Pro")


@pytest.mark.parametrize(
    ("fields", "expected_step"),
    [
        ({"filename": "Autre.xlsx", "page": 2}, 0),
        ({"filename": "tarifs.xlsx"}, 1),  # no page: only the document matches
        ({"filename": "tarifs.xlsx", "page": 3, "section": "3.2"}, 1),
        ({"filename": "tarifs.xlsx", "page": 2, "section": "3.3"}, 2),
        ({"filename": "tarifs.xlsx", "page": 2, "section": "3.2 Prix"}, 3),
        (
            {"filename": "tarifs.xlsx", "page": 2, "section": "3.2", "table": "Tarifs 2023"},
            3,
        ),
        (
            {
                "filename": "tarifs.xlsx",
                "page": 2,
                "section": "3.2",
                "table": "TARIFS\u00a02024",
                "row_key": "Basic",
            },
            3,
        ),
        (
            {
                "filename": "tarifs.xlsx",
                "page": 2,
                "section": "Grille > 3.2 Prix",
                "table": "tarifs 2024",
                "row_key": "pro.",
            },
            4,
        ),
    ],
)
def test_ladder_steps(fields: dict[str, Any], expected_step: int) -> None:
    found = item(**fields)
    assert match_step(found, GOLD_ALL) == expected_step
    assert [matches(found, GOLD_ALL, level) for level in GRANULARITIES] == [
        expected_step > i for i in range(4)
    ]
    assert matches(found, GOLD_ALL) == (expected_step == 4)
    assert matches(found, GOLD_ALL, "full") == matches(found, GOLD_ALL, "row")


def test_finer_level_degrades_to_what_the_gold_gives() -> None:
    gold = Evidence(filename="Fiche.pdf")  # document-level gold
    found = item(filename="fiche.pdf", page=9, section="7 Annexe")
    assert all(matches(found, gold, level) for level in ("document", "page", "section", "row"))
    assert matches(found, gold)
    page_gold = Evidence(filename="Fiche.pdf", page=9)
    assert matches(found, page_gold, "section")
    assert matches(found, page_gold, "full")


def test_a_field_the_gold_gives_but_the_item_lacks_never_matches() -> None:
    assert not matches(item(filename="Fiche.pdf"), Evidence(filename="Fiche.pdf", page=1))
    assert not matches(
        item(filename="Fiche.pdf", page=1), Evidence(filename="Fiche.pdf", section="Intro")
    )
    assert not matches(item(filename="T.xlsx"), Evidence(filename="T.xlsx", table="Feuil1"))
    assert not matches(item(filename="T.xlsx"), Evidence(filename="T.xlsx", row=3))


# --- table and row rules -------------------------------------------------------------------


def test_integer_row_matches_the_row_number_only() -> None:
    gold = Evidence(filename="T.xlsx", table="Feuil1", row=4)
    assert matches(item(filename="T.xlsx", table="feuil1", row=4), gold)
    assert not matches(item(filename="T.xlsx", table="feuil1", row=5), gold)
    assert not matches(item(filename="T.xlsx", table="feuil1", row_key="4"), gold)


def test_string_row_matches_the_row_key_or_the_row_number_text() -> None:
    label = Evidence(filename="T.xlsx", row="Modèle NX-200")
    assert matches(item(filename="T.xlsx", row=7, row_key=" modèle  NX-200 "), label)
    assert not matches(item(filename="T.xlsx", row=7, row_key="Modèle NX-2000"), label)
    number_text = Evidence(filename="T.xlsx", row="7")
    assert matches(item(filename="T.xlsx", row=7), number_text)
    assert not matches(item(filename="T.xlsx", row=8), number_text)


def test_row_without_table_in_gold_ignores_the_table() -> None:
    gold = Evidence(filename="T.xlsx", row=2)
    assert matches(item(filename="T.xlsx", table="Anything", row=2), gold)


# --- section rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "retrieved", "expected"),
    [
        ("3.2 Limites", "3.2 Limites", True),
        ("3.2 limites.", "3.2  LIMITES", True),  # normalised, trailing punctuation
        ("Chapitre 3 > 3.2 Limites", "Chapitre 3 > 3.2 Limites", True),  # whole path
        ("3.2 Limites", "Chapitre 3 > 3.2 Limites > Tableau", True),  # one component
        ("3.2", "3.2 Limites", True),  # clause number = leading number
        ("3.2", "Chapitre 3 > 3.2 Limites de pression", True),
        ("3.2", "3.21 Débit", False),  # 3.21 is not 3.2
        ("3.2", "3.2.1 Débit", False),  # a sub-clause is not the clause
        ("3", "3.2 Limites", False),
        ("3.2.", "3.2. Limites", True),
        ("§ 4", "§4 Haftung", True),
        ("§4", "Teil A > § 4 Haftung", True),
        ("§ 4", "§ 41 Schluss", False),
        ("Article 7", "Art. 7 – Champ d'application", True),
        ("Artikel 7", "Article 7", True),
        ("Article 7", "§ 7 Geltungsbereich", False),  # different clause words
        ("7", "Article 7 Scope", True),  # clause word on one side only
        ("Kapitel 5", "5 Wartung", True),
        ("4", "4a Sonderfälle", False),
        ("Limites", "3.2 Limites", True),  # title without its number
        ("3.2 Limites", "Limites", True),
        ("3.2 Limites", "3.2 Grenzwerte", False),  # same number, different titles
        ("Limites", "Limites de pression", False),
        ("Sécurité", "SÉCURITÉ :", True),
        ("Sicherheit > Grenzwerte", "Handbuch > Sicherheit > Grenzwerte > Druck", True),
        ("Sicherheit > Druck", "Handbuch > Sicherheit > Grenzwerte > Druck", False),
        ("Préambule", "", False),
    ],
)
def test_section_rule(gold: str, retrieved: str, expected: bool) -> None:
    assert section_matches(gold, retrieved) is expected


def test_section_uses_no_break_and_narrow_no_break_spaces_as_spaces() -> None:
    assert section_matches("Article 7", "Article\u00a07")
    assert section_matches("§ 4", "§\u202f4 Haftung")


# --- table integrity -----------------------------------------------------------------------


def test_table_integrity_needs_every_named_cell_in_one_text() -> None:
    cells = TableCells(header="Pression maximale", row="NX-200", unit="bar", footnote="(1)")
    text = "Modèle | PRESSION  MAXIMALE\nNX-200 | 16 bar (1)\n(1) à 20 °C"
    assert table_integrity(item(text=text), cells)
    assert not table_integrity(item(text="Modèle | Pression maximale\nNX-200 | 16 bar"), cells)


def test_table_integrity_normalises_no_break_spaces_and_compatibility_forms() -> None:
    cells = TableCells(header="Capacité", row="Serveur A", unit="m3/h")
    # U+202F narrow no-break space, U+00A0 no-break space, U+FB01 "fi" ligature untouched.
    text = "CAPACITÉ\u202f: Serveur\u00a0A — 1\u202f000 m3/h"
    assert table_integrity(item(text=text), cells)
    assert table_integrity(item(text="ﬁchier"), TableCells(header="fichier"))  # NFKC ligature


def test_table_integrity_with_no_named_cell_is_trivially_true() -> None:
    assert table_integrity(item(text=""), TableCells())


# --- anchors ----------------------------------------------------------------------------


def _anchored(**fields: object) -> Evidence:
    return Evidence(
        file_id="sla",
        section="4. Niveaux de service > 4.1 Disponibilité",
        page=2,
        anchor="disponibilité mensuelle de 99,7 %",
        **fields,  # type: ignore[arg-type]
    )


def test_anchor_stands_in_for_missing_metadata() -> None:
    item = RetrievedItem(
        rank=1, file_id="sla", text="… une disponibilité\u00a0mensuelle de 99,7 % …"
    )
    assert match_step(item, _anchored()) == FULL_STEP
    assert match_step(item, _anchored(), anchors=False) == 1


def test_metadata_wins_over_the_anchor() -> None:
    wrong_page = RetrievedItem(
        rank=1, file_id="sla", page=3, text="disponibilité mensuelle de 99,7 %"
    )
    assert match_step(wrong_page, _anchored()) == 1
    wrong_section = RetrievedItem(
        rank=1,
        file_id="sla",
        page=2,
        section="5. Pénalités",
        text="disponibilité mensuelle de 99,7 %",
    )
    assert match_step(wrong_section, _anchored()) == 2


def test_no_anchor_in_text_means_no_location_match() -> None:
    item = RetrievedItem(rank=1, file_id="sla", text="disponibilité mensuelle de 99,5 %")
    assert match_step(item, _anchored()) == 1
    assert match_step(item, Evidence(file_id="sla", section="4.1")) == 2  # page: not asked


def test_exact_metadata_ignores_anchors() -> None:
    case = Case(
        id="E1",
        category="exact_lookup",
        prompt_en="q",
        required_evidence=[_anchored()],
    )
    text_only = RetrievedItem(rank=1, file_id="sla", text="disponibilité mensuelle de 99,7 %")
    score = score_retrieval(case, [text_only])
    assert score.recall[1] == 1.0
    assert score.exact_metadata is False
