"""The configuration's reference, generated from its models: the JSON Schema (``ragv2
schema config``) and the adapter field tables of docs/configuration.md (kept in sync by a
test)."""

from __future__ import annotations

import json
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from pytest_ragv2.settings import Settings


def config_json_schema() -> dict[str, Any]:
    schema = Settings.model_json_schema()
    schema["properties"].pop("source", None)  # set by the loader, never written
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": "pytest-ragv2 configuration ([tool.ragv2] or ragv2.yaml)",
    }


def config_schema_text() -> str:
    return json.dumps(config_json_schema(), indent=2, ensure_ascii=False) + "\n"


def _type(annotation: Any) -> str:
    text = repr(annotation) if typing.get_origin(annotation) else annotation.__name__
    for noise in ("typing.", "pathlib.", "pytest_ragv2.systems.config.", "NoneType"):
        text = text.replace(noise, "None" if noise == "NoneType" else "")
    return text.replace("|", "\\|")


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    value = field.get_default(call_default_factory=True, validated_data={})
    if isinstance(value, BaseModel):
        return "(table)"
    return f"`{json.dumps(value, default=str)}`"


def field_table(model: type[BaseModel]) -> str:
    lines = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        meaning = (field.description or "").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{name}` | {_type(field.annotation)} | {_default(field)} | {meaning} |")
    return "\n".join(lines)


def adapter_tables() -> str:
    """One table per adapter (and per nested field table of http-json), in table order."""
    from pytest_ragv2.systems.http_json import HttpJsonFields
    from pytest_ragv2.systems.registry import CHAT_ADAPTERS, RETRIEVAL_ADAPTERS

    parts = []
    for kind, table in (("retrieval", RETRIEVAL_ADAPTERS), ("chat", CHAT_ADAPTERS)):
        for name, row in table.items():
            parts.append(f"### `{kind}`: `{name}`\n\n{field_table(row.config)}")
    parts.append(
        f"### `fields` (http-json, and http-json-chat's `evidence_fields`)\n\n"
        f"{field_table(HttpJsonFields)}"
    )
    return "\n\n".join(parts) + "\n"
