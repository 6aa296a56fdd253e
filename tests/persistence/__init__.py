"""Tests of session persistence (dsh_tui.harness.persistence), on real files in tmp_path."""
