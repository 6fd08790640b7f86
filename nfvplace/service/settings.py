"""Service settings: database, bind address, authentication, limits."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from .. import errors
from ..errors import Issue, NfvplaceError
from ..redaction import is_token

ROLES = ("reader", "placer", "host-agent", "admin")
MAX_BODY_BYTES = 2 * 1024 * 1024
# POST /v1/evaluations carries a scheduler's candidate hosts: up to 1,000 (Nova's default
# max_placement_results) CHDs of 4-40 KB when they go in full (a cold request), gzip-compressed
# on the wire (about a tenth), and 64 KiB each once decompressed
MAX_EVALUATION_BODY_BYTES = 16 * 1024 * 1024
MAX_EVALUATION_JSON_BYTES = 64 * 1024 * 1024
EVALUATIONS_PATH = "/v1/evaluations"
DEFAULT_PLACER = "nfvplace.placement:place"


class SettingsError(NfvplaceError):
    """The service cannot start with these settings."""


@dataclass(frozen=True)
class Settings:
    db_url: str | None = None  # None: SQLite in the user data directory
    host: str = "127.0.0.1"
    port: int = 8080
    tokens: Mapping[str, Sequence[str]] | None = None  # role -> bearer tokens
    tokens_file: str | None = None  # YAML file mapping role -> bearer tokens
    no_auth: bool = False
    max_body_bytes: int = MAX_BODY_BYTES
    max_evaluation_body_bytes: int = MAX_EVALUATION_BODY_BYTES  # POST /v1/evaluations, on the wire
    max_attempts: int = 16  # compare-and-swap attempts before 409 concurrent_update
    migrate: bool = True  # run migrations when the app starts
    placer: str = DEFAULT_PLACER  # "module:function" computing placements
    public_docs: bool = False  # /docs and /openapi.json without a token, when tokens are set
    keep_released_s: float = 7 * 86400.0  # released placements are forgotten after this long
    placing_threads: int = 1  # PostgreSQL: placements a worker runs at once (SQLite: always 1)
    kubeconfig: str | None = None  # Kubernetes: watch NRTs and pods, bind, with this kubeconfig
    kube_context: str | None = None  # its context (None: the current one)
    in_cluster: bool = False  # Kubernetes: the same with the pod's service account
    unregistered_nodes: str = "refuse"  # the extender's answer for a node without an NRT
    nrt_interval_s: float = 60.0  # the NRT exporter updates within this long of an admission
    log_level: str = "info"  # debug, info, warning, error

    def to_json(self) -> str:
        data = asdict(self)
        data["tokens"] = None  # workers read tokens_file themselves; secrets stay out of env
        return json.dumps(data)

    @classmethod
    def from_json(cls, text: str) -> Settings:
        return cls(**json.loads(text))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


MIN_TOKEN_CHARS = 16


def load_tokens(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Read a YAML file mapping each role to a list of bearer tokens."""
    source = str(path)
    try:
        mode = Path(path).stat().st_mode
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise SettingsError(
            errors.SERVICE_CONFIG, f"cannot read tokens: {exc.strerror or exc}", file=source
        ) from exc
    if mode & 0o007:
        raise SettingsError(
            errors.SERVICE_CONFIG,
            f"the tokens file can be read or written by every user (mode {mode & 0o777:o}): "
            f"run chmod 600 {source}",
            file=source,
        )
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SettingsError(
            errors.SERVICE_CONFIG,
            f"not UTF-8 text (byte {exc.start}): save the tokens file as UTF-8",
            file=source,
        ) from exc
    except yaml.YAMLError as exc:  # its message quotes the line: a token
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise SettingsError(
            errors.SERVICE_CONFIG,
            f"not valid YAML{where}: e.g. 'reader: [token1, token2]' per role",
            file=source,
        ) from None
    return check_tokens(data, source)


def check_tokens(data: Any, source: str = "<tokens>") -> dict[str, tuple[str, ...]]:
    if not isinstance(data, Mapping):
        raise SettingsError(
            errors.SERVICE_CONFIG,
            "tokens must map roles to lists of tokens",
            file=source,
            issues=(Issue("not a mapping", hint=f"e.g. 'reader: [token1]'; roles {ROLES}"),),
        )
    out: dict[str, tuple[str, ...]] = {}
    issues = []
    for role, tokens in data.items():
        if role not in ROLES:
            # a key as long as a token may be one (the file written token: role): never echoed
            key = str(role)
            named = repr(key) if len(key) < MIN_TOKEN_CHARS else f"(a key of {len(key)} characters)"
            issues.append(Issue(f"unknown role {named}", hint=f"use one of {ROLES} as keys"))
            continue
        if not isinstance(tokens, list) or not all(isinstance(t, str) and t for t in tokens):
            issues.append(Issue("must be a list of non-empty strings", path=str(role)))
            continue
        short = [t for t in tokens if len(t) < MIN_TOKEN_CHARS]
        if short:
            issues.append(
                Issue("tokens must be at least 16 characters", path=str(role), hint="use longer")
            )
            continue
        if not all(is_token(t) for t in tokens):
            issues.append(
                Issue(
                    "a token holds characters a bearer header cannot carry",
                    path=str(role),
                    hint="use letters, digits and -._~+/ only (e.g. python -c "
                    "'import secrets; print(secrets.token_urlsafe(32))')",
                )
            )
            continue
        out[str(role)] = tuple(tokens)
    roles_of: dict[str, list[str]] = {}
    for role, tokens in out.items():
        for token in tokens:
            roles_of.setdefault(token, []).append(role)
    for roles in roles_of.values():
        if len(roles) > 1:
            issues.append(
                Issue(
                    f"the same token is given {len(roles)} times ({', '.join(roles)})",
                    path=roles[0],
                    hint="give each token to one role: admin already may do what every other role may",
                )
            )
    if issues:
        raise SettingsError(
            errors.SERVICE_CONFIG, "invalid tokens", file=source, issues=tuple(issues)
        )
    if not any(out.values()):
        raise SettingsError(errors.SERVICE_CONFIG, "no tokens given", file=source)
    return out


def resolve_tokens(settings: Settings) -> dict[str, tuple[str, ...]] | None:
    """Role -> tokens, or None in --no-auth mode; refuses settings that would expose the API."""
    if settings.tokens_file is not None:
        return load_tokens(settings.tokens_file)
    if settings.tokens is not None:
        return check_tokens(dict(settings.tokens))
    if not settings.no_auth:
        raise SettingsError(
            errors.SERVICE_CONFIG,
            "refusing to start without authentication",
            issues=(Issue("no tokens", hint="give --tokens FILE, or --no-auth on loopback only"),),
        )
    if not is_loopback(settings.host):
        raise SettingsError(
            errors.SERVICE_CONFIG,
            f"--no-auth only binds to loopback, not {settings.host}",
            issues=(Issue("public bind without auth", hint="use --host 127.0.0.1 or --tokens"),),
        )
    return None
