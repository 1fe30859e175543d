"""Layer-A retrieval metrics against hand-computed values."""

from __future__ import annotations

import json
import math
import random
import unicodedata
from typing import Any

import pytest

from pytest_ragv2.gold.schema import Case, Evidence
from pytest_ragv2.scoring.retrieval import (
    UNIDENTIFIED,
    count_duplicates,
    near_identical,
    score_retrieval,
    word_shingles,
)
from pytest_ragv2.systems.outputs import RetrievedItem


def case(category: str = "semantic", evidence: list[dict[str, Any]] | None = None) -> Case:
    return Case.model_validate(
        {"id": "T1", "category": category, "prompt_en": "q", "required_evidence": evidence}
    )


def item(rank: int, **fields: Any) -> RetrievedItem:
    fields.setdefault("text", f"chunk number {rank} with its own words")
    return RetrievedItem(rank=rank, **fields)


FICHE = {"filename": "Fiche_Nimbus.pdf", "page": 3, "section": "3.2"}
TARIFS = {
    "file_id": "f-tarifs",
    "table": "Tarifs",
    "row": "Pro",
    "table_cells": {"header": "Prix mensuel", "row": "Pro", "unit": "EUR"},
}


def worked_example() -> tuple[Case, list[RetrievedItem]]:
    """Five items, given out of rank order:

    pos 1: Fiche, page 4 (wrong page)         → FICHE at document level only
    pos 2: Tarifs row Pro with all cells       → TARIFS full; table intact
    pos 3: another file                        → irrelevant
    pos 4: Fiche p.3, path "... > 3.2 Limites" → FICHE full
    pos 5: same location as pos 4              → duplicate (location)
    """
    items = [
        item(4, filename="fiche_nimbus.pdf", page=3, section="Chapitre 3 > 3.2 Limites"),
        item(1, filename="Fiche_Nimbus.pdf", page=4, section="3.2 Limites"),
        item(5, filename="FICHE_NIMBUS.pdf", page=3, section="chapitre 3 > 3.2 limites."),
        item(3, file_id="f-autre", filename="Autre.pdf", page=1),
        item(
            2,
            file_id="f-tarifs",
            table="Tarifs",
            row=2,
            row_key="Pro",
            text="Formule | Prix mensuel\nPro | 49 EUR",
        ),
    ]
    return case("exact_lookup", [FICHE, TARIFS]), items


def test_worked_example_every_metric() -> None:
    gold, items = worked_example()
    score = score_retrieval(gold, items)
    assert score.recall == {1: 0.0, 3: 0.5, 5: 1.0, 10: 1.0}
    assert score.hit == {1: 0.0, 3: 1.0, 5: 1.0, 10: 1.0}
    assert score.mrr == 0.5
    assert score.exact_metadata is False  # the top item has the wrong page
    assert score.table_integrity is True
    assert score.duplicate_rate == pytest.approx(1 / 5)
    assert score.irrelevant_rate == pytest.approx(1 / 5)
    assert score.leaked == ()
    assert score.n_items == 5
    fiche, tarifs = score.evidence_hits
    assert fiche.index == 0
    assert fiche.first_rank == {"document": 1, "page": 4, "section": 4, "row": 4, "full": 4}
    assert tarifs.first_rank == {"document": 2, "page": 2, "section": 2, "row": 2, "full": 2}


def test_exact_metadata_true_when_top_item_matches_fully() -> None:
    gold = case("exact_lookup", [FICHE])
    top = item(1, filename="Fiche_Nimbus.pdf", page=3, section="3.2 Limites")
    assert score_retrieval(gold, [top]).exact_metadata is True
    assert score_retrieval(gold, []).exact_metadata is False
    # Not an exact-lookup category: not defined.
    assert score_retrieval(case("semantic", [FICHE]), [top]).exact_metadata is None


def test_granularity_hits_locate_a_miss() -> None:
    gold = case("semantic", [{"filename": "Manuel.pdf", "page": 7, "section": "4.1"}])
    items = [
        item(1, filename="Manuel.pdf", page=2, section="4.1"),
        item(2, filename="Manuel.pdf", page=7, section="4.2"),
    ]
    score = score_retrieval(gold, items)
    assert score.evidence_hits[0].first_rank == {
        "document": 1,
        "page": 2,
        "section": None,
        "row": None,
        "full": None,
    }
    assert score.recall[10] == 0.0
    assert score.mrr == 0.0
    assert score.irrelevant_rate == 0.0  # both items are from the gold document


