"""Doors into other schedulers, as thin as the CLI and the service: over the same reader, lint gate
and engine."""
