"""A raw-run line as a typed model: what ``runs-<worker>.jsonl`` holds, one kind per line.

The writers build each line from the typed results (``layers/retrieval/run.raw_run``, the
chat layer's ``raw_run``); these models are what a line is read back as, once, by
``ragv2 rescore`` and the exports, and the JSON Schema committed in
``schemas/raw-run.schema.json`` (``ragv2 schema raw-run``). Each kind forbids keys it does not
declare, so a writer that adds one without declaring it fails the schema test; the keys added
after the first format are optional, so older raw runs still read.

The wire itself (an exchange's request and response, a tool call's arguments) is kept as it
came: any JSON value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Discriminator, Field, JsonValue, Tag, TypeAdapter

from pytest_ragv2.run.keys import RunKey
from pytest_ragv2.systems.outputs import ErrorKind, RetrievedItem, RunError
from pytest_ragv2.systems.transcripts import Transcript


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RawKey(_Line):
    """Which item a line belongs to (``RunKey.to_json``)."""

    case: str
    system: str
    rep: int = Field(ge=1)
    lang: str
    layer: str | None = None  # lines written before several layers ran in one session

    def run_key(self, layer: str) -> RunKey:
        """The item's key; ``layer`` is the run's own where the line names none."""
        return RunKey(
            case=self.case,
            system=self.system,
            rep=self.rep,
            lang=self.lang,
            layer=self.layer or layer,
        )


class RawError(_Line):
    kind: str
    message: str
    status_code: int | None = None

    def run_error(self) -> RunError:
        return RunError(cast(ErrorKind, self.kind), self.message, self.status_code)


class RawExchange(_Line):
    """One request/response pair on the wire, secrets redacted."""

    request: dict[str, JsonValue]
    status_code: int | None
    response_body: JsonValue
    latency_s: float
    attempt: int = 1


class RawItem(_Line):
    """One retrieved item (``RetrievedItem.to_json``)."""

    rank: int
    text: str = ""
    file_id: str | None = None
    filename: str | None = None
    page: int | None = None
    section: str | None = None
    table: str | None = None
    row: int | None = None
    row_key: str | None = None
    score: float | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)

    def retrieved(self) -> RetrievedItem:
        return RetrievedItem(**self.model_dump())


class RawTurn(_Line):
    """One turn of a conversation (``ChatTurn.to_json``)."""

    prompt: str
    answer: str
    tool_calls: list[dict[str, JsonValue]]
    citations: list[dict[str, JsonValue]]
    latency_s: float
    usage: dict[str, int]
    error: RawError | None
    exchanges: list[RawExchange]
    finish_reason: str | None = None
    ran: bool = True
    evidence: list[RawItem] = Field(default_factory=list)
    partial_answer: str = ""
    warnings: list[str] = Field(default_factory=list)
    thread_id: str | None = None
    usage_running_total: dict[str, int] = Field(default_factory=dict)
    stderr_tail: str = ""
    answer_refs: bool = False  # long answers: exchange strings refer to the answer's text


class RawTranscript(_Line):
    turns: list[RawTurn]
    latency_s: float

    def transcript(self) -> Transcript:
        """The conversation as the adapters return it; the transcript's own reader makes it
        (the answers' references in long exchanges resolved), from what this model read."""
        return Transcript.from_json(self.model_dump())


class RetrievalRawRun(_Line):
    """One retrieval call (layer A)."""

    key: RawKey
    role: str
    adapter: str
    query: str
    finished_at: str
    latency_s: float
    error: RawError | None
    items: list[RawItem]
    exchanges: list[RawExchange]


class ChatRawRun(_Line):
    """One conversation (layers B and C; C names the evidence package it answered from)."""

    key: RawKey
    role: str
    adapter: str
    prompts: list[str]
    finished_at: str
    latency_s: float
    error: RawError | None
    transcript: RawTranscript
    evidence_package: str | None = None


class SkippedRawRun(_Line):
    """An item skipped on its system (a capability the case needs), with the reason."""

    key: RawKey
    role: str
    skipped: str


class JudgeRawRun(_Line):
    """The advisory judge's grade of a run, written after it (never decides anything)."""

    key: RawKey
    judge: dict[str, JsonValue] | None


def _kind(line: Any) -> str:
    fields = line if isinstance(line, dict) else vars(line)
    if "skipped" in fields:
        return "skipped"
    if "transcript" in fields:
        return "chat"
    if "judge" in fields:
        return "judge"
    return "retrieval"


RawRun = Annotated[
    Annotated[RetrievalRawRun, Tag("retrieval")]
    | Annotated[ChatRawRun, Tag("chat")]
    | Annotated[SkippedRawRun, Tag("skipped")]
    | Annotated[JudgeRawRun, Tag("judge")],
    Discriminator(_kind),
]

RAW_RUN: TypeAdapter[RawRun] = TypeAdapter(RawRun)
# what a layer scores again: the lines of one item's run (a judge's grade is not a run)
ScoredRawRun = RetrievalRawRun | ChatRawRun | SkippedRawRun
KINDS = Literal["retrieval", "chat", "skipped", "judge"]


def read_raw_run(line: dict[str, Any]) -> RawRun:
    """One line read as its kind (raises pydantic.ValidationError naming the field)."""
    return RAW_RUN.validate_python(line)


def raw_run_schema() -> dict[str, Any]:
    """The JSON Schema of a raw-run line."""
    schema = RAW_RUN.json_schema()
    schema["title"] = "pytest-ragv2 raw-run line"
    schema["description"] = (
        "One line of raw-runs/<run-id>/runs-<worker>.jsonl(.gz): a retrieval call, a "
        "conversation, a skipped item or the advisory judge's grade."
    )
    return schema
