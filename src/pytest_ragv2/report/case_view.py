"""The per-case view of report.html: typed, built once from the records, the case catalog
and the raw runs on disk.

One :class:`CaseView` per case holds its gold (prompts, claims, evidence) and one
:class:`RunView` per run: the query, the ranked list with gold hits marked at their
granularity, the whole answer, the claims and evidence met and missed, citations, tool
calls, latency and sizes. A record without its raw run (an interrupted session, a raw-run
file moved away) still gets a view from the record alone, saying what is missing; a raw run
without a record is not shown (nothing scored it). Everything here is plain text: the page
escapes it.

Cost: one pass over the raw runs (only the runs of this layer are kept), one over the
records; the ranked lists are matched against the gold for their shown items only.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragv2.deciding.records import ChatRecord, RetrievalRecord, RunRecord
from pytest_ragv2.report.excerpts import excerpt
from pytest_ragv2.run.keys import RunKey

if TYPE_CHECKING:
    from pytest_ragv2.gold.cases import Catalog
    from pytest_ragv2.gold.schema import Case, Evidence
    from pytest_ragv2.report.model import Summary
    from pytest_ragv2.systems.outputs import RetrievedItem

ITEMS_SHOWN = 10  # of a ranked list; the rest is counted and is in the raw runs
ITEM_CHARS = 280  # of an item's text
TOOL_RESULT_CHARS = 400
CITATION_CHARS = 200
LEVELS = {1: "file", 2: "page", 3: "section", 4: "full"}  # match_step's ladder, named
OUTCOMES = ("error", "unmet", "skipped", "met")  # a case shows its worst run's


@dataclass(frozen=True, slots=True)
class ListedItem:
    """One item of a ranked list; ``level`` is its best match with a gold evidence entry
    (file, page, section, full), None when it matches none."""

    rank: int
    where: str
    text: str
    level: str | None
    score: float | None = None


@dataclass(frozen=True, slots=True)
class ItemList:
    """A ranked list as shown: its first items of ``total``; ``complete`` is False when only
    the record's short list was at hand (no raw run)."""

    items: tuple[ListedItem, ...]
    total: int
    complete: bool = True

    @property
    def more(self) -> int:
        return max(self.total - len(self.items), 0)


@dataclass(frozen=True, slots=True)
class GoldMark:
    """A gold item (evidence entry or claim) and whether this run met it."""

    kind: str  # "evidence", "required claim", "forbidden claim"
    text: str
    met: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ToolCallView:
    name: str
    arguments: str
    result: str
    status: str


@dataclass(frozen=True, slots=True)
class CitationView:
    marker: str
    target: str
    text: str
    gold: bool  # the cited file is one of the case's gold evidence files


@dataclass(frozen=True, slots=True)
class TurnView:
    number: int
    prompt: str
    answer: str
    latency_s: float
    tool_calls: tuple[ToolCallView, ...]
    citations: tuple[CitationView, ...]
    evidence: ItemList | None


@dataclass(frozen=True, slots=True)
class RunView:
    key: RunKey
    role: str
    outcome: str  # one of OUTCOMES
    reasons: tuple[str, ...]
    skipped: str | None
    latency_s: float
    headline: float | None
    query: str | None = None  # layer A
    retrieved: ItemList | None = None  # layer A
    turns: tuple[TurnView, ...] = ()  # the chat layers
    answer: str | None = None  # the whole final answer, or the record's excerpt
    answer_whole: bool = True
    gold: tuple[GoldMark, ...] = ()
    vetoes: tuple[str, ...] = ()
    rubric: tuple[tuple[str, str], ...] = ()
    sizes: tuple[tuple[str, int], ...] = ()
    raw_missing: bool = False
    ruled_by: tuple[str, ...] = ()  # the reviewers whose adjudication changed this run


