"""Several texts' support is read part by part (``Supports``); every verdict must be the one
a single support holding the union of the parts gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_ragv2.scoring.evidence import normalise_filename
from pytest_ragv2.scoring.grounding import Support, Supports, answer_facts, text_support

TOKENS = [
    "1 689 k€",
    "1.7 M€",
    "1,689",
    "1689000 €",
    "250 mm",
    "25 cm",
    "0.25 m",
    "48 h",
    "2 days",
    "30 Nm",
    "12 psi",
    "TVS-200",
    "TVS 200",
    "NX-450B",
    "SK-22OA",
    "SK-220A",
    "CE-2024-117",
    "datenblatt-tvs-75.pdf",
    "manual.docx",
    "+49 30 1234567",
    "info@example.com",
    "https://example.com/a",
    "the pump",
    "rated at",
    "and",
    "17",
    "3.5",
]
WORDS = st.lists(st.sampled_from(TOKENS), min_size=0, max_size=8).map(" ".join)


def union(parts: list[Support], extra_filenames: list[str]) -> Support:
    """One support holding everything of ``parts`` (the merge before ``Supports``)."""
    return Support(
        frozenset().union(*(part.keys for part in parts)),
        frozenset().union(*(part.plain for part in parts)),
        tuple(value for part in parts for value in part.amounts),
        frozenset().union(*(part.identifiers for part in parts)),
        frozenset(normalise_filename(name) for name in extra_filenames).union(
            *(part.filenames for part in parts)
        ),
    )


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(WORDS, min_size=0, max_size=5),
    names=st.lists(st.sampled_from(["manual.docx", "Datenblatt-TVS-75.PDF", "x.pdf"]), max_size=2),
    answer=WORDS,
    lang=st.sampled_from(["en", "de", "fr"]),
)
def test_facts_against_parts_are_those_against_their_union(
    texts: list[str], names: list[str], answer: str, lang: str
) -> None:
    parts = [text_support(text) for text in texts]
    by_parts = Support.merge(parts, extra_filenames=names)
    assert isinstance(by_parts, Supports)
    assert answer_facts(answer, lang, by_parts) == answer_facts(answer, lang, union(parts, names))


def test_a_merge_of_merges_keeps_every_part_and_filename() -> None:
    first = Support.merge([text_support("TVS-200 at 250 mm")], extra_filenames=["A.pdf"])
    both = Support.merge([first, text_support("see manual.docx")], extra_filenames=["b.pdf"])
    assert len(both.parts) == 2
    facts = answer_facts("TVS-200 is 25 cm (a.pdf, b.pdf, manual.docx)", "en", both)
    assert [fact.supported for fact in facts] == [True] * len(facts)
    assert {fact.kind for fact in facts} == {"identifier", "number", "filename"}
    alone = answer_facts("NX-450B is 30 cm (c.pdf)", "en", both)
    assert [fact.supported for fact in alone] == [False] * len(alone)


def identifier_keys(text: str) -> set[str]:
    """By the definition: the letters and digits of one to five consecutive alphanumeric runs
    of the NFKC-casefolded text, each joined to the next by a single separator."""
    import re
    import unicodedata

    norm = unicodedata.normalize("NFKC", text).casefold()
    runs = list(re.finditer(r"[^\W_]+", norm))
    keys = set()
    for first in range(len(runs)):
        for last in range(first, min(first + 5, len(runs))):
            gaps = [norm[runs[i].end() : runs[i + 1].start()] for i in range(first, last)]
            if all(gap in (" ", "-", "_", "/", ".") for gap in gaps):
                keys.add("".join(run.group() for run in runs[first : last + 1]))
    return keys


RUNS = st.sampled_from(["TVS", "75", "Ⅻ", "ß", "x", "NX450B"])
GAPS = st.sampled_from(["-", " ", "_", "/", ".", "..", " - ", "\n", ""])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(RUNS, GAPS), max_size=9).map(lambda pairs: "".join(a + b for a, b in pairs))
)
def test_identifier_keys_are_those_of_the_definition(text: str) -> None:
    assert text_support(text).identifiers == identifier_keys(text)


def test_five_runs_make_one_key_and_six_do_not() -> None:
    keys = text_support("a1-b2 c3/d4.e5_f6").identifiers
    assert {"a1b2c3d4e5", "b2c3d4e5f6"} <= keys
    assert "a1b2c3d4e5f6" not in keys
