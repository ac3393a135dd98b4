"""Seed 000's paradigms: the declarative banks and opinions (``opinions``), the
procedural strategies, and the flows between them (docs/paradigms.md)."""
