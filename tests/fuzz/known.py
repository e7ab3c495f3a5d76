"""Documented differences from TensorFlow that the fuzzer finds on purpose.

Each entry: (function glob, text in the mismatch message or "", reason). Every
one is listed in the README's "Known differences from TensorFlow".
"""

KNOWN: list = []
