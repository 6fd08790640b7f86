"""What Nova 34 makes of flavors, for tests/integrations/test_nova_flavors.py. Runs in the Nova
virtualenv (bench/nova_venv.sh); reads JSON on stdin, prints Nova's answers as JSON.

Input: {"flavors": [{name, vcpus, ram, disk, OS-FLV-EXT-DATA:ephemeral?, extra_specs}],
"masks": [[vcpus, mask]], "page_sizes": [word], "libvirt_features": [name]}.

For each flavor, Nova's own code:
- `api`: the errors of `POST /flavors` at microversion 2.86 (the request schema) and of
  `POST /flavors/{id}/os-extra_specs` (every extra spec through Nova's extra-spec validators);
- `unreported`: required traits that Nova's libvirt driver never reports
  (`CPU_TRAITS_MAPPING`, `HW_CPU_HYPERTHREADING`);
- `topology`: `hardware.numa_get_constraints` (the guest NUMA cells: vCPUs, memory, page size,
  policies, realtime vCPUs), or the exception with which Nova refuses the flavor.
`masks`: `parse_cpu_spec` as `get_realtime_cpu_constraint` calls it; `page_sizes`: the
page size `_get_numa_pagesize_constraint` reads; `traits`: the libvirt driver's trait per
libvirt feature name.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
from typing import Any


def _api_errors(flavor: dict[str, Any]) -> list[str]:
    from nova import utils
    from nova.api.openstack.compute.schemas import flavors
    from nova.api.validation import validators
    from nova.api.validation.extra_specs import validators as spec_validators
    from nova.db import constants as db_const

    body = {"flavor": {k: v for k, v in flavor.items() if k != "extra_specs"}}
    errors = []
    try:
        validators._SchemaValidator(flavors.create_v255).validate(body)  # 2.55 to 2.101
    except Exception as error:
        errors.append(f"POST /flavors: {error}")
    sizes = {"ram": 1, "vcpus": 1, "disk": 0, "OS-FLV-EXT-DATA:ephemeral": 0}
    for key, minimum in sizes.items():  # what nova.compute.flavors.create checks next
        try:
            utils.validate_integer(flavor.get(key, 0), key, minimum, db_const.MAX_INT)
        except Exception as error:
            errors.append(f"POST /flavors: {error}")
    for name, value in flavor.get("extra_specs", {}).items():
        try:
            spec_validators.validate(name, value)
        except Exception as error:
            errors.append(f"{name}={value}: {error}")
    return errors


def _topology(flavor: dict[str, Any]) -> dict[str, Any]:
    from nova import objects
    from nova.virt import hardware

    nova_flavor = objects.Flavor(
        name=flavor["name"],
        vcpus=flavor["vcpus"],
        memory_mb=flavor["ram"],
        root_gb=flavor.get("disk", 0),
        ephemeral_gb=flavor.get("OS-FLV-EXT-DATA:ephemeral", 0),
        extra_specs=dict(flavor.get("extra_specs", {})),
    )
    image = objects.ImageMeta.from_dict({"properties": {}})
    try:
        topology = hardware.numa_get_constraints(nova_flavor, image)
        realtime = hardware.get_realtime_cpu_constraint(nova_flavor, image)
    except Exception as error:
        return {"refused": f"{type(error).__name__}: {error}"}
    out: dict[str, Any] = {"realtime": sorted(realtime) if realtime else []}
    if topology is None:
        out["cells"] = None
        return out
    out["emulator_threads_policy"] = topology.emulator_threads_policy
    out["cells"] = [
        {
            "cpuset": sorted(cell.cpuset),
            "pcpuset": sorted(cell.pcpuset),
            "memory": cell.memory,
            "pagesize": cell.pagesize,
            "cpu_policy": cell.cpu_policy,
            "cpu_thread_policy": cell.cpu_thread_policy,
        }
        for cell in topology.cells
    ]
    return out


def _page_size(word: str) -> Any:
    from nova import objects
    from nova.virt import hardware

    flavor = objects.Flavor(
        vcpus=1, memory_mb=1024, extra_specs={"hw:mem_page_size": word}, name="p"
    )
    image = objects.ImageMeta.from_dict({"properties": {}})
    try:
        return hardware._get_numa_pagesize_constraint(flavor, image)
    except Exception as error:
        return f"refused: {type(error).__name__}"


def main() -> None:
    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    import os_traits
    from nova import objects
    from nova.api.validation.extra_specs import validators as spec_validators
    from nova.virt import hardware
    from nova.virt.libvirt import utils as libvirt_utils

    objects.register_all()
    spec_validators.load_validators()
    data = json.load(sys.stdin)
    reported = {os_traits.HW_CPU_HYPERTHREADING}
    for value in libvirt_utils.CPU_TRAITS_MAPPING.values():
        reported.update(value if isinstance(value, tuple) else (value,))
    flavors = []
    for flavor in data.get("flavors", []):
        traits = [
            k.split(":", 1)[1]
            for k, v in flavor.get("extra_specs", {}).items()
            if k.startswith("trait:") and v == "required"
        ]
        flavors.append(
            {
                "name": flavor["name"],
                "api": _api_errors(flavor),
                "unreported": sorted(t for t in traits if t not in reported),
                "topology": _topology(flavor),
            }
        )
    masks = [
        sorted(hardware.parse_cpu_spec(f"0-{vcpus - 1},{mask}" if mask.startswith("^") else mask))
        for vcpus, mask in data.get("masks", [])
    ]
    traits = {
        name: sorted(v if isinstance(v, tuple) else (v,))
        for name, v in libvirt_utils.CPU_TRAITS_MAPPING.items()
    }
    json.dump(
        {
            "flavors": flavors,
            "masks": masks,
            "page_sizes": [_page_size(w) for w in data.get("page_sizes", [])],
            "traits": traits,
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
