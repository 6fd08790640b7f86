"""Constraint families: each module checks its family over the whole fleet (vectorised, with
reasons) and posts its part of the exact CP-SAT model for a candidate host."""
