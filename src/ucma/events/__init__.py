"""Event sourcing: the append-only event log, its projections and publishers."""
