"""Seed 000's paradigms: the declarative banks and opinions (``opinions``, ``evidence``),
the procedural strategies (``procedural``, ``distillation``), and the flows between them
(pure parts; the engine wires them; docs/paradigms.md)."""
