"""The summary of one layer's decision (typed), its summary.json and summary.md."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragv2.deciding.records import ChatRecord
from pytest_ragv2.deciding.results import SessionResults
from pytest_ragv2.deciding.verdict import GateResult
from pytest_ragv2.layers.protocol import load_layer
from pytest_ragv2.report.adjudication import adjudication_markdown
from pytest_ragv2.report.model import ListedRun, Summary, _clean
from pytest_ragv2.report.safe_text import json_safe
from pytest_ragv2.report.tables import gate_table, md_text, metric_sections, render_markdown

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings

SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
REPORT_HTML = "report.html"


def build_summary(
    *,
    run_id: str,
    seed: int,
    layer: str,
    results: SessionResults,
    gates: Sequence[GateResult],
    passed: bool,
    exit_status: int,
    interrupted: bool,
    descriptors: Mapping[str, Mapping[str, str]],
    raw_runs_dir: Path,
    settings: Settings | None = None,
) -> Summary:
    summary = Summary(
        run_id=run_id,
        seed=seed,
        layer=layer,
        verdict=session_verdict(gates, passed=passed, interrupted=interrupted),
        exit_status=exit_status,
        raw_runs=str(raw_runs_dir),
        runs_expected=results.expected_runs,
        runs_recorded=results.recorded_runs,
        systems=results.systems,
        # sorted: the live session and a rescore (from the manifest) print them alike
        descriptors={name: dict(sorted(values.items())) for name, values in descriptors.items()},
        by_category=results.by_category,
        by_language=results.by_language,
        by_case=results.by_case,
        gates=list(gates),
        unmet_runs=unmet_runs(results),
        review_queue=review_queue(results),
        recall_k=results.recall_k,
        adjudication=results.adjudication or None,
    )
    summary.add_figures(load_layer(layer).summary_figures(results, settings))
    return summary


def session_verdict(gates: Sequence[GateResult], *, passed: bool, interrupted: bool) -> str:
    """ "pass", "fail", "interrupted", or "review" when runs waiting for a reviewer's ruling
    are all that keeps the gates from holding (exit status 1 all the same)."""
    from pytest_ragv2.layers.chat.gates import only_review_pending

    if interrupted:
        return "interrupted"
    if passed:
        return "pass"
    return "review" if only_review_pending(gates) else "fail"


REASONS_KEPT = 20  # of one run's reasons in summary.json; the count of the rest is kept


def unmet_runs(results: SessionResults) -> list[ListedRun]:
    """Every run that did not meet its case (candidate first), with its reasons (the first
    :data:`REASONS_KEPT`, and ``reasons_more`` counting the rest) and, at the chat layers,
    the answer's beginning: what a reviewer reads first. The list is complete."""
    rank = {"candidate": 0, "baseline": 1, "reference": 2}
    unmet = [record for record in results.records if not record.met and not record.skipped]
    unmet.sort(key=lambda r: (rank.get(r.role, 3), r.key))
    return [
        ListedRun(
            record.key.item_name,
            record.key.case,
            record.key.system,
            record.role,
            record.reasons[:REASONS_KEPT],
            answer=record.answer if isinstance(record, ChatRecord) else None,
            reasons_more=max(0, len(record.reasons) - REASONS_KEPT),
        )
        for record in unmet
    ]


def review_queue(results: SessionResults) -> list[ListedRun]:
    """Every run the scorer left to a reviewer and no ruling has settled yet, decisive
    roles first: what a reviewer rules on in gold/adjudications.yaml."""
    rank = {"candidate": 0, "baseline": 1}
    waiting = [r for r in results.records if isinstance(r, ChatRecord) and r.review]
    waiting.sort(key=lambda r: (rank.get(r.role, 2), r.key))
    return [
        ListedRun(
            record.key.item_name,
            record.key.case,
            record.key.system,
            record.role,
            record.review,
            answer=record.answer,
            lang=record.key.lang,
            rep=record.key.rep,
        )
        for record in waiting
    ]


def _review_markdown(summary: Summary) -> list[str]:
    if not summary.review_queue:
        return []
    lines = [
        f"## Review queue ({len(summary.review_queue)})",
        "",
        "The scorer could not decide these runs and did not guess: each waits for a "
        "reviewer's ruling in `gold/adjudications.yaml` (then `ragv2 rescore`).",
        "",
    ]
    for run in summary.review_queue:
        lines.append(f"- **{md_text(run.run)}** ({run.role})")
        lines.extend(f"  - {md_text(reason)}" for reason in run.reasons)
    return [*lines, ""]


def render_summary_markdown(summary: Summary, gates: Sequence[GateResult]) -> str:
    lines = [
        f"# pytest-ragv2 — layer {summary.layer} — run {summary.run_id}",
        "",
        f"**Verdict: {summary.verdict.upper()}** (exit status {summary.exit_status}); "
        f"seed {summary.seed}; {summary.runs_recorded} runs recorded"
        + (f" of {summary.runs_expected} expected" if summary.runs_expected is not None else "")
        + ".",
        "",
        *_protocol_markdown(summary),
        *_review_markdown(summary),
        *adjudication_markdown(summary),
        "## Gates",
        "",
        *render_markdown(gate_table(gates)),
        "",
    ]
    for title, table in metric_sections(summary):
        lines += [f"## {title}", "", *render_markdown(table), ""]
    details = [gate for gate in gates if gate.details]
    if details:
        lines += ["## Gate details", ""]
        for gate in details:
            lines.append(f"- **{gate.name}**")
            lines.extend(f"  - {md_text(detail)}" for detail in gate.details)
        lines.append("")
    return "\n".join(lines)


