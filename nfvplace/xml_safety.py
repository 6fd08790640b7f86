"""The one parser for XML that nfvplace did not write (hwloc exports, SOL006 documents): entities
never resolved, no network, no DTD, no huge trees, comments and processing instructions dropped.
lxml is imported on first use (lint and the dialects start without it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml import etree


def untrusted_parser() -> etree.XMLParser:
    from lxml import etree

    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
    )
