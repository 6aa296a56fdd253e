"""The UI's state layer: everything the screen knows, kept in plain Python.

Nothing in this package imports Textual or Rich (an import-linter contract in
pyproject.toml enforces it), so the work of showing a session, the inbox rules and
the pacing decisions can be run and tested without a screen, and the Textual layer
around it (app, screens, widgets) stays a thin renderer of this state. DEVELOPERS.md
lists what each module holds.
"""
