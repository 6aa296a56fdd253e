"""Conformance suite of the harness core and the agent loop (core.md)."""
