"""Making runs and keeping them: run keys, the per-process context, raw runs and the manifest,
resumption, the preflight, the embedded demo and what a session's end keeps beside its runs.
"""