def test_table_integrity_fails_when_cells_are_split_over_items() -> None:
    gold = case("exact_table", [TARIFS])
    items = [
        item(1, file_id="f-tarifs", table="Tarifs", row_key="Pro", text="Pro | 49 EUR"),
        item(2, file_id="f-tarifs", table="Tarifs", text="Formule | Prix mensuel"),
        # All the cells, but from another file: does not count.
        item(3, file_id="f-copie", text="Prix mensuel | Pro | 49 EUR"),
    ]
    score = score_retrieval(gold, items)
    assert score.table_integrity is False
    assert score.recall[1] == 1.0
    assert score_retrieval(case("exact_table", [FICHE]), items).table_integrity is None


def test_table_integrity_counts_an_item_matching_at_document_level_anywhere() -> None:
    gold = case("exact_table", [TARIFS])
    items = [
        item(1, file_id="f-x"),
        item(9, file_id="f-tarifs", table="Autre", text="Prix mensuel — Pro: 49 EUR"),
    ]
    score = score_retrieval(gold, items)
    assert score.table_integrity is True
    assert score.recall[10] == 0.0  # wrong table: not a full match


def test_empty_list() -> None:
    score = score_retrieval(case("exact_table", [FICHE, TARIFS]), [])
    assert score.recall == {1: 0.0, 3: 0.0, 5: 0.0, 10: 0.0}
    assert score.hit == {1: 0.0, 3: 0.0, 5: 0.0, 10: 0.0}
    assert score.mrr == 0.0
    assert score.table_integrity is False
    assert score.duplicate_rate == 0.0
    assert score.irrelevant_rate == 0.0
    assert score.n_items == 0
    assert all(rank is None for rank in score.evidence_hits[0].first_rank.values())


@pytest.mark.parametrize("evidence", [[], None])
def test_no_required_evidence_leaves_rank_metrics_undefined(
    evidence: list[dict[str, Any]] | None,
) -> None:
    gold = case("exact_lookup", evidence)
    items = [item(1, filename="A.pdf"), item(2, filename="B.pdf")]
    score = score_retrieval(gold, items)
    assert all(math.isnan(value) for value in score.recall.values())
    assert all(math.isnan(value) for value in score.hit.values())
    assert math.isnan(score.mrr)
    assert score.exact_metadata is None
    assert score.table_integrity is None
    assert score.irrelevant_rate == 1.0
    assert score.evidence_hits == ()
    assert score_retrieval(gold, []).irrelevant_rate == 0.0
    data = score.to_json()
    assert data["recall@5"] is None
    assert data["mrr"] is None
    json.dumps(data, allow_nan=False)


def test_rank_order_ties_and_gaps_use_positions() -> None:
    gold = case("semantic", [{"filename": "B.pdf"}])
    # Ranks 1, 1, 7: a stable sort keeps A before B; the gap to 7 is ignored.
    items = [item(7, filename="C.pdf"), item(1, filename="A.pdf"), item(1, filename="B.pdf")]
    score = score_retrieval(gold, items)
    assert score.mrr == 0.5
    assert score.recall[1] == 0.0
    assert score.recall[3] == 1.0
    assert score.evidence_hits[0].first_rank["full"] == 2


def test_multi_document_recall_and_hit() -> None:
    gold = case("cross_document", [{"filename": "A.pdf"}, {"filename": "B.pdf"}, {"file_id": "c"}])
    items = [item(1, filename="x.pdf"), item(2, filename="b.pdf"), item(3, file_id="c")]
    score = score_retrieval(gold, items, ks=(1, 2, 3))
    assert score.recall == {1: 0.0, 2: pytest.approx(1 / 3), 3: pytest.approx(2 / 3)}
    assert score.hit == {1: 0.0, 2: 1.0, 3: 1.0}
    assert score.mrr == 0.5
    assert score.irrelevant_rate == pytest.approx(1 / 3)


