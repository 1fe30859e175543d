"""The embedded demo: a system under test that sees only the corpus (never cases/ or gold/)."""
