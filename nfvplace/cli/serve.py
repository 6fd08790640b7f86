"""`nfvplace serve`: run the placement REST API with uvicorn."""

from __future__ import annotations

import os
import shutil
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .application import app


class UnregisteredNodes(StrEnum):
    """What the Kubernetes extender answers for a node it has no NodeResourceTopology of."""

    refuse = "refuse"
    pass_ = "pass"


class LogLevel(StrEnum):
    """How much the server logs (JSON lines on stderr)."""

    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


if TYPE_CHECKING:
    from ..service.settings import Settings, SettingsError


def one_line(exc: SettingsError) -> str:
    """`file: what: path: the first problem (fix: ...)`, and how many more there are."""
    text = ": ".join(part for part in (exc.file, exc.message) if part)
    if not exc.issues:
        return text
    first = exc.issues[0]
    text += f": {first.path}: {first.message}" if first.path else f": {first.message}"
    if first.hint:
        text += f" (fix: {first.hint})"
    if len(exc.issues) > 1:
        text += f" (and {len(exc.issues) - 1} more)"
    return text


DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Database URL (default: SQLite in the user data directory)"),
]
HostOption = Annotated[str, typer.Option("--host", help="Address to bind")]
PortOption = Annotated[int, typer.Option("--port", help="Port to bind")]
WorkersOption = Annotated[int, typer.Option("--workers", min=1, help="Worker processes")]
PinWorkersOption = Annotated[
    bool,
    typer.Option(
        "--pin-workers",
        help="Run each worker on one CPU of those the server may use (worker k on the "
        "k-th): on PostgreSQL 1.05-1.14 x the placements per second here (docs/scaling.md). "
        "Several servers on one machine would share the first CPU: run one with --workers N",
    ),
]
PlacingThreadsOption = Annotated[
    int,
    typer.Option(
        "--placing-threads",
        min=1,
        max=64,
        help="PostgreSQL: placements each worker runs at once (each decides, then waits for "
        "its commit's two round trips). 1, the leanest where the database is near; raise it "
        "where round trips to it are long. SQLite always places one at a time",
    ),
]
TokensOption = Annotated[
    Path | None,
    typer.Option("--tokens", help="YAML file mapping roles to lists of bearer tokens"),
]
NoAuthOption = Annotated[
    bool, typer.Option("--no-auth", help="No authentication (loopback addresses only)")
]
PublicDocsOption = Annotated[
    bool,
    typer.Option(
        "--public-docs",
        help="Serve /docs and /openapi.json without a token (with --tokens they need one)",
    ),
]
KeepReleasedOption = Annotated[
    str,
    typer.Option(
        "--keep-released",
        help="How long a released placement (and its Idempotency-Key) is remembered before "
        "it is pruned: e.g. 7d, 12h, 30m, 90s",
    ),
]
KubeconfigOption = Annotated[
    Path | None,
    typer.Option(
        "--kubeconfig",
        help="Kubernetes: watch NodeResourceTopology objects and pods, and bind pods (the "
        "extender's bind verb), through the API server this kubeconfig names "
        "(docs/integrations/kubernetes.md)",
    ),
]
KubeContextOption = Annotated[
    str | None,
    typer.Option("--kube-context", help="The kubeconfig's context (default: its current one)"),
]
InClusterOption = Annotated[
    bool,
    typer.Option(
        "--in-cluster",
        help="Kubernetes: as --kubeconfig, with the service account of the pod nfvplace runs in",
    ),
]
UnregisteredNodesOption = Annotated[
    UnregisteredNodes,
    typer.Option(
        "--unregistered-nodes",
        help="Kubernetes: the extender's answer for a node without a NodeResourceTopology: "
        "refuse it (with the reason) or pass it unchecked; either is said in the answer",
    ),
]
NrtIntervalOption = Annotated[
    float,
    typer.Option(
        "--nrt-interval",
        min=0.1,
        help="Kubernetes: seconds within which the NodeResourceTopology exporter shows a pod "
        "the kubelet admitted (NFD topology-updater's --sleep-interval, 60 s by default); a "
        "pod seen running that long is no longer assumed once its node's NRT has been read "
        "again, whatever its counts say",
    ),
]
LogLevelOption = Annotated[
    LogLevel,
    typer.Option(
        "--log-level",
        help="debug adds, for the Kubernetes door, each pod assumed, admitted or gone and "
        "each NodeResourceTopology reconciled, with the numbers",
    ),
]


