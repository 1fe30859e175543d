"""Records in, verdict out (pure): run records, the aggregation, statistics, gates,
comparisons, the failure diagnosis, the quality score, the formal protocol and the one
pipeline the live session and the rescore share.
"""
