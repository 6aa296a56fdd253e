"""Widgets of the main screen: agent tree, transcript, inbox, composer, event log."""
