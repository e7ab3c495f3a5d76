"""AutoGraph placeholder (replaced below)."""


def convert_if_needed(fn):
    return fn
