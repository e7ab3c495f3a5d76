"""Cases of TF behaviour, one module per area (``CASES = {name: fn(tf)}``), recorded from real TF by
tools/tf_api/record.py and replayed on tapeflow by tests/test_tf_cases.py."""


def raises(fn, strip_node: bool = False):
    """A case that records ``fn(tf)``'s exception as ``"Type: message"`` (``"no error"`` if none); with
    ``strip_node``, without TF's ``{{function_node ...}}`` prefix."""

    def case(tf):
        try:
            fn(tf)
        except Exception as e:  # noqa: BLE001 - the case records the exception's type and text
            msg = str(e)
            if strip_node and "}}" in msg:
                msg = msg[msg.find("}}") + 3:]
            return f"{type(e).__name__}: {msg}"
        return "no error"

    return case
