"""Layer B, end to end: its layer, one conversation made and scored, its gates and the advisory
judge.
"""