def _protocol_markdown(summary: Summary) -> list[str]:
    """The run's kind (a development run says so) and any protocol flag, in bold."""
    protocol = summary.protocol
    if protocol is None:
        return []
    lines = [f"Protocol: {md_text(protocol.label)}.", ""]
    lines += [f"**Protocol flag: {md_text(flag)}.**" for flag in protocol.flags]
    return lines + ([""] if protocol.flags else [])


# per-case tables: one line per (system, case) or run, by json's C encoder (its indenting
# encoder is pure Python: a tenth of a second per thousand cases); the levels above indented
# (and each case of the failure diagnosis)
Depths = Mapping[str, "Depths"] | int | None
_LINE_DEPTH: Depths = {"by_case": 2, "unmet_runs": 1, "diagnosis": {"cases": 1}}


def summary_json_pieces(data: Mapping[str, Any], *, allow_nan: bool = True) -> Iterator[str]:
    """summary.json's text, as ``json.dumps(indent=2)`` except that each entry of the
    per-case tables stands on one line, piece by piece as it is written: the text of 100,000
    per-case rows is never held whole. ``allow_nan=False``: a NaN or an infinity raises
    ``ValueError`` (as :func:`json.dumps` does)."""
    return _outline(data, "", _LINE_DEPTH, allow_nan)


def _outline(value: Any, indent: str, depths: Depths, allow_nan: bool = True) -> Iterator[str]:
    if isinstance(depths, int) and depths <= 0:
        yield _dumps(value, allow_nan)
        return
    if not isinstance(value, Mapping | list | tuple) or not value:
        yield _dumps(value, allow_nan)
        return
    inner = indent + "  "

    def below(key: object) -> Depths:
        if isinstance(depths, int):
            return depths - 1
        return depths.get(str(key)) if depths else None

    if depths is None:  # a JSON string holds no raw line break: re-indenting is safe
        yield _dumps(value, allow_nan, indent=2).replace("\n", "\n" + indent)
        return
    separator = ""
    if isinstance(value, Mapping):
        yield "{"
        for key, item in value.items():
            yield f"{separator}\n{inner}{_KEY(str(key))}: "
            yield from _outline(item, inner, below(key), allow_nan)
            separator = ","
        yield f"\n{indent}}}"
        return
    yield "["
    for item in value:
        yield f"{separator}\n{inner}"
        yield from _outline(item, inner, below(None), allow_nan)
        separator = ","
    yield f"\n{indent}]"


def _dumps(value: Any, allow_nan: bool, indent: int | None = None) -> str:
    if indent is None:  # a per-case row: one encoder for them all, not one per row
        return _ONE_LINE[allow_nan].encode(value)
    return json.dumps(
        value, ensure_ascii=False, indent=indent, allow_nan=allow_nan, default=_as_dict
    )


def _as_dict(value: object) -> dict[str, Any]:
    """A mapping that is not a dict (rows made as they are read) is written as one."""
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# json.dumps(value, ensure_ascii=False, allow_nan=..., default=_as_dict), its encoder made once;
# a key as json.dumps(key, ensure_ascii=False) writes it
_KEY = json.encoder.encode_basestring
_ONE_LINE = {
    allow: json.JSONEncoder(ensure_ascii=False, allow_nan=allow, default=_as_dict)
    for allow in (True, False)
}


def write_summary(
    report_dir: Path, summary: Summary, markdown: str, page: str | Iterable[str]
) -> Path:
    """summary.json, summary.md and report.html (``page``: its text, or its pieces in
    order, as :func:`~pytest_ragv2.report.page.page_pieces` gives them)."""
    report_dir.mkdir(parents=True, exist_ok=True)
    path = report_dir / SUMMARY_JSON
    data = summary._json_as_built()
    # Written without the copy to_json() cleans (a second summary in memory): json writes
    # tuples as lists and str, int and float keys as str() does; a NaN (null in to_json())
    # or an infinity stops it, and the cleaned copy is written instead.
    try:
        _write_atomic(path, map(json_safe, summary_json_pieces(data, allow_nan=False)))
    except ValueError:
        _write_atomic(path, map(json_safe, summary_json_pieces(_clean(data))))
    del data  # the page is built next: it does not hold the JSON form at the same time
    _write_atomic(report_dir / SUMMARY_MD, markdown)
    _write_atomic(report_dir / REPORT_HTML, page)
    return path


def _write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """The whole file or none of it: written beside, then renamed over; a failed write
    (a full disk) leaves neither a torn file nor its temporary."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as out:
            out.writelines([text] if isinstance(text, str) else text)
        os.replace(tmp, path)
    except BaseException:  # also a piece that could not be made
        tmp.unlink(missing_ok=True)
        raise
