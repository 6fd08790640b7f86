"""`nfvplace render`: VM Configurations as libvirt XML, OpenStack extra specs, .vmx or host tuning.

CONFIG files hold one VM Configuration (`nfvplace/vm-configuration/v1`) or several
(`nfvplace/vm-configurations/v1`, what `place` prints for a VNF). Exit 0 with the text on stdout (or
the files under `-o`), warnings on stderr; 1 for invalid input; 2 for a usage error.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import errors
from ..errors import Issue, NfvplaceError
from .application import app
from .common import check_choice, check_output, emit_rendered, fail, warn, write_text

if TYPE_CHECKING:  # loaded when the command runs: `--help` stays quick
    from ..models.configuration import VmConfiguration
    from ..models.loading import Descriptor

# `nfvplace.render.FORMATS`, spelled out so that `--help` need not build the renderers (a test
# keeps the two equal)
FORMATS = ("libvirt", "openstack", "vmx", "host-tuning")


def _load(path: Path, kinds: tuple[type, ...], what: str, option: str) -> Descriptor:
    from ..reader import load_file

    loaded = load_file(path)
    if not isinstance(loaded, kinds):
        raise NfvplaceError(
            errors.INPUT_UNKNOWN_KIND,
            f"{option} expects {what}, got a {type(loaded).__name__}",
            file=str(path),
            issues=(Issue("wrong kind of document", path="schema", hint=f"pass {what}"),),
        )
    return loaded


def load_configurations(paths: list[Path]) -> list[VmConfiguration]:
    """Every VM Configuration in the files, in order (a configurations document gives several)."""
    from ..models.configuration import VmConfiguration, VmConfigurations

    out: list[VmConfiguration] = []
    for path in paths:
        loaded = _load(
            path,
            (VmConfiguration, VmConfigurations),
            "a VM Configuration (or a vm-configurations document)",
            "CONFIG",
        )
        if isinstance(loaded, VmConfigurations):
            out.extend(loaded.configurations)
        elif isinstance(loaded, VmConfiguration):
            out.append(loaded)
    return out


ConfigsArgument = Annotated[
    list[Path],
    typer.Argument(
        help="VM Configuration files (vm-configuration or vm-configurations documents)",
        metavar="CONFIG",
    ),
]
FormatOption = Annotated[
    str,
    typer.Option("--format", "-f", help=f"Target: {', '.join(FORMATS)}", metavar="FORMAT"),
]
VmOption = Annotated[
    Path | None,
    typer.Option(
        "--vm", help="The VM Descriptor (or VNF template) the configurations were placed from"
    ),
]
HostOption = Annotated[
    Path | None, typer.Option("--host", help="The Compute Host Descriptor of the host")
]
OutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="Write here instead of stdout; a folder (one file per VM) for several",
    ),
]


@app.command("render")
def render_command(
    configs: ConfigsArgument,
    fmt: FormatOption,
    vm: VmOption = None,
    host: HostOption = None,
    out: OutOption = None,
) -> None:
    """Render VM Configurations for a deployment target; warnings go to standard error."""
    from ..models.chd import ComputeHostDescriptor
    from ..models.vmd import VmDescriptor
    from ..models.vnf import VnfTemplate
    from ..render import render_host_tuning
    from ..render.several import render_configurations

    check_choice(fmt, FORMATS)
    try:
        loaded = load_configurations(configs)
        descriptor = (
            _load(vm, (VmDescriptor, VnfTemplate), "a VM Descriptor or VNF template", "--vm")
            if vm
            else None
        )
        chd = (
            _load(host, (ComputeHostDescriptor,), "a Compute Host Descriptor", "--host")
            if host
            else None
        )
        assert descriptor is None or isinstance(descriptor, VmDescriptor | VnfTemplate)
        assert chd is None or isinstance(chd, ComputeHostDescriptor)
        if fmt == "host-tuning":
            result = render_host_tuning(loaded, chd)
            warn(result.warnings)
            if out is None:
                typer.echo(result.text, nl=False)
            else:
                write_text(out, result.text)
            return
        check_output(len(loaded), fmt, out)
        results = render_configurations(loaded, fmt, vm=descriptor, host=chd)
        emit_rendered(loaded, results, fmt, out)
    except NfvplaceError as exc:
        raise fail(exc) from None
