"""`nfvplace place`: place one VM Descriptor (or a VNF template) on the given hosts.

The VM (or VNF template) is linted first: what `nfvplace lint` refuses is refused here, with lint's
rule ids. Exit codes: 0 placed (one VM Configuration, or one vm-configurations document for a VNF, on
stdout), 3 no host fits (the summary and each host's reason on stderr), 1 invalid input (the error with
its code, file and field on stderr), 2 usage error (an unknown --format).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from ..errors import NfvplaceError
from .application import app
from .common import check_choice, emit_rendered, fail, write_text

if TYPE_CHECKING:  # the models and the engine load when the command runs: `--help` stays quick
    from ..models.chd import ComputeHostDescriptor
    from ..models.vmd import VmDescriptor
    from ..models.vnf import VnfTemplate
    from ..placement import MovesAdvice
    from ..placement.result import PlacementResult

FORMATS = ("yaml", "json", "libvirt")
EXIT_NO_FIT = 3


HostsOption = Annotated[
    list[Path],
    typer.Option("--hosts", help="CHD files or folders (repeat, or list several after it)"),
]
VmOption = Annotated[
    list[Path],
    typer.Option("--vm", help="VM Descriptor or VNF template (repeat: a batch, placed jointly)"),
]
MoreHostsArgument = Annotated[
    list[Path] | None, typer.Argument(help="More CHD files or folders", show_default=False)
]
FormatOption = Annotated[str, typer.Option("--format", "-f", help="yaml | json | libvirt")]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Write here instead of stdout; with --format libvirt and several VMs, a folder",
    ),
]
ExplainOption = Annotated[
    bool, typer.Option("--explain", help="Say, host by host, why the winner won (stderr)")
]
PolicyOption = Annotated[str, typer.Option("--policy", help="pack | spread | least-fragmentation")]
SeedOption = Annotated[int, typer.Option("--seed", help="Tie-break seed")]
CountOption = Annotated[
    int, typer.Option("--count", help="Instances of each --vm, placed jointly", min=1)
]
ModeOption = Annotated[
    str, typer.Option("--mode", help="all (all or nothing) | max (as many as fit)")
]
SuggestOption = Annotated[
    bool,
    typer.Option("--suggest-moves", help="If it fits nowhere: moves of --config VMs that help"),
]
ConfigOption = Annotated[
    list[Path] | None,
    typer.Option("--config", help="VM Configurations of the placed VMs (for --suggest-moves)"),
]


@app.command("place")
def place_command(
    hosts: HostsOption,
    vm: VmOption,
    more_hosts: MoreHostsArgument = None,
    fmt: FormatOption = "yaml",
    out: OutOption = None,
    explain: ExplainOption = False,
    policy: PolicyOption = "pack",
    seed: SeedOption = 0,
    count: CountOption = 1,
    mode: ModeOption = "all",
    suggest: SuggestOption = False,
    config: ConfigOption = None,
) -> None:
    """Place one VM, every member of a VNF template, or a batch (several --vm), on the hosts."""
    from ..placement import place
    from .inputs import load_hosts, load_vm
    from .joint import echo_unplaced, moves_advice, target

    check_choice(fmt, FORMATS)
    try:
        descriptor = target(vm, load_vm)
        fleet = load_hosts(list(hosts) + list(more_hosts or []))
        result = place(
            fleet, descriptor, policy=policy, seed=seed, explain=explain, count=count, mode=mode
        )
        if explain:
            _explain(fleet, descriptor, result, policy, seed)
        if not result.ok:
            advice = None
            if suggest:
                advice = moves_advice(
                    fleet, descriptor, list(config or []), policy=policy, seed=seed
                )
            _no_fit(result, vm, fmt, suggest, advice)
        echo_unplaced(result)
        _emit(descriptor, result, fmt, out)
    except NfvplaceError as error:
        raise fail(error) from None


def _emit(
    descriptor: VmDescriptor | VnfTemplate | list[VmDescriptor],
    result: PlacementResult,
    fmt: str,
    out: Path | None,
) -> None:
    """The placed VM Configurations, as --format says, on stdout or in --out."""
    from ..models.loading import dump
    from ..render.several import render_configurations
    from .inputs import document

    configs = result.configurations
    if fmt == "libvirt":
        rendered = render_configurations(configs, "libvirt", vm=descriptor)
        emit_rendered(configs, rendered, "libvirt", out)
        return
    text = dump(document(descriptor, configs), fmt)
    if out is None:
        typer.echo(text, nl=False)
    else:
        write_text(out, text)


def _explain(
    fleet: list[ComputeHostDescriptor],
    descriptor: VmDescriptor | VnfTemplate | list[VmDescriptor],
    result: PlacementResult,
    policy: str,
    seed: int,
) -> None:
    """On stderr: for each VM (one, or each of a VNF or a batch), the table of hosts in plain
    words with the numbers; the engine's own lines (how the winner was scored and laid out); then
    what each placed VM was given (PUs, hugepages, cache ways, ports and VFs, node by node)."""
    from ..models.vmd import VmDescriptor
    from .layout import layout_lines
    from .why import host_table

    if isinstance(descriptor, VmDescriptor):
        lines = host_table(fleet, descriptor, result, policy=policy, seed=seed)
    else:
        lines = []
        for vm in _vms_of(descriptor):
            host = next((c.host for c in result.configurations if c.vm == vm.name), None)
            lines.append(f"VM {vm.name} ({'placed on ' + host if host else 'not placed'}):")
            table = host_table(fleet, vm, None, policy=policy, seed=seed, chosen=host)
            lines.extend(f"  {line}" for line in table)
    for line in lines:
        typer.echo(line, err=True)
    for line in result.explanation:
        typer.echo(f"# {line}", err=True)
    for config in result.configurations:
        for line in layout_lines(config):
            typer.echo(f"# {line}", err=True)


def _vms_of(descriptor: VnfTemplate | list[VmDescriptor]) -> list[VmDescriptor]:
    """The distinct VMs of a VNF template (its members) or of a batch."""
    vms = (
        [m.descriptor for m in descriptor.members if m.descriptor is not None]
        if not isinstance(descriptor, list)
        else descriptor
    )
    return list({vm.name: vm for vm in vms}.values())


def _no_fit(
    result: PlacementResult,
    vm: list[Path],
    fmt: str,
    suggest: bool = False,
    advice: MovesAdvice | None = None,
) -> NoReturn:
    """No host fits: the reasons on stderr (as JSON on stdout with --format json); exit 3. With
    --suggest-moves, the moves that would make room (stdout; `"moves"` in the JSON)."""
    from .joint import echo_moves

    diagnosis = result.diagnosis
    assert diagnosis is not None
    if fmt == "json":
        moves = {"moves": advice.to_dict() if advice else None} if suggest else {}
        typer.echo(json.dumps({**diagnosis.to_dict(), **moves}, indent=2))
    typer.echo(f"no host fits {', '.join(map(str, vm))}: {diagnosis.summary}", err=True)
    for rejection in diagnosis.rejections:
        typer.echo(f"  {rejection.host}: [{rejection.reason}] {rejection.message}", err=True)
    if suggest and fmt != "json":
        echo_moves(advice)
    raise typer.Exit(EXIT_NO_FIT)
