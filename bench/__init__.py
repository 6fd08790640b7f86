"""Benchmarks of nfvplace (run as `python -m bench.bench_placement`)."""
