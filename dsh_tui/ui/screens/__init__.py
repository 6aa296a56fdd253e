"""Screens pushed over the main one: help, edit, confirm, sessions."""
