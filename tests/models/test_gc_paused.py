"""`gc_paused(lasting=True)` (the service's cold evaluations) and the Nova plug-in's `gc_paused`:
what the work keeps leaves the young generations unwalked, garbage is still found, and objects
someone froze stay frozen. Each case in a process of its own: the collector is process-wide."""

from __future__ import annotations

import subprocess
import sys

import pytest

PRELUDE = """
import gc, weakref
from nfvplace.models import loading
from nfvplace.integrations.nova import chds

class Node:
    pass

def cycle():
    pair = [Node(), Node()]
    pair[0].other, pair[1].other = pair[1], pair[0]
    return weakref.ref(pair[0])

def young(objects):
    ids = {id(o) for o in gc.get_objects(0) + gc.get_objects(1)}
    return [o for o in objects if id(o) in ids]

def tracked(objects):
    ids = {id(o) for o in gc.get_objects()}
    return [o for o in objects if id(o) in ids]

gc.collect()
start = gc.get_freeze_count()  # the interpreter's own (a few hundred constant tuples)
"""

CASES = {
    "a process that freezes nothing: kept in the oldest generation, garbage still collected": """
with loading.gc_paused(lasting=True):
    kept = [Node() for _ in range(5000)]
    garbage = cycle()
assert gc.isenabled() and gc.get_freeze_count() == 0
assert not young(kept) and len(tracked(kept)) == 5000
gc.collect()
assert garbage() is None
""",
    "a process that keeps objects frozen: they stay, and what the work keeps joins them": """
old = [Node() for _ in range(100)]
loading.frozen_from_now()
before = cycle()  # garbage made before the work: collected, not frozen
with loading.gc_paused(lasting=True):
    kept = [Node() for _ in range(5000)]
assert before() is None, "the young garbage was collected before the work"
assert gc.isenabled() and not tracked(old) and not tracked(kept)
assert gc.get_freeze_count() >= 5100
dropped = weakref.ref(kept[0])
del kept
assert dropped() is None, "a frozen object is freed by its reference count"
""",
    "not lasting: as before, the survivors young": """
with loading.gc_paused():
    kept = [Node() for _ in range(5000)]
assert gc.isenabled() and gc.get_freeze_count() == start and len(young(kept)) == 5000
""",
    "paused by someone else: left paused, nothing moved": """
gc.disable()
with loading.gc_paused(lasting=True):
    kept = [Node() for _ in range(5000)]
assert not gc.isenabled() and len(young(kept)) == 5000
with chds.gc_paused():
    more = [Node() for _ in range(5000)]
assert not gc.isenabled() and len(young(more)) == 5000
gc.enable()
""",
    "an error inside: resumed, the survivors moved all the same": """
try:
    with loading.gc_paused(lasting=True):
        kept = [Node() for _ in range(5000)]
        raise ValueError("a host that is not a CHD")
except ValueError:
    pass
assert gc.isenabled() and not young(kept)
""",
    "the plug-in: what a pass keeps to the oldest generation": """
with chds.gc_paused():
    kept = [Node() for _ in range(5000)]
    garbage = cycle()
assert gc.isenabled() and gc.get_freeze_count() == 0 and not young(kept)
gc.collect()
assert garbage() is None
""",
    "the plug-in in a scheduler that froze objects: left frozen, the pass's survivors young": """
old = [Node() for _ in range(100)]
gc.freeze()
with chds.gc_paused():
    kept = [Node() for _ in range(5000)]
assert gc.isenabled() and not tracked(old) and len(young(kept)) == 5000
""",
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_the_collector_after_a_paused_pass(case: str) -> None:
    script = PRELUDE + CASES[case] + 'print("ok")\n'
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
