"""Per-process run state: settings, the case catalog, retrievers and the raw run writer.

One ``RunContext`` lives in each process (the controller and every xdist worker). The
controller chooses the run id and seed and sends them to workers, so every process builds
the same item order and writes into the same run folder.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ragv2.config.inputs import present
from pytest_ragv2.config.located_yaml import CaseLoadError
from pytest_ragv2.config.settings import Settings, SystemSettings
from pytest_ragv2.deciding.records import JudgeGrade, RunRecord
from pytest_ragv2.gold.allowlist import Allowlist, load_allowlist
from pytest_ragv2.gold.cases import CaseFile, Catalog, load_catalog
from pytest_ragv2.gold.schema import Case
from pytest_ragv2.layers.registry import demo_layer, layer_info
from pytest_ragv2.layers.retrieval.run import item_record, raw_run
from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.run.rawruns import RawRunWriter, ShippingWriter
from pytest_ragv2.run.resume import Resumption, SessionLock
from pytest_ragv2.run.shards import Shard, ShardPlan
from pytest_ragv2.systems.base import Retriever
from pytest_ragv2.systems.outputs import RetrievalResult, RunError
from pytest_ragv2.systems.registry import ChatSystem, build_chat, build_retriever
from pytest_ragv2.systems.transcripts import ChatTurn, Transcript

if TYPE_CHECKING:  # the chat layer's scorers load only when a chat layer runs
    from pytest_ragv2.layers.chat.judge import Judge
    from pytest_ragv2.run.preflight import PreflightReport
    from pytest_ragv2.scoring.answers import AnswerScoringOptions


def load_run_allowlist(settings: Settings) -> Allowlist | None:
    """The configured allow-list; None when nothing is at its path. Raises CaseLoadError
    (one located error per problem) when it is invalid, or is there but is no regular
    file (a FIFO, a folder, a link to a device: never read)."""
    path = settings.allowlist
    if path is None or not present(path):
        return None
    return load_allowlist(path)


def load_run_catalog(settings: Settings, allowlist: Allowlist | None) -> Catalog:
    """The configured cases with the configured gold merged in."""
    gold = settings.gold if settings.gold.is_dir() else None
    return load_catalog(settings.cases, gold, allowlist=allowlist, categories=settings.categories)


@dataclass(slots=True)
class RunContext:
    settings: Settings
    rootdir: Path
    layer: str
    run_id: str
    seed: int
    worker: str
    systems: dict[str, SystemSettings]
    demo_url: Callable[[], str] | None = None
    configured_roles: dict[str, str] = field(default_factory=dict)
    allowlist_errors: list[str] = field(default_factory=list)
    _catalog: Catalog | None = None
    _allowlist: Allowlist | None = None
    _allowlist_loaded: bool = False
    _retrievers: dict[str, Retriever] = field(default_factory=dict)
    _chats: dict[str, ChatSystem] = field(default_factory=dict)
    _scoring_options: dict[str, AnswerScoringOptions] = field(default_factory=dict)
    _judge: Judge | None = None
    _writer: RawRunWriter | None = None
    _files_by_path: dict[Path, CaseFile] | None = None
    registered_marks: set[str] = field(default_factory=set)
    preflight: PreflightReport | None = None
    # what a layer keeps for the process (layer C: the verified package, its answer models)
    layer_state: dict[str, Any] = field(default_factory=dict)
    # the folders this session created, removed at its end if it never wrote into them
    created_dirs: tuple[Path, ...] = ()
    resumption: Resumption | None = None  # --ragv2-resume: the run's earlier sessions
    session_lock: SessionLock | None = None  # the controller's hold on the run folder
    write_failure: str | None = None  # the run's manifest could not be written: no run starts
    ship_raw_runs: bool = False  # a worker on another host: its reports carry its raw lines
    shard: Shard | None = None  # --ragv2-shard=I/N: this session runs one share of the cases
    # workers on other hosts: what each host said of itself (its checkout's commit)
    remote_hosts: dict[str, dict[str, Any]] = field(default_factory=dict)
    _shard_plan: ShardPlan | None = None

    @property
    def layers(self) -> tuple[str, ...]:
        """The layers of this session, in the order given (``layer`` reads "A" or "A,B,C")."""
        return tuple(self.layer.split(","))

    @property
    def run_dir(self) -> Path:
        return self.settings.raw_runs / self.run_id

    @property
    def report_dir(self) -> Path:
        return self.settings.reports / self.run_id

    @property
    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = load_run_catalog(self.settings, self.allowlist)
        return self._catalog

    @property
    def shard_plan(self) -> ShardPlan | None:
        """This shard's share of the plan: the cases of the selected splits at the
        session's layers, dealt as every shard job deals them (run/shards.py)."""
        if self.shard is not None and self._shard_plan is None:
            self._shard_plan = ShardPlan.of_catalog(
                self.shard, self.catalog, self.settings.splits, self.layers
            )
        return self._shard_plan

    def in_shard(self, case_id: str) -> bool:
        plan = self.shard_plan
        return plan is None or case_id in plan.cases

    def case_file(self, path: Path) -> CaseFile | None:
        if self._files_by_path is None:
            self._files_by_path = {loaded.path.resolve(): loaded for loaded in self.catalog.files}
        return self._files_by_path.get(path.resolve())

    @property
    def allowlist(self) -> Allowlist | None:
        """The corpus allow-list; None when there is none or it cannot be read (its errors
        are kept in ``allowlist_errors`` and fail the gold_valid gate)."""
        if not self._allowlist_loaded:
            self._allowlist_loaded = True
            try:
                self._allowlist = load_run_allowlist(self.settings)
            except CaseLoadError as exc:
                self.allowlist_errors = [str(error) for error in exc.errors] or [str(exc)]
        return self._allowlist

    def system_settings(self, system: str) -> SystemSettings:
        """A system's settings, with the demo's real URL once the demo has started."""
        settings = self.systems[system]
        if self.demo_url is not None:
            from pytest_ragv2.run.demo import demo_systems

            allowed = sorted(self.allowlist.file_ids) if self.allowlist else []
            faults = self.settings.demo_faults
            settings = demo_systems(
                self.demo_url(),
                demo_layer(self.layers),
                allowed,
                faults,
                self.settings.demo_timeout_s,
                self.settings.corpus,
                self.run_dir / "reference-threads",
            )[system]
        return settings

    def retriever(self, system: str) -> Retriever:
        retriever = self._retrievers.get(system)
        if retriever is None:
            settings = self.system_settings(system)
            config = settings.retrieval
            if config is None:
                raise LookupError(f"system {system!r} has no retrieval configuration")
            allowed = sorted(self.allowlist.file_ids) if self.allowlist else []
            retriever = build_retriever(system, config, file_ids=allowed)
            self._locate_field_paths(system, retriever)
            self._retrievers[system] = retriever
        return retriever

    def _locate_field_paths(self, system: str, retriever: Retriever) -> None:
        """An http-json system's field-path warning points at the configuration's line."""
        from pytest_ragv2.systems.http_json import FieldPathCheck

        paths = getattr(retriever, "paths", None)
        if isinstance(paths, FieldPathCheck):
            settings = self.settings
            paths.where = lambda field: settings.where(
                "systems", system, "retrieval", "fields", field
            )

    @property
    def raw_write_failure(self) -> str | None:
        """Why this process's raw runs could not be written, once they could not."""
        if self.write_failure is not None:
            return self.write_failure
        return self._writer.failure if self._writer is not None else None

    @property
    def writer(self) -> RawRunWriter:
        if self._writer is None:
            kind = ShippingWriter if self.ship_raw_runs else RawRunWriter
            self._writer = self.raw_run_writer(self.worker, kind)
        return self._writer

    def raw_run_writer(self, worker: str, kind: type[RawRunWriter] = RawRunWriter) -> RawRunWriter:
        """The writer of one process's raw-run file (the controller writes, with one of
        these, the lines a worker on another host sends)."""
        generation = self.resumption.generation if self.resumption else 0
        # a chat layer's runs (whole conversations, tool results) are stored compressed
        chat = any(layer_info(layer).chat for layer in self.layers)
        return kind(self.run_dir, worker, generation, compress=chat)

    def take_shipped_lines(self) -> list[str]:
        """A worker on another host: the raw lines written since the last report."""
        writer = self._writer
        return writer.take() if isinstance(writer, ShippingWriter) else []

    def run_retrieval(self, key: RunKey, case: Case, split: str, query: str) -> RunRecord:
        """Layer A for one item: call, keep the raw run on disk, then score it."""
        system = self.systems[key.system]
        started = time.perf_counter()
        try:
            k = system.retrieval.k if system.retrieval else 10
            result = self.retriever(key.system).retrieve(query, k)
        except Exception as exc:  # an adapter bug must cost a record, never the session
            result = RetrievalResult(
                items=[],
                latency_s=time.perf_counter() - started,
                error=RunError("internal", f"{type(exc).__name__}: {exc}"),
            )
        adapter = system.retrieval.adapter if system.retrieval else "none"
        raw = raw_run(key, query=query, role=system.role, adapter=adapter, result=result)
        self.writer.append(raw)
        allow = self.allowlist
        return item_record(
            key,
            case=case,
            split=split,
            role=system.role,
            latency_s=result.latency_s,
            error=result.error,
            items=result.items,
            allowed_file_ids=allow.file_ids if allow else None,
            allowed_filenames=allow.filenames if allow else None,
            recall_k=self.settings.item_pass.recall_k,
        )

    def chat(self, system: str) -> ChatSystem:
        chat = self._chats.get(system)
        if chat is None:
            settings = self.system_settings(system)
            if settings.chat is None:
                raise LookupError(f"system {system!r} has no chat configuration")

            def retriever() -> Retriever | None:
                return self.retriever(system) if settings.retrieval is not None else None

            chat = build_chat(system, settings.chat, retriever=retriever)
            self._chats[system] = chat
        return chat

    def run_chat(self, key: RunKey, case: Case, split: str) -> RunRecord:
        """Layer B for one item: one fresh conversation, its raw run on disk, then scored."""
        from pytest_ragv2.layers.chat.run import (
            chat_record,
            raw_chat_run,
            scoring_failed_record,
            skipped_record,
            unserved_setup,
        )

        system = self.systems[key.system]
        unserved = unserved_setup(case, system.capabilities)
        if unserved is not None:
            self.writer.append({"key": key.to_json(), "role": system.role, "skipped": unserved})
            return skipped_record(key, case=case, split=split, role=system.role, reason=unserved)
        prompts = case.prompts_for(key.lang)
        started = time.perf_counter()
        try:
            transcript = self.chat(key.system).converse(prompts)
        except Exception as exc:  # an adapter bug must cost a record, never the session
            error = RunError("internal", f"{type(exc).__name__}: {exc}")
            turns = [ChatTurn(prompt=prompts[0], error=error)]
            turns += [ChatTurn(prompt=prompt, ran=False) for prompt in prompts[1:]]
            transcript = Transcript(turns=turns, latency_s=time.perf_counter() - started)
        adapter = system.chat.adapter if system.chat else "none"
        raw = raw_chat_run(
            key, prompts=prompts, role=system.role, adapter=adapter, transcript=transcript
        )
        self.writer.append(raw)
        allow = self.allowlist
        try:
            record = chat_record(
                key,
                case=case,
                split=split,
                role=system.role,
                transcript=transcript,
                allowed_files=allow.names if allow else None,
                options=self.scoring_options(key.system),
            )
        except Exception as exc:  # a scorer bug costs this run's score, never its record
            record = scoring_failed_record(
                key, case=case, split=split, role=system.role, transcript=transcript, exc=exc
            )
        if self.settings.judge is not None:
            try:
                judged = self.judge.grade(case, key.lang, transcript)
            except Exception as exc:  # advisory: a broken judge costs nothing
                judged = JudgeGrade(None, error=f"{exc!r}"[:300])
            self.writer.append({"key": key.to_json(), "judge": judged.to_json()})
            record = dataclasses.replace(record, judge=judged)
        return record

    @property
    def judge(self) -> Judge:
        if self._judge is None:
            from pytest_ragv2.layers.chat.judge import Judge

            assert self.settings.judge is not None
            self._judge = Judge(self.settings.judge)
        return self._judge

    def scoring_options(self, system: str) -> AnswerScoringOptions:
        options = self._scoring_options.get(system)
        if options is None:
            from pytest_ragv2.layers.chat.run import scoring_options

            kb_path = self.systems[system].capabilities.kb_path
            options = scoring_options(self.settings.answer_scoring, kb_path, self.settings.corpus)
            self._scoring_options[system] = options
        return options

    def close(self) -> None:
        if self._judge is not None:
            self._judge.close()
        for chat in self._chats.values():
            chat.close()
        self._chats.clear()
        for retriever in self._retrievers.values():
            retriever.close()
        self._retrievers.clear()
        if self._writer is not None:
            self._writer.close()
