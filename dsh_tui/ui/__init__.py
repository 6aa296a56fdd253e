"""The Textual app: a pure consumer of `ctx.agents` (imports dsh_tui.harness only).

`from dsh_tui.ui.app import DshApp` — importing this package itself stays cheap,
so the CLI can answer `--version` without loading Textual.
"""
