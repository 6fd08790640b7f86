"""Placing many VMs at once, and asking what-if: joint placement of a VNF template or a batch
(`place.py`: search, relaxation, realisation, local search, diagnosis), what-if capacity
(`capacity.py`, with the counting model), and defragmentation advice (`moves.py`)."""
