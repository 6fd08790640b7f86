"""One router per resource: hosts, placements, lint, schemas, health."""