@dataclass(frozen=True, slots=True)
class CaseView:
    case_id: str
    category: str
    prompts: tuple[tuple[str, str], ...]  # (language, prompt; "en, turn 2" for a turn)
    claims: tuple[tuple[str, str], ...]  # (kind, text)
    evidence: tuple[str, ...]
    runs: tuple[RunView, ...]
    outcome: str
    delta: float | None  # candidate minus baseline on the layer's headline metric
    known: bool = True  # False: the case is no longer in the catalog

    @property
    def systems(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(run.key.system for run in self.runs))

    @property
    def langs(self) -> tuple[str, ...]:
        return tuple(sorted({run.key.lang for run in self.runs}))


def outcome_of(record: RunRecord) -> str:
    if record.skipped:
        return "skipped"
    if not record.ok:
        return "error"
    return "met" if record.met else "unmet"


def iter_layer_raw_runs(
    run_dir: Path | None, layer: str, cases: Container[str] | None = None
) -> Iterator[tuple[RunKey, dict[str, Any]]]:
    """The raw runs of ``layer`` with their keys, in the order written (a later line of a
    key replaces an earlier one); nothing when the run directory is missing or unreadable.
    ``cases``: only these cases' runs are wanted (others are skipped unparsed where they
    can be)."""
    if run_dir is None or not run_dir.is_dir():
        return
    from pytest_ragv2.run.rawruns import read_raw_runs

    try:
        for raw in read_raw_runs(run_dir, cases):
            key = raw.get("key")
            if not isinstance(key, dict) or ("judge" in raw and "transcript" not in raw):
                continue
            if str(key.get("layer", layer)) != layer:
                continue
            try:
                found = RunKey.from_json({"layer": layer, **key})
            except (KeyError, TypeError, ValueError):
                continue
            yield found, raw
    except (OSError, ValueError):
        return


def describe_place(
    filename: str | None,
    file_id: str | None = None,
    page: int | None = None,
    section: str | None = None,
    table: str | None = None,
    row: Any = None,
) -> str:
    parts = [filename or file_id or "?"]
    if page is not None:
        parts.append(f"p.{page}")
    if section:
        parts.append(f"§ {section}")
    if table:
        parts.append(f"table {table}")
    if row not in (None, ""):
        parts.append(f"row {row}")
    return " ".join(parts)


def _item_level(item: RetrievedItem, required: Sequence[Evidence]) -> str | None:
    from pytest_ragv2.scoring.evidence import match_step

    best = max((match_step(item, entry) for entry in required), default=0)
    return LEVELS.get(best)


def _listed(items: Sequence[RetrievedItem], required: Sequence[Evidence]) -> ItemList:
    ordered = sorted(items, key=lambda item: item.rank)
    shown = tuple(
        ListedItem(
            rank=position,
            where=describe_place(
                item.filename,
                item.file_id,
                item.page,
                item.section,
                item.table,
                item.row_key or item.row,
            ),
            text=excerpt(" ".join(item.text[: ITEM_CHARS * 2].split()), ITEM_CHARS),
            level=_item_level(item, required),
            score=item.score,
        )
        for position, item in enumerate(ordered[:ITEMS_SHOWN], start=1)
    )
    return ItemList(shown, len(ordered))


def listed_from_record(record: RetrievalRecord, *, raw_missing: bool = True) -> ItemList:
    """The record's short list, gold hits read from the first ranks the scorer recorded
    (``raw_missing``: it stands for a raw run that cannot be read). The session's own
    records keep no list past their report (``controller.kept_record``): for them it is
    empty, and only a rescored record lists its items."""
    levels: dict[int, int] = {}
    for hit in record.evidence_hits:
        for step, name in ((1, "document"), (2, "page"), (3, "section"), (4, "full")):
            rank = hit.first_rank.get(name)
            if isinstance(rank, int):
                levels[rank] = max(levels.get(rank, 0), step)
    shown = tuple(
        ListedItem(
            rank=position,
            where=describe_place(item.file, None, item.page, item.section, None, item.row),
            text="",
            level=LEVELS.get(levels.get(position, 0)),
        )
        for position, item in enumerate(record.top, start=1)
    )
    return ItemList(shown, max(record.returned, len(shown)), complete=not raw_missing)


