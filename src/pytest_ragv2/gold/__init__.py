"""What the truth is: the case schema, the case catalog, gold answers, the allow-list, the
reviewers' rulings and the identifiers the corpus holds.
"""
