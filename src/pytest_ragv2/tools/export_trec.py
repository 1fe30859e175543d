"""TREC run and qrels files of a layer-A run, so recall@k and MRR can be checked with
trec_eval or ranx outside the plugin (``ragv2 export trec raw-runs/<run-id>``).

Every file is derived from the raw runs and the current gold (as ``ragv2 rescore`` reads
them), and every match is the scorer's own (:func:`score_retrieval`): the export decides no
match of its own. Two views are written, because trec_eval counts one relevant document per
retrieved line while one retrieved item can be the first full match of several gold entries
(a whole-document chunk holding two anchored rows):

- **query view** (``qrels.txt``, ``<system>.run``): one query per run, qid
  ``<case>/<lang>/r<rep>``; the relevant documents are the run's required evidence entries,
  docno ``g1``, ``g2``… in the order of the gold. Every returned item is one line in the
  scorer's rank order: an item that is the first full match of entry j is ``gj`` (the lowest
  such j when it is the first match of several), any other item ``x<position>``. trec_eval's
  ``recip_rank`` is the plugin's MRR for every query; its ``recall_k`` is the plugin's
  recall@k except where an item is the first match of several entries (``conflicts``).
- **entry view** (``qrels.entries.txt``, ``<system>.entries.run``): one query per required
  entry of a run, qid ``<case>/<lang>/r<rep>/g<j>``, its one relevant document ``gj``; the
  item that first matches entry j at full granularity is ``gj``, every other item
  ``x<position>``. ``recall_k`` of the entry queries of a run, averaged, is exactly the
  plugin's recall@k of that run.

Scores are ``n - position + 1`` (rank 1 scores highest, no ties), so trec_eval's order (score
descending, then docno descending) is the scorer's. A run that failed, or returned nothing,
is an empty ranking to the plugin; it is written as one non-relevant line (docno ``none``) so
trec_eval sees the query without ``-c``. Runs whose case requires no evidence have undefined
recall and MRR in the plugin (left out of its means) and are left out of both views.

The plugin's figure of a system is the mean over cases of the mean over the case's runs (all
languages and repetitions); trec_eval's ``all`` line is the mean over queries. They agree
when every case has the same number of runs and, in the entry view, the same number of
entries per run; otherwise average ``trec_eval -q`` per case as README explains
(:func:`plugin_means` does that in Python).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pytest_ragv2.layers.registry import LAYERS
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.run.rawruns import MANIFEST_NAME, read_raw_runs
from pytest_ragv2.scoring.retrieval import in_rank_order, score_retrieval

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings

LAYER = next(name for name, info in LAYERS.items() if not info.chat)  # the retrieval layer
EMPTY_DOCNO = "none"  # the one line of an empty or failed ranking: never relevant
KS = (1, 3, 5, 10)
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")


class ExportError(ValueError):
    """The run folder cannot be exported (missing, not a run, no layer-A runs)."""


def qid_of(key: RunKey) -> str:
    """A run's query id: case ids and language codes hold no whitespace and no slash."""
    return f"{key.case}/{key.lang}/r{key.rep}"


def safe_name(name: str) -> str:
    """A system name as a run tag and file name: characters outside ``[A-Za-z0-9._+-]``
    replaced by ``_`` (a TREC line is split on whitespace)."""
    return _UNSAFE.sub("_", name) or "_"


@dataclass(slots=True)
class TrecExport:
    """Both views' lines, per system, with what the plugin makes of the same runs."""

    run_id: str
    qrels: list[str] = field(default_factory=list)
    entry_qrels: list[str] = field(default_factory=list)
    runs: dict[str, list[str]] = field(default_factory=dict)
    entry_runs: dict[str, list[str]] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)  # queries.tsv rows
    gold: list[str] = field(default_factory=list)  # gold.tsv rows
    tags: dict[str, str] = field(default_factory=dict)  # system → tag (and file stem)
    conflicts: dict[str, list[str]] = field(default_factory=dict)  # system → qids
    empty: dict[str, int] = field(default_factory=dict)  # system → failed/empty runs
    without_evidence: int = 0  # runs left out: their case requires no evidence
    unknown_cases: list[str] = field(default_factory=list)
    # per system, qid → the plugin's recall@k and MRR of that run (for the printed check)
    figures: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


def _ranking(qid: str, tag: str, docnos: list[str]) -> list[str]:
    if not docnos:
        return [f"{qid} Q0 {EMPTY_DOCNO} 1 0 {tag}"]
    n = len(docnos)
    return [
        f"{qid} Q0 {docno} {position} {n - position + 1} {tag}"
        for position, docno in enumerate(docnos, start=1)
    ]


