"""Layer A, retrieval only: its layer, and one retrieval run made and scored."""