def test_duplicates_do_not_inflate_recall() -> None:
    """Hand-computed: gold A and B; the run repeats A three times before B."""
    gold = case("cross_document", [{"filename": "A.pdf"}, {"filename": "B.pdf"}])
    items = [
        item(1, filename="A.pdf", page=1, text="alpha one two three four"),
        item(2, filename="A.pdf", page=1, text="beta five six seven eight"),
        item(3, filename="A.pdf", page=1, text="gamma nine ten eleven twelve"),
        item(4, filename="B.pdf", page=1, text="delta a b c d"),
    ]
    score = score_retrieval(gold, items)
    assert score.recall == {1: 0.5, 3: 0.5, 5: 1.0, 10: 1.0}
    assert score.hit == {1: 1.0, 3: 1.0, 5: 1.0, 10: 1.0}
    assert score.mrr == 1.0
    assert score.duplicate_rate == 0.5  # positions 2 and 3 repeat position 1's location
    assert score.irrelevant_rate == 0.0


def test_one_item_can_match_two_entries() -> None:
    gold = case("semantic", [{"filename": "A.pdf"}, {"filename": "A.pdf", "page": 2}])
    score = score_retrieval(gold, [item(1, filename="A.pdf", page=2)])
    assert score.recall[1] == 1.0


def test_evidence_override_for_one_turn() -> None:
    gold = case("multi_turn", [{"filename": "A.pdf"}])
    turn_evidence = [Evidence(filename="B.pdf")]
    score = score_retrieval(gold, [item(1, filename="B.pdf")], evidence=turn_evidence)
    assert score.recall[1] == 1.0


def test_ks_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        score_retrieval(case("semantic", [FICHE]), [], ks=(0, 5))


# --- duplicates ----------------------------------------------------------------------------

WORDS = [f"mot{i}" for i in range(40)]


def text_with(changes: dict[int, str]) -> str:
    return " ".join(changes.get(i, word) for i, word in enumerate(WORDS))


def test_near_identical_threshold_hand_computed() -> None:
    base = word_shingles(text_with({}))
    assert len(base) == 38
    # Last word changed: 1 of 38 shingles differs → Jaccard 37/39 ≈ 0.949.
    assert near_identical(base, word_shingles(text_with({39: "autre"})))
    # A middle word changed: 3 shingles differ → Jaccard 35/41 ≈ 0.854.
    assert not near_identical(base, word_shingles(text_with({20: "autre"})))
    # Two words removed from the end: 36/38 ≈ 0.947.
    assert near_identical(base, word_shingles(" ".join(WORDS[:38])))
    # Four words removed from the end: 34/38 ≈ 0.895.
    assert not near_identical(base, word_shingles(" ".join(WORDS[:36])))


def test_text_duplicates_ignore_case_spacing_and_compatibility_forms() -> None:
    items = [
        item(1, text="Pression maximale : 16 bar à 20 °C"),
        item(2, text="PRESSION\u00a0MAXIMALE  :\n16\u202fbar à 20 °C"),
        item(3, text="Pression minimale : 2 bar"),
        item(4, text="ﬁltre"),  # fewer than three words: the whole sequence is one shingle
        item(5, text="FILTRE"),
        item(6, text=""),
        item(7, text="   "),
    ]
    assert count_duplicates(items) == 2  # positions 2 and 5


def test_location_duplicates_need_a_location_and_a_file() -> None:
    items = [
        item(1, filename="A.pdf", text="un deux trois"),
        item(2, filename="a.pdf", text="quatre cinq six"),  # no location field: not a dup
        item(3, text="sept huit neuf", page=2),
        item(4, text="dix onze douze", page=2),  # no file identity: not a dup
        item(5, file_id="f", section="3.2 Limites", text="a b c"),
        item(6, file_id="f", section="3.2  limites.", text="d e f"),  # same location
        item(7, file_id="f", section="3.2 Limites", row=4, text="g h i"),  # finer: new
        item(8, file_id="f", section="3.2 Limites", row=4, text="j k l"),  # dup of 7
    ]
    score = score_retrieval(case("semantic", [{"file_id": "f"}]), items)
    assert score.duplicate_rate == pytest.approx(2 / 8)


def test_near_duplicates_found_among_many_items() -> None:
    texts = [" ".join(f"w{n}x{i}" for i in range(60)) for n in range(12)]
    items = [item(i + 1, text=t) for i, t in enumerate(texts)]
    assert count_duplicates(items) == 0
    # A copy of item 3 with its last word changed, placed last.
    items.append(item(13, text=texts[2].rsplit(" ", 1)[0] + " fin"))
    assert count_duplicates(items) == 1


