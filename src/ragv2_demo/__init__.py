"""The embedded demo: a system under test that sees only the corpus (never cases/ or gold/).

Its own package, shipped in the ``pytest-ragv2`` distribution (the ``demo`` extra holds its
dependencies). It uses the plugin's public contracts — the knowledge-base tool
(``pytest_ragv2.systems.kb_tool``), layer C's prompt (``pytest_ragv2.layers.frozen.prompt``), the
rag_api upload names — and never the scorers, the session, the cases or the gold. The plugin
reaches it through one module, ``pytest_ragv2.run.demo``.
"""
