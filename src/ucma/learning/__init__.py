"""The outcome learning loop (seed 003): decision traces, outcome-weighted
salience, causal analysis, experiments and shared patterns."""