def _evidence_marks(record: RetrievalRecord, required: Sequence[Evidence]) -> tuple[GoldMark, ...]:
    from pytest_ragv2.layers.retrieval.run import describe_evidence

    hits = {hit.index: hit.first_rank for hit in record.evidence_hits}
    missed_reasons = [r for r in record.reasons if r.startswith("gold evidence not in top")]
    marks = []
    for index, entry in enumerate(required):
        text = describe_evidence(entry)
        missed = any(f": {text} (" in reason for reason in missed_reasons)
        first = hits.get(index, {})
        found = [
            f"{'file' if level == 'document' else level} at rank {first[level]}"
            for level in ("full", "section", "page", "document")
            if isinstance(first.get(level), int)
        ]
        detail = found[0] if found else "not retrieved"
        if not record.ok or record.skipped:
            missed = True
        marks.append(GoldMark("evidence", text, not missed, detail))
    return tuple(marks)


def _claim_marks(record: ChatRecord, case: Case) -> tuple[GoldMark, ...]:
    """Required claims met or missed, forbidden claims avoided or made; nothing when the run
    was not scored (a skipped run, a scoring failure)."""
    from pytest_ragv2.scoring.turn_gold import turn_golds

    if record.skipped or not record.rubric:
        return ()
    missed, made = set(record.claims_missed), set(record.claims_forbidden)
    marks: list[GoldMark] = []
    golds = turn_golds(case, record.key.lang)
    for gold in golds:
        expected = gold.expected_answer
        if expected is None:
            continue
        where = f"turn {gold.turn}" if len(golds) > 1 else ""
        for claim in expected.required_claims:
            met = claim.text not in missed
            marks.append(GoldMark("required claim", claim.text, met, where))
        for claim in expected.forbidden_claims:
            met = claim.text not in made
            detail = ", ".join(filter(None, (where, "made" if not met else "not made")))
            marks.append(GoldMark("forbidden claim", claim.text, met, detail))
    return tuple(marks)


def _gold_files(required: Iterable[Evidence]) -> set[str]:
    from pytest_ragv2.scoring.evidence import normalise_filename

    names: set[str] = set()
    for entry in required:
        if entry.file_id:
            names.add(entry.file_id)
        if entry.filename:
            names.add(normalise_filename(entry.filename))
    return names


def _turn_views(
    raw: Mapping[str, Any], required: Sequence[Sequence[Evidence]]
) -> tuple[TurnView, ...]:
    """The turns of a conversation; ``required`` holds each turn's gold evidence."""
    from pytest_ragv2.scoring.evidence import normalise_filename
    from pytest_ragv2.systems.transcripts import Transcript

    transcript = Transcript.from_json(raw["transcript"])
    views = []
    for number, turn in enumerate(transcript.turns, start=1):
        gold = required[number - 1] if number <= len(required) else ()
        gold_files = _gold_files(gold)
        citations = tuple(
            CitationView(
                marker=citation.marker,
                target=describe_place(citation.filename, citation.file_id, citation.page),
                text=excerpt(" ".join((citation.content or "").split()), CITATION_CHARS),
                gold=bool(
                    (citation.file_id and citation.file_id in gold_files)
                    or (citation.filename and normalise_filename(citation.filename) in gold_files)
                ),
            )
            for citation in turn.citations
        )
        calls = tuple(
            ToolCallView(
                name=call.name,
                arguments=json.dumps(call.arguments, ensure_ascii=False, sort_keys=True),
                result=excerpt(call.result or "", TOOL_RESULT_CHARS),
                status=call.status or "",
            )
            for call in turn.tool_calls
        )
        views.append(
            TurnView(
                number=number,
                prompt=turn.prompt,
                answer=turn.answer,
                latency_s=turn.latency_s,
                tool_calls=calls,
                citations=citations,
                evidence=_listed(turn.evidence, gold) if turn.evidence else None,
            )
        )
    return tuple(views)


