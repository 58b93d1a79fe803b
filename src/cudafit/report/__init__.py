"""Rendering only: text tables, JSON, Markdown and HTML. Never parses bytes or decides verdicts."""
