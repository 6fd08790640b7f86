"""Doors into other schedulers (as the CLI and the service are doors): `nova` holds OpenStack Nova's
scheduler filter and weigher. They are thin: they translate the scheduler's objects into nfvplace
documents and ask the service, which reads, lints and decides as every other door does."""
