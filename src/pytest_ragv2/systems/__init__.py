"""Adapters to the systems under test: each owns one real interface's wire format.

Every adapter returns the project's own types and never raises out of ``retrieve`` or
``converse``: failures are recorded as ``RunError``. The adapter table is
``systems.registry``; this package imports nothing, so that a light module of it
(``kb_tool``, ``upload_names``) costs no HTTP client or pydantic to import.
"""
