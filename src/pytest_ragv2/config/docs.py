"""The configuration's reference, generated from its models: the JSON Schema (``ragv2
schema config``) and the adapter field tables of docs/configuration.md (kept in sync by a
test)."""

from __future__ import annotations

import json
import re
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from pytest_ragv2.config.settings import Settings


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
    text = _SERVICE_URL.sub("str (http(s) URL)", text)
    text = _OPTIONAL.sub(r"\1 | None", text)
    return text.replace("|", "\\|")


_SERVICE_URL = re.compile(r"Annotated\[str, AfterValidator\(func=<function _service_url [^>]*>\)\]")
_OPTIONAL = re.compile(r"^Optional\[(.*)\]$")


_BOUND_SIGNS = (("gt", "<"), ("ge", "≤"), ("lt", "<"), ("le", "≤"))


def _bounds(field: FieldInfo) -> str:
    """ " (0 < x ≤ 3600)" from a field's numeric constraints; " (http(s) URL)" for a URL."""
    from pytest_ragv2.systems.config import is_service_url

    if any(is_service_url(item) for item in field.metadata):
        return " (http(s) URL)"
    found = {
        name: getattr(item, name)
        for item in field.metadata
        for name, _ in _BOUND_SIGNS
        if getattr(item, name, None) is not None
    }
    lows = [f"{found[name]:g} {sign} " for name, sign in _BOUND_SIGNS[:2] if name in found]
    highs = [f" {sign} {found[name]:g}" for name, sign in _BOUND_SIGNS[2:] if name in found]
    low, high = (lows or [""])[0], (highs or [""])[0]
    return f" ({low}x{high})" if low or high else ""


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
        kind = _type(field.annotation) + _bounds(field)
        lines.append(f"| `{name}` | {kind} | {_default(field)} | {meaning} |")
    return "\n".join(lines)


def adapter_tables() -> str:
    """One table per adapter (and per nested field table of http-json), in table order."""
    from pytest_ragv2.systems.config import RetryPolicy
    from pytest_ragv2.systems.http_json import HttpJsonFields
    from pytest_ragv2.systems.registry import CHAT_ADAPTERS, RETRIEVAL_ADAPTERS

    parts = []
    for kind, table in (("retrieval", RETRIEVAL_ADAPTERS), ("chat", CHAT_ADAPTERS)):
        for name, row in table.items():
            parts.append(f"### `{kind}`: `{name}`\n\n{field_table(row.config)}")
    parts.append(f"### `retry` (every HTTP adapter)\n\n{field_table(RetryPolicy)}")
    parts.append(
        f"### `fields` (http-json, and http-json-chat's `evidence_fields`)\n\n"
        f"{field_table(HttpJsonFields)}"
    )
    return "\n\n".join(parts) + "\n"
