"""Rendering: the only stage that turns data into text (Markdown, JSON, SARIF, terminal tables)."""
