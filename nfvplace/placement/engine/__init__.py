"""The single-VM pipeline: filter (`filter.py`) -> rank (`policies/`) -> exact model (`solver.py`)
-> exact ids (`assign.py`) -> claim, per candidate host (`attempt.py`), until one fits
(`place.py`); every fitting host in turn (`candidates.py`); every host's answer (`evaluate.py`);
and why nothing fits (`explain.py`)."""