def build_export(run_dir: Path, settings: Settings) -> TrecExport:
    """Both views of every layer-A raw run of ``run_dir``, scored against the current gold."""
    from pydantic import ValidationError

    from pytest_ragv2.gold.cases import load_catalog
    from pytest_ragv2.layers.retrieval.run import describe_evidence
    from pytest_ragv2.run.raw_models import RetrievalRawRun, read_raw_run

    manifest = json.loads((run_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    gold_dir = settings.gold if settings.gold.is_dir() else None
    catalog = load_catalog(settings.cases, gold_dir)
    export = TrecExport(run_id=str(manifest.get("run_id", run_dir.name)))

    latest: dict[RunKey, RetrievalRawRun] = {}  # a repeated key: the last raw run wins
    for raw in read_raw_runs(run_dir):
        try:
            line = read_raw_run(raw)
        except ValidationError:  # not a run (``ragv2 rescore`` names it): nothing to rank
            continue
        if isinstance(line, RetrievalRawRun):
            key = line.key.run_key(LAYER)
            if key.layer == LAYER:
                latest[key] = line
    if not latest:
        raise ExportError(f"{run_dir}: no layer-A raw runs to export")

    qrel_queries: dict[str, int] = {}  # qid → number of required entries
    gold_rows: dict[tuple[str, str], list[str]] = {}
    unknown: set[str] = set()
    for key in sorted(latest):
        line = latest[key]
        loaded = catalog.find(key.case)
        if loaded is None:
            unknown.add(key.case)
            continue
        case = loaded.case
        required = case.evidence_for(key.lang)
        if not required:
            export.without_evidence += 1
            continue
        tag = export.tags.setdefault(key.system, _unique_tag(key.system, export.tags))
        items = in_rank_order([item.retrieved() for item in line.items])
        score = score_retrieval(case, items, ks=KS, evidence=required)
        firsts = score.first_full_matches()
        qid = qid_of(key)
        qrel_queries[qid] = len(required)
        gold_rows.setdefault(
            (key.case, key.lang),
            [
                f"{key.case}\t{key.lang}\tg{j}\t{describe_evidence(e)}"
                for j, e in enumerate(required, 1)
            ],
        )
        docnos = [
            f"g{firsts[position][0] + 1}" if position in firsts else f"x{position}"
            for position in range(1, len(items) + 1)
        ]
        export.runs.setdefault(key.system, []).extend(_ranking(qid, tag, docnos))
        if any(len(entries) > 1 for entries in firsts.values()):
            export.conflicts.setdefault(key.system, []).append(qid)
        if not items:
            export.empty[key.system] = export.empty.get(key.system, 0) + 1
        lines = export.entry_runs.setdefault(key.system, [])
        for index in range(len(required)):
            wanted = score.evidence_hits[index].first_rank.get("full")
            entry_docnos = [
                f"g{index + 1}" if position == wanted else f"x{position}"
                for position in range(1, len(items) + 1)
            ]
            lines.extend(_ranking(f"{qid}/g{index + 1}", tag, entry_docnos))
        figures = {f"recall_{k}": score.recall[k] for k in KS}
        figures["recip_rank"] = score.mrr
        export.figures.setdefault(key.system, {})[qid] = figures
        export.queries.append(
            f"{qid}\t{key.case}\t{key.lang}\t{key.rep}\t{key.system}\t{case.category}"
            f"\t{len(required)}\t{'error' if line.error else len(items)}"
        )

    if unknown and len(unknown) == len({key.case for key in latest}):
        raise ExportError(
            f"{run_dir}: none of the run's cases is in {settings.cases} (the cases the run"
            f" was made with, as its configuration names them): {', '.join(sorted(unknown))}"
        )
    for qid in sorted(qrel_queries):
        for j in range(1, qrel_queries[qid] + 1):
            export.qrels.append(f"{qid} 0 g{j} 1")
            export.entry_qrels.append(f"{qid}/g{j} 0 g{j} 1")
    export.gold = [row for key in sorted(gold_rows) for row in gold_rows[key]]
    export.unknown_cases = sorted(unknown)
    return export


def _unique_tag(system: str, taken: Mapping[str, str]) -> str:
    tag = safe_name(system)
    used = set(taken.values())
    candidate, suffix = tag, 2
    while candidate in used:
        candidate, suffix = f"{tag}-{suffix}", suffix + 1
    return candidate


QUERIES_HEADER = "qid\tcase\tlang\trep\tsystem\tcategory\trequired\treturned"
GOLD_HEADER = "case\tlang\tdocno\tevidence"


def write_export(export: TrecExport, out: Path) -> list[Path]:
    """Write the files into ``out`` (created); the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Iterable[str]] = {
        "qrels.txt": export.qrels,
        "qrels.entries.txt": export.entry_qrels,
    }
    for system, tag in export.tags.items():
        files[f"{tag}.run"] = export.runs.get(system, [])
        files[f"{tag}.entries.run"] = export.entry_runs.get(system, [])
    files["queries.tsv"] = [QUERIES_HEADER, *export.queries]
    files["gold.tsv"] = [GOLD_HEADER, *export.gold]
    written = []
    for name, lines in files.items():
        path = out / name
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        written.append(path)
    return written


def plugin_means(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The plugin's system figures from per-query values of either view (trec_eval ``-q``,
    pytrec_eval or ranx): entry queries are averaged per run, runs per case, then cases."""
    by_run: dict[str, list[Mapping[str, float]]] = defaultdict(list)
    for qid, values in per_query.items():
        if qid == "all":  # trec_eval's own mean over queries
            continue
        by_run["/".join(qid.split("/")[:3])].append(values)
    by_case: dict[str, list[dict[str, float]]] = defaultdict(list)
    for run, entries in by_run.items():
        names = set(entries[0])
        by_case[run.split("/")[0]].append(
            {name: sum(entry[name] for entry in entries) / len(entries) for name in names}
        )
    means: dict[str, float] = {}
    if not by_case:
        return means
    names = set.intersection(*(set(run) for runs in by_case.values() for run in runs))
    for name in sorted(names):
        case_means = [sum(run[name] for run in runs) / len(runs) for runs in by_case.values()]
        means[name] = sum(case_means) / len(case_means)
    return means


def check_run_dir(run_dir: Path) -> dict[str, Any]:
    """The run's manifest, or an :class:`ExportError` saying what is wrong with the folder."""
    if not run_dir.exists():
        raise ExportError(f"{run_dir}: no such folder (expected raw-runs/<run-id>)")
    if not run_dir.is_dir():
        raise ExportError(f"{run_dir}: not a folder (expected raw-runs/<run-id>)")
    manifest_path = run_dir / MANIFEST_NAME
    if not manifest_path.is_file():
        raise ExportError(f"{run_dir}: not a raw-runs/<run-id> folder (no {MANIFEST_NAME})")
    try:
        manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ExportError(f"{manifest_path}: unreadable manifest: {exc}") from exc
    layers = str(manifest.get("options", {}).get("layer") or LAYER).split(",")
    if LAYER not in layers:
        raise ExportError(
            f"{run_dir}: a layer {','.join(layers)} run; a TREC export needs the retrieval"
            " runs of layer A (pytest --ragv2-layer=A)"
        )
    return manifest


def export_command(run_dir: Path, config: str | None, out: Path | None, stream: TextIO) -> int:
    """``ragv2 export trec``: write both views, print the files and the plugin's figures of
    the same runs; 0 on success, 2 when the folder cannot be exported."""
    from pytest_ragv2.tools.settings import rescore_settings

    try:
        manifest = check_run_dir(run_dir)
        settings, which = rescore_settings(run_dir, manifest, config, Path.cwd().resolve())
        export = build_export(run_dir, settings)
    except (OSError, ValueError) as exc:  # ExportError, SettingsError, JSON errors
        stream.write(f"{exc}\n")
        return 2
    target = out or settings.reports / export.run_id / "trec"
    written = write_export(export, target)
    stream.write(f"configuration: {which}\n")
    stream.write(f"wrote {len(written)} files to {target}:\n")
    for path in written:
        stream.write(f"  {path.name}\n")
    if export.without_evidence:
        stream.write(
            f"left out {export.without_evidence} run(s) whose case requires no evidence"
            " (recall and MRR undefined)\n"
        )
    if export.unknown_cases:
        stream.write(f"left out raw runs of unknown cases: {', '.join(export.unknown_cases)}\n")
    stream.write("the plugin's figures of these runs (mean over cases of the case means):\n")
    for system, tag in export.tags.items():
        means = plugin_means(export.figures.get(system, {}))
        figures = "  ".join(f"recall@{k} {means[f'recall_{k}']:.4f}" for k in KS)
        notes = []
        if export.empty.get(system):
            notes.append(f"{export.empty[system]} failed or empty ranking(s)")
        if export.conflicts.get(system):
            notes.append(
                f"{len(export.conflicts[system])} query(ies) where one item is the first match"
                " of several entries: use the entry view for recall"
            )
        note = f"  ({'; '.join(notes)})" if notes else ""
        stream.write(f"  {tag}: {figures}  MRR {means['recip_rank']:.4f}{note}\n")
    return 0
