"""A worker's write-back (`LiveIndex.write_back`) in a process that keeps its long-lived objects
frozen, as `nfvplace serve`'s workers do (`workers.keep_out_of_collections`): the hosts it builds
live on in the index, and join the frozen objects instead of being walked by the collector's young
collections. In a process of its own: the collector is process-wide."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import gc, sys, weakref
sys.path.insert(0, {tests!r})
from service_hosts import host, vm
from nfvplace.models import loading
from nfvplace.models.chd import ComputeHostDescriptor
from nfvplace.models.vmd import VmDescriptor
from nfvplace.placement import place
from nfvplace.service.metrics import Metrics
from nfvplace.service.placing import PlacementRequest, Placements
from nfvplace.store import Store

VM = vm(vcpus=2, pages=1, sriov=1)
store = Store.open({db!r})
for name in ("h0", "h1", "h2"):
    store.put_host(ComputeHostDescriptor.model_validate(host(name, cores=8, pages_1g=8, vfs=8)))
worker = Placements(store, place, Metrics(), max_attempts=8)

def placed():
    request = PlacementRequest(VmDescriptor.model_validate(VM), {{"vm": VM}})
    answer = worker.place(request, None)
    assert answer.status == 201, answer.body
    return answer.document()["configurations"][0]["host"]

first = placed()
gc.collect()
loading.frozen_from_now()  # as a worker does once its index is built
assert placed() == first
assert worker.live.write_back() == 1
built = worker.live._fleet().host(first)  # the document written back, held by the index
objects = {{id(o) for o in gc.get_objects()}}
assert id(built) not in objects, "the written-back host is left to the collector"
assert id(built.numa_nodes) not in objects
assert gc.isenabled()
assert placed() == first  # the next claim is built from it
assert worker.live.write_back() == 1
gone = weakref.ref(built)
del built
assert gone() is None, "the host replaced is freed by its reference count"
store.close()
print("ok")
"""


def test_the_hosts_a_write_back_built_join_the_frozen_objects(tmp_path: Path) -> None:
    tests = str(Path(__file__).resolve().parent.parent)
    db = f"sqlite:///{tmp_path / 'nfvplace.db'}"
    script = SCRIPT.format(tests=tests, db=db)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
