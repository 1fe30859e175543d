"""Layer C — frozen evidence — behind the :class:`~pytest_ragv2.layers.protocol.Layer` protocol.

Every answer model receives the *same* evidence: the package ``ragv2 freeze`` made of one
system's layer-A run (:mod:`pytest_ragv2.layers.frozen.package`), given in the fixed prompt of
:mod:`pytest_ragv2.layers.frozen.prompt`, with no tool on offer. So the answers differ only by the
model, and a case where retrieval found the evidence but the answer is wrong is the model's.

One item is one case × answer model × repetition × language. An answer model is a system's
``chat`` path of the ``openai-chat`` adapter (its knowledge-base tool switched off, the
template's system prompt in place of the system's own). The raw run is written before it is
scored; its transcript carries the frozen items as the turn's evidence, so ``[n]``
citations resolve and ``ragv2 rescore`` needs nothing else. Answers are scored by layer B's
scorers; on top, a model that asks for a tool is an answer failure, and each record carries
``evidence_recall`` — the recall@k of the frozen items themselves — so the report can show,
per case, "retrieval found it" beside "the model answered it".
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pytest_ragv2.layers.chat.layer import ChatLayer
from pytest_ragv2.layers.registry import LAYERS, LayerInfo
from pytest_ragv2.report.text_table import Table
from pytest_ragv2.scoring.metrics import EVIDENCE_RECALL, layer_case_metrics
from pytest_ragv2.systems.abilities import AnswersFromPrompt

if TYPE_CHECKING:
    from pytest_ragv2.config.settings import Settings, SystemSettings
    from pytest_ragv2.deciding.records import ChatRecord, RunRecord
    from pytest_ragv2.gold.allowlist import Allowlist
    from pytest_ragv2.gold.cases import LoadedCase
    from pytest_ragv2.gold.schema import Case
    from pytest_ragv2.layers.frozen.package import EvidencePackage
    from pytest_ragv2.report.model import Summary
    from pytest_ragv2.run.context import RunContext
    from pytest_ragv2.run.keys import RunKey
    from pytest_ragv2.run.raw_models import ScoredRawRun
    from pytest_ragv2.systems.transcripts import Transcript

STATE_PACKAGE = "frozen.package"
STATE_CHATS = "frozen.chats"
EVIDENCE_K = 5


def load_evidence(settings: Settings) -> EvidencePackage:
    """The configured package, verified (``ValueError`` naming what is wrong and where)."""
    from pytest_ragv2.layers.frozen.package import load_package

    if settings.evidence is None:
        raise ValueError(
            "layer C gives every answer model the same frozen evidence: name the package "
            "with --ragv2-evidence=PATH or [tool.ragv2] evidence (make one with "
            "`ragv2 freeze raw-runs/<layer-A run> --system <name>`)"
        )
    return load_package(settings.evidence)


class FrozenLayer(ChatLayer):
    """Layer B's scoring, gates and tables, with layer C's items and evidence."""

    info: LayerInfo = LAYERS["C"]
    case_metrics: tuple[str, ...] = layer_case_metrics(LAYERS["C"])

    def check_systems(self, systems: Mapping[str, SystemSettings], settings: Settings) -> None:
        super().check_systems(systems, settings)
        not_models = sorted(
            name
            for name, system in systems.items()
            if not isinstance(system.chat, AnswersFromPrompt)
        )
        if not_models:
            raise ValueError(
                f"--ragv2-layer=C gives frozen evidence to answer models (openai-chat "
                f"paths); {', '.join(not_models)} has none (leave it out with "
                "--ragv2-systems)"
            )
        load_evidence(settings)

    def serves(self, system: SystemSettings) -> bool:
        return isinstance(system.chat, AnswersFromPrompt)

    def manifest_extras(self, settings: Settings) -> dict[str, Any]:
        from pytest_ragv2.layers.frozen.prompt import TEMPLATE_SHA256, TEMPLATE_VERSION

        package = load_evidence(settings)
        return {
            "frozen_evidence": {
                "path": str(settings.evidence),
                "checksum": package.checksum,
                "source_run_id": package.source_run_id,
                "system": package.system,
                "k": package.k,
            },
            "prompt_template": {"version": TEMPLATE_VERSION, "sha256": TEMPLATE_SHA256},
        }

    def run(self, ctx: RunContext, key: RunKey, loaded: LoadedCase, query: str) -> RunRecord:
        from pytest_ragv2.layers.chat.run import raw_chat_run, skipped_record
        from pytest_ragv2.layers.frozen.prompt import user_message
        from pytest_ragv2.systems.kb_tool import numbered, render_sources, resolve_citations
        from pytest_ragv2.systems.outputs import RunError
        from pytest_ragv2.systems.transcripts import ChatTurn, Transcript

        case, split = loaded.case, loaded.split
        role = ctx.systems[key.system].role
        package = ctx.layer_state.get(STATE_PACKAGE)
        if package is None:
            package = ctx.layer_state[STATE_PACKAGE] = load_evidence(ctx.settings)
        entry = package.entry(case.id, key.lang)
        if entry is None:
            reason = f"the evidence package holds no evidence for {case.id} ({key.lang})"
            ctx.writer.append({"key": key.to_json(), "role": role, "skipped": reason})
            return skipped_record(key, case=case, split=split, role=role, reason=reason)
        items = numbered(list(entry.items))
        prompt = user_message(render_sources(items), query)
        started = time.perf_counter()
        try:
            transcript = self._chat(ctx, key.system).converse([prompt])
        except Exception as exc:  # an adapter bug must cost a record, never the session
            error = RunError("internal", f"{type(exc).__name__}: {exc}")
            transcript = Transcript(
                turns=[ChatTurn(prompt=prompt, error=error)],
                latency_s=time.perf_counter() - started,
            )
        for turn in transcript.turns:
            turn.evidence = list(items)
            turn.citations = resolve_citations(turn.answer, items)
        answering = ctx.system_settings(key.system).chat
        adapter = answering.adapter if answering is not None else "openai-chat"
        raw = raw_chat_run(key, prompts=[prompt], role=role, adapter=adapter, transcript=transcript)
        raw["evidence_package"] = package.checksum
        ctx.writer.append(raw)
        allow = ctx.allowlist
        return frozen_record(
            key,
            case=case,
            split=split,
            role=role,
            transcript=transcript,
            settings=ctx.settings,
            allowlist=allow,
            options=ctx.scoring_options(key.system),
        )

    def _chat(self, ctx: RunContext, system: str) -> Any:
        from pytest_ragv2.layers.frozen.prompt import SYSTEM_PROMPT
        from pytest_ragv2.systems.registry import build_chat

        chats: dict[str, Any] = ctx.layer_state.setdefault(STATE_CHATS, {})
        if system not in chats:
            config = ctx.system_settings(system).chat
            assert isinstance(config, AnswersFromPrompt)  # check_systems refused the others
            frozen = config.answering_from_prompt(SYSTEM_PROMPT)
            chats[system] = build_chat(system, frozen, retriever=lambda: None)
        return chats[system]

    def rescore(
        self,
        key: RunKey,
        raw: ScoredRawRun,
        case: Case,
        split: str,
        settings: Settings,
        allowlist: Allowlist | None,
        kb_path: str,
    ) -> RunRecord:
        from pytest_ragv2.layers.chat.run import scoring_options, skipped_record
        from pytest_ragv2.run.raw_models import ChatRawRun, SkippedRawRun

        if isinstance(raw, SkippedRawRun):
            return skipped_record(key, case=case, split=split, role=raw.role, reason=raw.skipped)
        if not isinstance(raw, ChatRawRun):
            raise ValueError(f"a {key.layer} run holds conversations, not {type(raw).__name__}")
        return frozen_record(
            key,
            case=case,
            split=split,
            role=raw.role,
            transcript=raw.transcript.transcript(),
            settings=settings,
            allowlist=allowlist,
            options=scoring_options(settings.answer_scoring, corpus=settings.corpus),
        )

    def sections(self, summary: Summary) -> list[tuple[str, Table]]:
        from pytest_ragv2.report.tables import (
            answer_sections,
            diagnosis_sections,
            found_and_answered_table,
            quality_sections,
        )

        return [
            *answer_sections(summary),
            (
                "Retrieval found it, did the model answer it? (per case: recall@5 of the "
                "frozen evidence, then each answer model's correct runs)",
                found_and_answered_table(summary.by_case),
            ),
            *quality_sections(summary),
            *diagnosis_sections(summary),
        ]


def frozen_record(
    key: RunKey,
    *,
    case: Case,
    split: str,
    role: str,
    transcript: Transcript,
    settings: Settings,
    allowlist: Allowlist | None,
    options: Any,
) -> ChatRecord:
    """Layer B's record of the answer, plus the frozen evidence's own recall and the rule
    that an answer model asking for a tool has failed its answer; pure."""
    from pytest_ragv2.layers.chat.run import chat_record
    from pytest_ragv2.scoring.retrieval import score_retrieval

    record = chat_record(
        key,
        case=case,
        split=split,
        role=role,
        transcript=transcript,
        allowed_files=allowlist.names if allowlist else None,
        options=options,
    )
    evidence = transcript.turns[0].evidence if transcript.turns else []
    required = case.evidence_for(key.lang)
    recall = (
        score_retrieval(case, evidence, ks=(EVIDENCE_K,), evidence=required).recall[EVIDENCE_K]
        if required
        else None
    )
    metrics = {**record.metrics, EVIDENCE_RECALL.name: recall}
    asked = sorted({call.name for turn in transcript.turns for call in turn.tool_calls})
    if not asked:
        return dataclasses.replace(record, metrics=metrics)
    failure = (
        f"the answer model asked for a tool ({', '.join(asked)}) although layer C offers "
        "none: an answer failure"
    )
    return dataclasses.replace(
        record, metrics=metrics, met=False, reasons=(failure, *record.reasons)
    )


LAYER = FrozenLayer()
