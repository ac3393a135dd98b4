"""Seed 000's paradigms: the declarative, procedural and predictive pieces and the flows
between them (pure parts; the engine wires them)."""
