"""Rules about the document itself: syntax, schema, units, kind and dialect (NFV000-NFV009)."""

from __future__ import annotations

from ... import errors
from ..finding import Severity
from ..findings import Rule

FAMILY = "document"

SYNTAX = Rule(
    "NFV000",
    Severity.error,
    FAMILY,
    "The file is not valid YAML or JSON, or uses unsafe YAML (object tags, alias bombs, nesting "
    "deeper than 64 levels)",
    "fix the syntax at the line given; use plain YAML without tags or anchors",
    code=errors.INPUT_SYNTAX,
)
SCHEMA = Rule(
    "NFV001",
    Severity.error,
    FAMILY,
    "The document does not match the schema of its kind (unknown field, wrong type, bad value)",
    "follow the hint: rename the field, fix its type, or use one of the allowed values",
)
DECIMAL_MEMORY_UNIT = Rule(
    "NFV002",
    Severity.warning,
    FAMILY,
    "A memory size is written with a decimal unit (GB, MB) and is read as binary (GiB, MiB)",
    "write the binary unit you mean, e.g. '10GiB' instead of '10GB'",
    "8.2.2.4",
)
UNKNOWN_KIND = Rule(
    "NFV003",
    Severity.error,
    FAMILY,
    "The document has no known 'schema:' and is in no supported dialect",
    "start the document with 'schema: nfvplace/vmd/v1' (or chd, vnf, vm-configuration)",
    code=errors.INPUT_UNKNOWN_KIND,
)
DIALECT = Rule(
    "NFV004",
    Severity.info,
    FAMILY,
    "The document is in a vendor dialect and was converted to a VM Descriptor to be checked",
    "nothing to fix; 'nfvplace lint' checks the converted descriptor",
)
DIALECT_LOSS = Rule(
    "NFV005",
    Severity.warning,
    FAMILY,
    "A field of the dialect that bears on placement has no nfvplace equivalent and is not carried",
    "check that the converted descriptor says what you mean, or write it in nfvplace's own "
    "format (nfvplace/vmd/v1 for a VM, nfvplace/chd/v1 for a host)",
)
DIALECT_ASSUMED = Rule(
    "NFV006",
    Severity.info,
    FAMILY,
    "A field of the dialect was read with an assumption (the dialect's default, or the nearest "
    "thing nfvplace can say)",
    "check that the converted descriptor says what you mean; 'nfvplace convert' prints it",
)
DIALECT_MISSING = Rule(
    "NFV007",
    Severity.warning,
    FAMILY,
    "The dialect document does not say something placement needs (a flavor by name only, a "
    "'${...}' placeholder, a VDU without sizes); what it says is still read",
    "give the value in the file, or convert it and complete the nfvplace descriptor",
)
UNREADABLE = Rule(
    "NFV009",
    Severity.error,
    FAMILY,
    "The file cannot be read or is too large (missing, not UTF-8, larger than 8 MiB, or more "
    "than 50,000 values)",
    "check the path and permissions; save the file as UTF-8",
    code=errors.INPUT_UNREADABLE,
)

RULES = (
    SYNTAX,
    SCHEMA,
    DECIMAL_MEMORY_UNIT,
    UNKNOWN_KIND,
    DIALECT,
    DIALECT_LOSS,
    DIALECT_ASSUMED,
    DIALECT_MISSING,
    UNREADABLE,
)
