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


if TYPE_CHECKING:
    from ..service.settings import SettingsError


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


@app.command("serve")
def serve_command(
    db: Annotated[
        str | None,
        typer.Option("--db", help="Database URL (default: SQLite in the user data directory)"),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to bind")] = 8080,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Worker processes")] = 1,
    pin_workers: Annotated[
        bool,
        typer.Option(
            "--pin-workers",
            help="Run each worker on one CPU of those the server may use (worker k on the "
            "k-th): on PostgreSQL 1.05-1.14 x the placements per second here (docs/scaling.md). "
            "Several servers on one machine would share the first CPU: run one with --workers N",
        ),
    ] = False,
    placing_threads: Annotated[
        int,
        typer.Option(
            "--placing-threads",
            min=1,
            max=64,
            help="PostgreSQL: placements each worker runs at once (each decides, then waits for "
            "its commit's two round trips). 1, the leanest where the database is near; raise it "
            "where round trips to it are long. SQLite always places one at a time",
        ),
    ] = 1,
    tokens: Annotated[
        Path | None,
        typer.Option("--tokens", help="YAML file mapping roles to lists of bearer tokens"),
    ] = None,
    no_auth: Annotated[
        bool, typer.Option("--no-auth", help="No authentication (loopback addresses only)")
    ] = False,
    public_docs: Annotated[
        bool,
        typer.Option(
            "--public-docs",
            help="Serve /docs and /openapi.json without a token (with --tokens they need one)",
        ),
    ] = False,
    keep_released: Annotated[
        str,
        typer.Option(
            "--keep-released",
            help="How long a released placement (and its Idempotency-Key) is remembered before "
            "it is pruned: e.g. 7d, 12h, 30m, 90s",
        ),
    ] = "7d",
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            "--kubeconfig",
            help="Kubernetes: watch NodeResourceTopology objects and pods, and bind pods (the "
            "extender's bind verb), through the API server this kubeconfig names "
            "(docs/integrations/kubernetes.md)",
        ),
    ] = None,
    kube_context: Annotated[
        str | None,
        typer.Option("--kube-context", help="The kubeconfig's context (default: its current one)"),
    ] = None,
    in_cluster: Annotated[
        bool,
        typer.Option(
            "--in-cluster",
            help="Kubernetes: as --kubeconfig, with the service account of the pod nfvplace runs in",
        ),
    ] = False,
    unregistered_nodes: Annotated[
        UnregisteredNodes,
        typer.Option(
            "--unregistered-nodes",
            help="Kubernetes: the extender's answer for a node without a NodeResourceTopology: "
            "refuse it (with the reason) or pass it unchecked; either is said in the answer",
        ),
    ] = UnregisteredNodes.refuse,
) -> None:
    """Run the placement REST API (see docs/service.md)."""
    from ..errors import NfvplaceError
    from ..redaction import redact, url_password
    from ..service import logs
    from ..service.app import SETTINGS_ENV
    from ..service.k8s_cluster import STATUS_ENV, cluster_config
    from ..service.retention import parse_duration
    from ..service.settings import Settings, SettingsError, resolve_tokens
    from ..service.workers import MASTER_ENV, PIN_ENV, serve, wait_for_port
    from ..store import Store, default_url
    from .common import fail, usage_error

    if kubeconfig is not None and in_cluster:
        typer.echo("error: give --kubeconfig FILE or --in-cluster, not both", err=True)
        raise typer.Exit(2)
    if kube_context is not None and kubeconfig is None:
        typer.echo("error: --kube-context needs --kubeconfig FILE", err=True)
        raise typer.Exit(2)
    if tokens is not None and no_auth:
        typer.echo("error: give --tokens FILE or --no-auth, not both", err=True)
        raise typer.Exit(2)
    try:
        keep_s = parse_duration(keep_released)
    except ValueError as exc:
        raise usage_error(str(exc), "--keep-released", "e.g. 7d, 12h, 30m or 90s") from exc
    settings = Settings(
        db_url=db or default_url(),
        host=host,
        port=port,
        tokens_file=str(tokens.resolve()) if tokens is not None else None,
        no_auth=no_auth,
        public_docs=public_docs,
        migrate=False,  # done once here, before any worker starts
        keep_released_s=keep_s,
        placing_threads=placing_threads,
        kubeconfig=str(kubeconfig.resolve()) if kubeconfig is not None else None,
        kube_context=kube_context,
        in_cluster=in_cluster,
        unregistered_nodes=unregistered_nodes.value,
    )
    try:
        resolve_tokens(settings)
        cluster_config(settings)
    except SettingsError as exc:
        typer.echo(f"error: {one_line(exc)}", err=True)
        raise typer.Exit(2) from exc
    try:
        store = Store.open(settings.db_url or "", migrate=True)
        store.close()
    except NfvplaceError as exc:
        raise fail(exc) from None
    except Exception as exc:
        said = redact(str(exc), url_password(settings.db_url))
        typer.echo(f"error: cannot open the database: {said}", err=True)
        raise typer.Exit(1) from exc
    if not wait_for_port(host, port):
        typer.echo(f"error: {host}:{port} is in use by another process", err=True)
        raise typer.Exit(1)
    os.environ[SETTINGS_ENV] = settings.to_json()
    os.environ[MASTER_ENV] = str(os.getpid())  # workers die with this process (service/workers)
    if pin_workers:
        os.environ[PIN_ENV] = "1"
    status_dir = None
    if kubeconfig is not None or in_cluster:  # the watching worker tells the others its state
        status_dir = tempfile.mkdtemp(prefix="nfvplace-k8s-")
        os.environ[STATUS_ENV] = str(Path(status_dir) / "watch.json")
    logs.configure()
    metrics_dir = None
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        metrics_dir = tempfile.mkdtemp(prefix="nfvplace-metrics-")
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
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
    finally:
        for folder in (metrics_dir, status_dir):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
