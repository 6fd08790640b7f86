"""A fleet for the web-view tests: two example hosts and the example vRAN DU placed on one of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nfvplace

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
HOSTS = ("dell-r740-2s-gold-6230-snc2.yaml", "cisco-ucs-2s-manyvfs.yaml")


def document(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(nfvplace.dump(nfvplace.load(path), "json"))  # type: ignore[arg-type]
    return data


def host_documents() -> list[dict[str, Any]]:
    return [document(EXAMPLES / "hosts" / name) for name in HOSTS]


def du_document() -> dict[str, Any]:
    return document(EXAMPLES / "vms" / "vran-du.yaml")


def du_yaml() -> str:
    return (EXAMPLES / "vms" / "vran-du.yaml").read_text()
