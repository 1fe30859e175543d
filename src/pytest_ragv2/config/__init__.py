"""What the user configured: the configuration file, the settings model, their located errors
and the generated reference.
"""
