"""The pytest plugin: the only package that imports pytest. Its hooks (``hooks``) stay thin and
delegate: collection, the controller that gathers records and writes the reports, xdist and
remote gateways, the budget, progress, signals and the secrets kept out of traces and logs.
"""
