"""Stable error codes and the exceptions that carry them.

Codes are part of the public contract (CLI, library and REST API say the same thing); they are listed
with their meaning in `docs/errors.md`. Add codes, never rename them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .lint.finding import Finding

# Loading descriptors
INPUT_UNREADABLE = "nfvplace.input.unreadable"
INPUT_TOO_LARGE = "nfvplace.input.too_large"
INPUT_SYNTAX = "nfvplace.input.syntax"
INPUT_UNSAFE = "nfvplace.input.unsafe"
INPUT_UNKNOWN_KIND = "nfvplace.input.unknown_kind"
INPUT_INVALID = "nfvplace.input.invalid"
INPUT_REFERENCE = "nfvplace.input.reference"

# Command line usage and output
USAGE_INVALID_OPTION = "nfvplace.usage.invalid_option"
USAGE_NO_DESCRIPTORS = "nfvplace.usage.no_descriptors"
USAGE_MISSING_EXTRA = "nfvplace.usage.missing_extra"
OUTPUT_UNWRITABLE = "nfvplace.output.unwritable"

# Claims (claims.claim)
CLAIM_CONFLICT = "nfvplace.claim.conflict"

# Placement
PLACEMENT_NO_FIT = "nfvplace.placement.no_fit"
PLACEMENT_CONCURRENT_UPDATE = "nfvplace.placement.concurrent_update"
PLACEMENT_INVALID_POLICY = "nfvplace.placement.invalid_policy"

# Placement service (REST API)
PLACEMENT_NOT_FOUND = "nfvplace.placement.not_found"
PLACEMENT_IDEMPOTENCY_KEY_REUSED = "nfvplace.placement.idempotency_key_reused"
PLACEMENT_RELEASED = "nfvplace.placement.released"
HOST_NOT_FOUND = "nfvplace.host.not_found"
HOST_IN_USE = "nfvplace.host.in_use"
HOST_ID_MISMATCH = "nfvplace.host.id_mismatch"
SERVICE_UNAUTHORIZED = "nfvplace.service.unauthorized"
SERVICE_FORBIDDEN = "nfvplace.service.forbidden"
SERVICE_NOT_FOUND = "nfvplace.service.not_found"
SERVICE_METHOD_NOT_ALLOWED = "nfvplace.service.method_not_allowed"
SERVICE_UNSUPPORTED_MEDIA_TYPE = "nfvplace.service.unsupported_media_type"
SERVICE_INVALID_REQUEST = "nfvplace.service.invalid_request"
SERVICE_UNKNOWN_HOST_REF = "nfvplace.service.unknown_host_ref"
SERVICE_UNAVAILABLE = "nfvplace.service.unavailable"
SERVICE_INTERNAL = "nfvplace.service.internal"
SERVICE_CONFIG = "nfvplace.service.config"

# The service's database (transient: answered 503 with Retry-After)
STORE_UNAVAILABLE = "nfvplace.store.unavailable"
STORE_BUSY = "nfvplace.store.busy"
STORE_FULL = "nfvplace.store.full"
STORE_READ_ONLY = "nfvplace.store.read_only"
STORE_OUTCOME_UNKNOWN = "nfvplace.store.outcome_unknown"
STORE_UNSUPPORTED = "nfvplace.store.unsupported"

# The service's client (nfvplace hosts push, agents)
CLIENT_UNREACHABLE = "nfvplace.client.unreachable"

# Discovery
DISCOVERY_FAILED = "nfvplace.discovery.failed"

# Host agent (nfvplace agent)
AGENT_DRIFT = "nfvplace.agent.drift"
AGENT_UNREACHABLE = "nfvplace.agent.unreachable"
AGENT_REFUSED = "nfvplace.agent.refused"
# Kubernetes extender
KUBERNETES_NOT_ASSUMED = "nfvplace.kubernetes.not_assumed"
KUBERNETES_RETRY = "nfvplace.kubernetes.retry"
KUBERNETES_BIND_REFUSED = "nfvplace.kubernetes.bind_refused"
KUBERNETES_BIND_FAILED = "nfvplace.kubernetes.bind_failed"
KUBERNETES_NO_CLUSTER = "nfvplace.kubernetes.no_cluster"

# Rendering
RENDER_UNSUPPORTED = "nfvplace.render.unsupported"
RENDER_INVALID = "nfvplace.render.invalid"
RENDER_MISMATCH = "nfvplace.render.mismatch"


@dataclass(frozen=True, slots=True)
class Code:
    """How one stable code shows on each surface: the HTTP status of the REST API's problem
    document and the exit code of the command line (the library raises it as `.code`)."""

    http: int
    exit: int


# THE table of codes: every code above, once. docs/errors.md documents each (a test checks both).
CODES: dict[str, Code] = {
    INPUT_UNREADABLE: Code(422, 1),
    INPUT_TOO_LARGE: Code(413, 1),
    INPUT_SYNTAX: Code(422, 1),
    INPUT_UNSAFE: Code(422, 1),
    INPUT_UNKNOWN_KIND: Code(422, 1),
    INPUT_INVALID: Code(422, 1),
    INPUT_REFERENCE: Code(422, 1),
    USAGE_INVALID_OPTION: Code(400, 2),
    USAGE_NO_DESCRIPTORS: Code(400, 2),
    USAGE_MISSING_EXTRA: Code(500, 2),
    OUTPUT_UNWRITABLE: Code(500, 1),
    CLAIM_CONFLICT: Code(409, 1),
    PLACEMENT_NO_FIT: Code(409, 3),
    PLACEMENT_CONCURRENT_UPDATE: Code(409, 1),
    PLACEMENT_INVALID_POLICY: Code(422, 2),
    PLACEMENT_NOT_FOUND: Code(404, 1),
    PLACEMENT_IDEMPOTENCY_KEY_REUSED: Code(422, 1),
    PLACEMENT_RELEASED: Code(409, 1),
    HOST_NOT_FOUND: Code(404, 1),
    HOST_IN_USE: Code(409, 1),
    HOST_ID_MISMATCH: Code(422, 1),
    SERVICE_UNAUTHORIZED: Code(401, 1),
    SERVICE_FORBIDDEN: Code(403, 1),
    SERVICE_NOT_FOUND: Code(404, 1),
    SERVICE_METHOD_NOT_ALLOWED: Code(405, 1),
    SERVICE_UNSUPPORTED_MEDIA_TYPE: Code(415, 1),
    SERVICE_INVALID_REQUEST: Code(422, 1),
    SERVICE_UNAVAILABLE: Code(503, 1),
    SERVICE_INTERNAL: Code(500, 1),
    SERVICE_CONFIG: Code(500, 2),
    STORE_UNAVAILABLE: Code(503, 1),
    STORE_BUSY: Code(503, 1),
    STORE_FULL: Code(503, 1),
    STORE_READ_ONLY: Code(503, 1),
    STORE_OUTCOME_UNKNOWN: Code(503, 1),
    STORE_UNSUPPORTED: Code(500, 2),
    CLIENT_UNREACHABLE: Code(503, 1),
    DISCOVERY_FAILED: Code(422, 1),
    AGENT_DRIFT: Code(409, 0),
    AGENT_UNREACHABLE: Code(503, 1),
    AGENT_REFUSED: Code(422, 1),
    KUBERNETES_NOT_ASSUMED: Code(404, 1),
    KUBERNETES_RETRY: Code(409, 1),
    KUBERNETES_BIND_REFUSED: Code(409, 1),
    KUBERNETES_BIND_FAILED: Code(502, 1),
    KUBERNETES_NO_CLUSTER: Code(503, 1),
    RENDER_UNSUPPORTED: Code(422, 1),
    RENDER_INVALID: Code(422, 1),
    RENDER_MISMATCH: Code(422, 1),
}


def http_status(code: str) -> int:
    """The HTTP status of a code's problem document (422 for a code not in the table)."""
    entry = CODES.get(code)
    return entry.http if entry else 422