# --- leaks ---------------------------------------------------------------------------------


def leak_items() -> list[RetrievedItem]:
    return [
        item(1, file_id="a", filename="Rapport Qualité.pdf"),
        item(2, file_id="b", filename="Rapport Qualité.pdf"),
        item(3, file_id="b", filename="Autre.pdf"),
        item(4, filename="rapport qualité.pdf"),
        item(5, filename="Secret.pdf"),
        item(6),
    ]


def test_no_allow_list_no_leak() -> None:
    assert score_retrieval(case(), leak_items()).leaked == ()


def test_file_id_allow_list() -> None:
    score = score_retrieval(case(), leak_items(), allowed_file_ids={"a"})
    # b once (unique), then items the id list cannot check.
    assert score.leaked == ("b", "rapport qualité.pdf", "Secret.pdf", UNIDENTIFIED)


def test_filename_allow_list_is_normalised() -> None:
    score = score_retrieval(
        case(), leak_items(), allowed_filenames=["/srv/docs/RAPPORT QUALITÉ.pdf"]
    )
    assert score.leaked == ("Autre.pdf", "Secret.pdf", UNIDENTIFIED)


def test_item_with_file_id_uses_the_file_id_check_only() -> None:
    score = score_retrieval(
        case(), leak_items(), allowed_file_ids=["a"], allowed_filenames=["Autre.pdf"]
    )
    # b is outside the id list even though one of its filenames is allowed; the items
    # without file_id are checked by filename.
    assert score.leaked == ("b", "rapport qualité.pdf", "Secret.pdf", UNIDENTIFIED)


# --- JSON ----------------------------------------------------------------------------------


def test_to_json_is_flat_strict_json() -> None:
    gold, items = worked_example()
    score = score_retrieval(gold, items, allowed_file_ids=["f-tarifs"])
    data = score.to_json()
    assert data["recall@5"] == 1.0
    assert data["hit@1"] == 0.0
    # The Fiche items carry no file_id, so an id allow-list cannot vouch for them; three
    # spellings of one filename are one leaked file, shown as first seen.
    assert data["leaked"] == ["Fiche_Nimbus.pdf", "f-autre"]
    assert data["evidence_hits"][1] == {
        "index": 1,
        "first_rank": {"document": 2, "page": 2, "section": 2, "row": 2, "full": 2},
    }
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_to_json_writes_undefined_metrics_as_null() -> None:
    score = score_retrieval(case("semantic", []), [item(1, filename="A.pdf")])
    assert math.isnan(score.mrr)
    assert math.isnan(score.recall[5])
    data = score.to_json()
    assert (data["mrr"], data["recall@5"]) == (None, None)
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def reference_text_duplicates(texts: list[str]) -> int:
    """Brute force: every pair, exact Jaccard over word-triple tuples."""

    def shingles(text: str) -> set[tuple[str, ...]]:
        words = unicodedata.normalize("NFKC", text).casefold().split()
        if len(words) < 3:
            return {tuple(words)} if words else set()
        return set(zip(words, words[1:], words[2:], strict=False))

    sets = [shingles(text) for text in texts]
    return sum(
        1
        for i, current in enumerate(sets)
        if current
        and any(other and len(current & other) / len(current | other) >= 0.9 for other in sets[:i])
    )


def test_duplicate_detection_equals_brute_force_on_random_lists() -> None:
    rng = random.Random(11)
    vocabulary = [f"mot{i}" for i in range(12)] + ["Été", "ÉTÉ", "été"]
    found_some = 0
    for _ in range(300):
        bases = [[rng.choice(vocabulary) for _ in range(rng.randint(1, 50))] for _ in range(3)]
        texts = []
        for _ in range(10):
            words = list(rng.choice(bases))
            for _ in range(rng.randint(0, 3)):
                action = rng.random()
                spot = rng.randrange(len(words) + 1)
                if action < 0.4:
                    words.insert(spot, rng.choice(vocabulary))
                elif action < 0.8 and len(words) > 1:
                    del words[min(spot, len(words) - 1)]
                else:
                    words = words[1:] + words[:1]
            texts.append(" ".join(words))
        items = [item(i + 1, text=text) for i, text in enumerate(texts)]
        expected = reference_text_duplicates(texts)
        assert count_duplicates(items) == expected, texts
        found_some += 0 < expected < 9
    assert found_some > 100
