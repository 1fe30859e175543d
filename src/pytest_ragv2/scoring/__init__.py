"""Pure scorers (no I/O, no pytest): evidence matching and the retrieval metrics of layer A;
the answer's text, values, claims, grounding, citations, refusal, language, format, tool use,
rubric and vetoes of layers B and C. Import each from its module: the package imports
nothing, so reading one scorer never loads the others.
"""
