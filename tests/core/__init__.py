"""Conformance suite of the harness core and the agent loop (docs/contract.md: every §x.y and C-nn in this folder points there)."""