def _turn_evidence(case: Case | None, lang: str) -> list[tuple[Evidence, ...]]:
    """Each turn's required evidence (a case without turns: its own, as one turn)."""
    if case is None:
        return []
    from pytest_ragv2.scoring.turn_gold import turn_golds

    return [gold.required_evidence for gold in turn_golds(case, lang)]


def _returned_items(raw: Mapping[str, Any] | None) -> list[RetrievedItem] | None:
    """The items a retrieval raw run returned; None without one that reads."""
    from pydantic import ValidationError

    from pytest_ragv2.run.raw_models import RetrievalRawRun, read_raw_run

    if raw is None:
        return None
    try:
        line = read_raw_run(dict(raw))
    except ValidationError:
        return None
    return [item.retrieved() for item in line.items] if isinstance(line, RetrievalRawRun) else None


def run_view(
    record: RunRecord, raw: Mapping[str, Any] | None, case: Case | None, headline: str
) -> RunView:
    """One run's view from its record, its raw run (None when missing) and its case (None
    when the catalog no longer has it)."""
    required = case.evidence_for(record.key.lang) if case is not None else []
    common: dict[str, Any] = {
        "key": record.key,
        "role": record.role,
        "outcome": outcome_of(record),
        "reasons": record.reasons,
        "skipped": record.skipped,
        "latency_s": record.latency_s,
        "headline": record.metric(headline),
        "raw_missing": raw is None and not record.skipped,
        "ruled_by": record.adjudication.by if record.adjudication else (),
    }
    if isinstance(record, RetrievalRecord):
        returned = _returned_items(raw)
        if returned is not None:
            retrieved = _listed(returned, required)
        else:
            retrieved = listed_from_record(record)
        return RunView(
            **common,
            query=str(raw["query"]) if raw is not None and "query" in raw else None,
            retrieved=retrieved,
            gold=_evidence_marks(record, required) if case is not None else (),
        )
    if isinstance(record, ChatRecord):
        turns = (
            _turn_views(raw, _turn_evidence(case, record.key.lang))
            if raw is not None and "transcript" in raw
            else ()
        )
        answer = turns[-1].answer if turns else record.answer
        sizes = {**record.sizes, **{f"{name} (tokens)": n for name, n in record.usage.items()}}
        return RunView(
            **common,
            turns=turns,
            answer=answer,
            answer_whole=bool(turns),
            gold=_claim_marks(record, case) if case is not None else (),
            vetoes=tuple(f"{veto.kind}: {veto.text!r} — {veto.detail}" for veto in record.vetoes),
            rubric=tuple((name, grade) for name, grade in record.rubric.items()),
            sizes=tuple(sizes.items()),
        )
    return RunView(**common)


def _gold_of(case: Case) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    from pytest_ragv2.scoring.turn_gold import turn_golds

    prompts: list[tuple[str, str]] = []
    claims: list[tuple[str, str]] = []
    langs = case.languages()
    golds = turn_golds(case, langs[0] if langs else "en")
    for gold in golds:
        turn = f", turn {gold.turn}" if len(golds) > 1 else ""
        prompts += [(f"{lang}{turn}", text) for lang, text in sorted(gold.prompts.items())]
        expected = gold.expected_answer
        if expected is None:
            continue
        for kind, listed in (
            ("required", expected.required_claims),
            ("optional", expected.optional_claims),
            ("forbidden", expected.forbidden_claims),
        ):
            claims += [(f"{kind}{turn}", claim.text) for claim in listed]
    if case.safe_refusal_expected:
        claims.append(("expected", "a safe refusal"))
    return tuple(prompts), tuple(claims)


def _evidence_of(case: Case) -> tuple[str, ...]:
    from pytest_ragv2.layers.retrieval.run import describe_evidence

    entries = [("", entry) for entry in case.evidence] + [
        (f"turn {number}: ", entry)
        for number, turn in enumerate(case.turns, start=1)
        for entry in turn.required_evidence
    ]
    return tuple(
        where
        + describe_evidence(entry)
        + (f" [{entry.lang}]" if entry.lang else "")
        + (f" — anchor: {entry.anchor}" if entry.anchor else "")
        for where, entry in entries
    )