def exit_code(code: str) -> int:
    """The command line's exit code for a code (1 for a code not in the table)."""
    entry = CODES.get(code)
    return entry.exit if entry else 1


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem found in an input: where it is, what is wrong, how to fix it."""

    message: str
    path: str = ""
    line: int | None = None
    hint: str | None = None


@dataclass(eq=False)
class NfvplaceError(Exception):
    """Base of every error nfvplace raises on purpose; carries a stable `code`."""

    code: str
    message: str
    file: str | None = None
    issues: tuple[Issue, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        head = f"{self.file}: {self.message}" if self.file else self.message
        lines = [head]
        for issue in self.issues:
            where = issue.path or "(document)"
            if issue.line is not None:
                where = f"line {issue.line}, {where}"
            text = f"  {where}: {issue.message}"
            if issue.hint:
                text += f" (fix: {issue.hint})"
            lines.append(text)
        return "\n".join(lines)


class DescriptorError(NfvplaceError):
    """A descriptor file that cannot be read, parsed or validated."""


class DiscoveryError(NfvplaceError):
    """Host discovery failed: an unreadable or malformed topology, or an unusable sysfs tree."""


@dataclass(eq=False)
class LintError(NfvplaceError):
    """A descriptor that lint refuses; `findings` are lint's own, each with its rule id.

    `nfvplace.place` and `nfvplace place` raise it before placing (the CLI exits 1, as `lint` does).
    """

    findings: tuple[Finding, ...] = ()
