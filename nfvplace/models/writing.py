"""Writing a model back out as YAML or JSON that loads into an equal model."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
from pydantic import BaseModel


def dump(model: BaseModel, fmt: str = "yaml") -> str:
    """Serialise a model to YAML or JSON; loading the text gives back an equal model."""
    data = model.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    if "schema" not in data and "schema_" in type(model).model_fields:
        data = {"schema": type(model).model_fields["schema_"].default, **data}
    elif "schema" in data:
        data = {"schema": data.pop("schema"), **data}
    if fmt == "json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        # We read JSON as YAML: escape what YAML refuses raw (controls) or folds (NEL, LS, PS).
        return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    data = _int_pin_keys(data)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    if _YAML_UNSAFE.search(text):  # e.g. U+0085 (NEL) is a line break to YAML: escape it all
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=False, width=100)
    return text


_YAML_UNSAFE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)


def _int_pin_keys(data: Any) -> Any:
    """JSON mode turns `vcpu_pins` keys into strings; YAML can keep them as the integers they are."""
    if isinstance(data, dict):
        return {
            k: ({int(pk): pv for pk, pv in v.items()} if k == "vcpu_pins" else _int_pin_keys(v))
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [_int_pin_keys(item) for item in data]
    return data
