"""The ``ragv2`` command: validate, rescore, freeze, freeze-gates, export and the demo."""