@app.command("serve")
def serve_command(
    db: DbOption = None,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8080,
    workers: WorkersOption = 1,
    pin_workers: PinWorkersOption = False,
    placing_threads: PlacingThreadsOption = 1,
    tokens: TokensOption = None,
    no_auth: NoAuthOption = False,
    public_docs: PublicDocsOption = False,
    keep_released: KeepReleasedOption = "7d",
    kubeconfig: KubeconfigOption = None,
    kube_context: KubeContextOption = None,
    in_cluster: InClusterOption = False,
    unregistered_nodes: UnregisteredNodesOption = UnregisteredNodes.refuse,
    nrt_interval: NrtIntervalOption = 60.0,
    log_level: LogLevelOption = LogLevel.info,
) -> None:
    """Run the placement REST API (see docs/service.md)."""
    from ..service.settings import Settings
    from ..store import default_url

    _refuse_conflicting_flags(kubeconfig, kube_context, in_cluster, tokens, no_auth)
    settings = Settings(
        db_url=db or default_url(),
        host=host,
        port=port,
        tokens_file=str(tokens.resolve()) if tokens is not None else None,
        no_auth=no_auth,
        public_docs=public_docs,
        migrate=False,  # done once here, before any worker starts
        keep_released_s=_keep_released_s(keep_released),
        placing_threads=placing_threads,
        kubeconfig=str(kubeconfig.resolve()) if kubeconfig is not None else None,
        kube_context=kube_context,
        in_cluster=in_cluster,
        unregistered_nodes=unregistered_nodes.value,
        nrt_interval_s=nrt_interval,
        log_level=log_level.value,
    )
    _check_settings(settings)
    _migrate(settings)
    folders = _export_to_workers(settings, workers, pin_workers)
    try:
        _run_workers(host, port, workers)
    finally:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)


def _refuse_conflicting_flags(
    kubeconfig: Path | None,
    kube_context: str | None,
    in_cluster: bool,
    tokens: Path | None,
    no_auth: bool,
) -> None:
    """Exit 2 on flags that exclude each other, naming both."""
    if kubeconfig is not None and in_cluster:
        typer.echo("error: give --kubeconfig FILE or --in-cluster, not both", err=True)
        raise typer.Exit(2)
    if kube_context is not None and kubeconfig is None:
        typer.echo("error: --kube-context needs --kubeconfig FILE", err=True)
        raise typer.Exit(2)
    if tokens is not None and no_auth:
        typer.echo("error: give --tokens FILE or --no-auth, not both", err=True)
        raise typer.Exit(2)


def _keep_released_s(keep_released: str) -> float:
    """--keep-released in seconds, or a usage error with examples."""
    from ..service.retention import parse_duration
    from .common import usage_error

    try:
        return parse_duration(keep_released)
    except ValueError as exc:
        raise usage_error(str(exc), "--keep-released", "e.g. 7d, 12h, 30m or 90s") from exc


def _check_settings(settings: Settings) -> None:
    """Read the tokens file and the cluster's configuration once, before any worker starts."""
    from ..service.k8s_cluster import cluster_config
    from ..service.settings import SettingsError, resolve_tokens

    try:
        resolve_tokens(settings)
        cluster_config(settings)
    except SettingsError as exc:
        typer.echo(f"error: {one_line(exc)}", err=True)
        raise typer.Exit(2) from exc


def _migrate(settings: Settings) -> None:
    """Open the database once and bring its schema up to date (the workers do not migrate)."""
    from ..errors import NfvplaceError
    from ..redaction import redact, url_password
    from ..store import Store
    from .common import fail

    try:
        store = Store.open(settings.db_url or "", migrate=True)
        store.close()
    except NfvplaceError as exc:
        raise fail(exc) from None
    except Exception as exc:
        said = redact(str(exc), url_password(settings.db_url))
        typer.echo(f"error: cannot open the database: {said}", err=True)
        raise typer.Exit(1) from exc


def _export_to_workers(settings: Settings, workers: int, pin_workers: bool) -> list[str]:
    """What the worker processes read from the environment; the temporary folders made for them
    (removed when the server stops)."""
    from ..service import logs
    from ..service.app import SETTINGS_ENV
    from ..service.k8s_cluster import STATUS_ENV
    from ..service.workers import MASTER_ENV, PIN_ENV, wait_for_port

    if not wait_for_port(settings.host, settings.port):
        typer.echo(f"error: {settings.host}:{settings.port} is in use by another process", err=True)
        raise typer.Exit(1)
    os.environ[SETTINGS_ENV] = settings.to_json()
    os.environ[MASTER_ENV] = str(os.getpid())  # workers die with this process (service/workers)
    if pin_workers:
        os.environ[PIN_ENV] = "1"
    folders = []
    if settings.kubeconfig is not None or settings.in_cluster:
        # the watching worker tells the others its state
        status_dir = tempfile.mkdtemp(prefix="nfvplace-k8s-")
        os.environ[STATUS_ENV] = str(Path(status_dir) / "watch.json")
        folders.append(status_dir)
    logs.configure(settings.log_level)
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        metrics_dir = tempfile.mkdtemp(prefix="nfvplace-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
        folders.append(metrics_dir)
    return folders


def _run_workers(host: str, port: int, workers: int) -> None:
    """uvicorn's workers until the server stops; exit 1 if their sockets cannot be bound."""
    from ..service.workers import serve

    try:
        serve(
            "nfvplace.service.app:app_from_env",
            host,
            port,
            workers,
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=10,
        )
    except OSError as exc:  # the workers' sockets could not be bound (uvicorn reports its own)
        typer.echo(f"error: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        raise typer.Exit(1) from None