def case_delta(summary: Summary, case_id: str, headline: str) -> float | None:
    """The first candidate's headline figure on the case minus the first baseline's."""
    roles = {name: row.role for name, row in summary.systems.items()}
    candidate = next((name for name, role in roles.items() if role == "candidate"), None)
    baseline = next((name for name, role in roles.items() if role == "baseline"), None)
    if candidate is None or baseline is None:
        return None
    ours = summary.by_case.get(candidate, {}).get(case_id)
    theirs = summary.by_case.get(baseline, {}).get(case_id)
    if ours is None or theirs is None:
        return None
    a, b = ours.value(headline), theirs.value(headline)
    if not isinstance(a, int | float) or not isinstance(b, int | float):
        return None
    return float(a) - float(b)


def _case_outcome(runs: Sequence[RunView]) -> str:
    """The worst outcome of the candidate's runs (of every run when there is no candidate)."""
    candidates = [run for run in runs if run.role == "candidate"] or list(runs)
    found = {run.outcome for run in candidates}
    return next((outcome for outcome in OUTCOMES if outcome in found), "met")


def shown_cases(records: Sequence[RunRecord], limit: int | None) -> set[str] | None:
    """The cases that get a panel when there are more than ``limit``: every case with a
    run that did not meet it (unmet, error, skipped), then the met ones in case order up
    to the limit. None: every case (``limit`` None, or not reached)."""
    cases = sorted({record.key.case for record in records})
    if limit is None or len(cases) <= limit:
        return None
    attention = {record.key.case for record in records if outcome_of(record) != "met"}
    shown = set(attention)
    for case_id in cases:
        if len(shown) >= limit:
            break
        shown.add(case_id)
    return shown


def build_case_views(
    summary: Summary,
    records: Sequence[RunRecord],
    catalog: Catalog | None = None,
    run_dir: Path | None = None,
    limit: int | None = None,
) -> list[CaseView]:
    """Every case of the layer's records, in case order, each with its runs (candidate
    first, then by system, language and repetition); past ``limit`` cases, only those
    :func:`shown_cases` keeps."""

    headline = summary.headline_metric
    layer_records = [record for record in records if record.key.layer == summary.layer]
    kept = shown_cases(layer_records, limit)
    by_case: dict[str, list[RunRecord]] = defaultdict(list)
    by_key: dict[RunKey, RunRecord] = {}
    for record in layer_records:
        if kept is None or record.key.case in kept:
            by_case[record.key.case].append(record)
            by_key[record.key] = record

    def case_of(case_id: str) -> Case | None:
        loaded = catalog.find(case_id) if catalog is not None else None
        return loaded.case if loaded is not None else None

    # each raw run is made into its run's short view as it is read, never all held at once
    # (a 20,000-run session's raw runs are hundreds of megabytes as dicts)
    viewed: dict[RunKey, RunView] = {}
    for key, raw in iter_layer_raw_runs(run_dir, summary.layer, kept) if layer_records else ():
        found = by_key.get(key)
        if found is not None:
            viewed[key] = run_view(found, raw, case_of(key.case), headline)
    rank = {"candidate": 0, "baseline": 1, "reference": 2}
    views = []
    for case_id in sorted(by_case):
        case = case_of(case_id)
        ordered = sorted(by_case[case_id], key=lambda r: (rank.get(r.role, 3), r.key))
        runs = tuple(viewed.get(r.key) or run_view(r, None, case, headline) for r in ordered)
        prompts, claims = _gold_of(case) if case is not None else ((), ())
        views.append(
            CaseView(
                case_id=case_id,
                category=case.category if case is not None else ordered[0].category,
                prompts=prompts,
                claims=claims,
                evidence=_evidence_of(case) if case is not None else (),
                runs=runs,
                outcome=_case_outcome(runs),
                delta=case_delta(summary, case_id, headline),
                known=case is not None,
            )
        )
    return views
