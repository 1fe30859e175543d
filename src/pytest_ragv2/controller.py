"""The controller's side of a session: gather records, decide the verdict, write reports.

Registered only in the controlling process (never in an xdist worker). Records arrive on
test reports, so a serial run and a ``-n N`` run aggregate exactly the same data.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from pytest_ragv2.collect import INVALID_ITEM_NAME, CaseItem
from pytest_ragv2.context import RunContext
from pytest_ragv2.decision import decide
from pytest_ragv2.gates import GateResult
from pytest_ragv2.layer_registry import layer_info, load_layer
from pytest_ragv2.rawruns import build_manifest, write_manifest
from pytest_ragv2.report.page import render_page
from pytest_ragv2.report.summary import build_summary, render_summary_markdown, write_summary
from pytest_ragv2.report.terminal import write_terminal_summary
from pytest_ragv2.run_record import RunRecord, as_record
from pytest_ragv2.session import SessionResults

RECORD_ATTRIBUTE = "ragv2"
KEEP_STATUSES = (
    pytest.ExitCode.INTERRUPTED,
    pytest.ExitCode.INTERNAL_ERROR,
    pytest.ExitCode.USAGE_ERROR,
)


@dataclass(slots=True)
class Controller:
    ctx: RunContext
    options: Mapping[str, Any] = field(default_factory=dict)
    records: list[RunRecord] = field(default_factory=list)
    expected_runs: int | None = None
    other_failures: int = 0
    summary: dict[str, Any] | None = None
    gates: list[GateResult] = field(default_factory=list)
    locations: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        # numpy (for the intervals at the end) loads while the runs wait on their systems
        threading.Thread(target=_warm_imports, name="ragv2-warm-imports", daemon=True).start()

    def set_expected(self, count: int) -> None:
        """The number of case runs collected; the manifest is written before the first."""
        self.expected_runs = count
        if count:
            write_run_manifest(self.ctx, self.options, expected_runs=count)

    def count_expected(self, items: Sequence[pytest.Item]) -> None:
        self.set_expected(sum(isinstance(item, CaseItem) for item in items))

    def add_report(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        record = getattr(report, RECORD_ATTRIBUTE, None)
        if record is not None:
            self.records.append(as_record(record))  # read back once from the report's JSON
        elif report.failed and not report.nodeid.endswith(INVALID_ITEM_NAME):
            # an ordinary test (or a collection error) failed: the gates cannot clear that
            self.other_failures += 1

    def case_errors(self) -> list[str]:
        return [str(error) for error in self.ctx.catalog.errors] + self.ctx.allowlist_errors

    def finish(self, session: pytest.Session) -> None:
        if not self.expected_runs and not self.records:
            return  # no case was collected: pytest's own status stands, nothing is written
        status = session.exitstatus
        interrupted = status == pytest.ExitCode.INTERRUPTED
        decision = decide(
            self.records,
            layer=self.ctx.layer,
            settings=self.ctx.settings,
            roles={name: system.role for name, system in self.ctx.systems.items()},
            configured_roles=self.ctx.configured_roles,
            expected_runs=self.expected_runs,
            case_errors=self.case_errors(),
            allowlist_present=self.ctx.allowlist is not None,
        )
        results, self.gates, passed = decision.results, decision.gates, decision.passed
        if status not in KEEP_STATUSES:
            ok = passed and not self.other_failures
            status = pytest.ExitCode.OK if ok else pytest.ExitCode.TESTS_FAILED
            session.exitstatus = status
        # a retrieval layer's figures have a ceiling: what the systems store at all
        ceilings = {} if layer_info(self.ctx.layer).chat else self._ceilings(results)
        for name, found in ceilings.items():
            results.systems[name]["ceiling"] = found["ceiling"]
        self.summary = build_summary(
            run_id=self.ctx.run_id,
            seed=self.ctx.seed,
            layer=self.ctx.layer,
            results=results,
            gates=self.gates,
            passed=passed,
            exit_status=int(status),
            interrupted=interrupted,
            descriptors={name: system.descriptors for name, system in self.ctx.systems.items()},
            raw_runs_dir=_relative(self.ctx.run_dir, self.ctx.rootdir),
        )
        if ceilings:
            self.summary["attainable"] = ceilings
        path = write_summary(
            self.ctx.report_dir,
            self.summary,
            render_summary_markdown(self.summary, self.gates),
            render_page(self.summary, self.gates),
        )
        self.locations = [
            f"summary: {path} (and summary.md, report.html)",
            f"raw runs: {self.ctx.run_dir}",
        ]
        if self.ctx.preflight is not None:
            self.locations.extend(
                f"preflight warning: {finding}" for finding in self.ctx.preflight.warnings
            )
        if self.other_failures:
            self.locations.append(
                f"{self.other_failures} ordinary test(s) or collector(s) failed besides the "
                "gold cases: the exit status is 1 whatever the gates say"
            )

    def _ceilings(self, results: SessionResults) -> dict[str, dict[str, Any]]:
        """Each system's attainable ceiling (:mod:`pytest_ragv2.attainable`), for the
        systems whose service lists what it stores."""
        from pytest_ragv2.attainable import CaseGold, ceiling, fetch_stored_chunks

        allowed = sorted(self.ctx.allowlist.file_ids) if self.ctx.allowlist else []
        found: dict[str, dict[str, Any]] = {}
        for name in results.systems:
            stored = self.ctx.preflight.stored_chunks.get(name) if self.ctx.preflight else None
            if stored is None:
                try:  # the demo may not have started; a listing is never worth a report
                    retrieval = self.ctx.system_settings(name).retrieval
                except Exception:
                    continue
                stored = fetch_stored_chunks(name, retrieval, allowed)
            if stored is None:
                continue
            ran = sorted({(r.key.case, r.key.lang) for r in results.records_of(name)})
            cases = []
            for case_id, lang in ran:
                loaded = self.ctx.catalog.find(case_id)
                if loaded is not None:
                    case = loaded.case
                    cases.append(
                        CaseGold(case_id, case.category, lang, tuple(case.evidence_for(lang)))
                    )
            found[name] = ceiling(cases, stored).to_json()
        return found

    def terminal_summary(self, reporter: Any) -> None:
        if self.summary is None:
            return
        write_terminal_summary(
            reporter.write_sep, reporter.write_line, self.summary, self.gates, self.locations
        )


def write_run_manifest(
    ctx: RunContext, options: Mapping[str, Any], *, expected_runs: int | None = None
) -> None:
    """The fair-run record, written before the first run: versions, hashes, descriptors."""
    settings = ctx.settings
    gold_files = sorted(settings.gold.glob("*.y*ml")) if settings.gold.is_dir() else []
    case_files = sorted(settings.cases.rglob("*.y*ml")) if settings.cases.is_dir() else []
    systems = {
        name: {
            "role": system.role,
            "slot": system.slot,
            "descriptors": system.descriptors,
            "retrieval": system.retrieval.model_dump(mode="json") if system.retrieval else None,
            "chat": system.chat.model_dump(mode="json") if system.chat else None,
            "capabilities": system.capabilities.model_dump(mode="json"),
        }
        for name, system in ctx.systems.items()
    }
    manifest = build_manifest(
        run_id=ctx.run_id,
        seed=ctx.seed,
        rootdir=ctx.rootdir,
        config_path=settings.source,
        case_files=case_files,
        gold_files=gold_files,
        allowlist=settings.allowlist,
        systems=systems,
        expected_runs=expected_runs,
        options={
            **options,
            "configured_roles": ctx.configured_roles,
            "judge": settings.judge.model_dump(mode="json") if settings.judge else None,
            "demo_faults": settings.demo_faults,
            "layer": ctx.layer,
            "repetitions": settings.repetitions_per_run,
            "splits": settings.splits,
            "languages": settings.languages,
        },
    )
    manifest.update(load_layer(ctx.layer).manifest_extras(settings))
    write_manifest(ctx.run_dir, manifest)


def _warm_imports() -> None:
    import numpy  # noqa: F401


def _relative(path: Path, root: Path) -> Path:
    """A path as the report shows it: relative to the rootdir when inside it."""
    try:
        return path.relative_to(root)
    except ValueError:
        return path
