"""Run one fuzz case under a TF-like module (real TensorFlow or tapeflow).

The same code runs under both: ``run_case(tf, case)`` builds the inputs,
calls the public function named by ``case["fn"]`` under two nested tapes and
returns a JSON-able result: the exception class, or the outputs (dtype, shape,
exact bytes) and the first- and second-order gradients (``None`` when
unconnected, kind ``"IS"`` for ``IndexedSlices``).

A case is ``{"id", "fn", "args", "kw", "order"}``. ``args``/``kw`` values are
JSON, with tensors encoded as ``{"t": [dtype, shape, base64]}`` (made with
``tf.constant``), NumPy arrays passed as-is as ``{"np": ...}`` and lists of
tensors as plain lists of those.
"""

from __future__ import annotations

import base64
import zlib

import numpy as np

# Composite functions (written once, run under both modules): sign-invariant
# views of decompositions, operators, and a few call patterns.
COMPOSITES = {
    "op.add": lambda tf, a, b: a + b,
    "op.sub": lambda tf, a, b: a - b,
    "op.mul": lambda tf, a, b: a * b,
    "op.truediv": lambda tf, a, b: a / b,
    "op.floordiv": lambda tf, a, b: a // b,
    "op.mod": lambda tf, a, b: a % b,
    "op.pow": lambda tf, a, b: a**b,
    "op.matmul": lambda tf, a, b: a @ b,
    "op.and": lambda tf, a, b: a & b,
    "op.or": lambda tf, a, b: a | b,
    "op.xor": lambda tf, a, b: a ^ b,
    "op.invert": lambda tf, a: ~a,
    "op.neg": lambda tf, a: -a,
    "op.abs": lambda tf, a: abs(a),
    "op.lt": lambda tf, a, b: a < b,
    "op.le": lambda tf, a, b: a <= b,
    "op.gt": lambda tf, a, b: a > b,
    "op.ge": lambda tf, a, b: a >= b,
    "op.radd": lambda tf, a, s: s + a,
    "op.rsub": lambda tf, a, s: s - a,
    "op.rtruediv": lambda tf, a, s: s / a,
    "op.rpow": lambda tf, a, s: s**a,
    "op.getitem": lambda tf, a, key: a[_key(key)],
    "eigh_recon": lambda tf, x: _eigh_recon(tf, x),
    "svd_recon": lambda tf, x: _svd_recon(tf, x),
    "qr_recon": lambda tf, x: _qr_recon(tf, x),
    "gather_dense": lambda tf, x, i: tf.convert_to_tensor(tf.gather(x, i)),
    # control flow and tracing, differentiated to second order like any op
    "map_fn": lambda tf, x: tf.map_fn(lambda r: r * r + tf.sin(r), x),
    "scan": lambda tf, x: tf.scan(lambda a, b: a * b + b, x),
    "foldl": lambda tf, x: tf.foldl(lambda a, b: a + b * b, x),
    "foldr": lambda tf, x: tf.foldr(lambda a, b: a * 0.5 + tf.tanh(b), x),
    "while_loop": lambda tf, x: tf.while_loop(
        lambda i, y: i < 3, lambda i, y: (i + 1, y * x + 1.0), (tf.constant(0), tf.ones_like(x)))[1],
    "cond": lambda tf, x, p: tf.cond(tf.constant(p), lambda: tf.square(x), lambda: tf.sin(x)),
    "switch_case": lambda tf, x, i: tf.switch_case(tf.constant(i), [lambda: x * 2.0, lambda: tf.exp(x)]),
    "vectorized_map": lambda tf, x: tf.vectorized_map(lambda r: tf.reduce_sum(r * r), x),
    "function": lambda tf, x: tf.function(lambda v: v * tf.sin(v) + tf.reduce_max(v))(x),
    "recompute_grad": lambda tf, x: tf.recompute_grad(lambda v: tf.sin(v) * v)(x),
}


def _key(key):
    out = []
    for k in key:
        if isinstance(k, list) and k and k[0] == "s":
            out.append(slice(*k[1:]))
        elif k == "...":
            out.append(Ellipsis)
        elif k is None:
            out.append(None)
        else:
            out.append(k)
    return tuple(out)


def _eigh_recon(tf, x):
    x = (x + tf.linalg.matrix_transpose(x)) / 2
    e, v = tf.linalg.eigh(x)
    return e, tf.matmul(v * e[..., None, :], v, transpose_b=True)


def _svd_recon(tf, x):
    s, u, v = tf.linalg.svd(x)
    return s, tf.matmul(u * s[..., None, :], v, adjoint_b=True)


def _qr_recon(tf, x):
    q, r = tf.linalg.qr(x)
    return tf.abs(tf.linalg.diag_part(r)), tf.matmul(q, r)


def enc(a) -> dict:
    a = np.ascontiguousarray(a)
    return {"t": [a.dtype.name, list(a.shape), base64.b64encode(a.tobytes()).decode()]}


def dec(d) -> np.ndarray:
    dtype, shape, b = d["t"]
    return np.frombuffer(base64.b64decode(b), dtype=np.dtype(dtype)).reshape(shape).copy()


def _decode(tf, v, watch):
    if isinstance(v, dict) and "t" in v:
        a = dec(v)
        t = tf.constant(a)
        if a.dtype.kind == "f":
            watch.append(t)
        return t
    if isinstance(v, dict) and "np" in v:
        return dec(v["np"])
    if isinstance(v, dict) and "dtype" in v:
        return getattr(tf, v["dtype"])
    if isinstance(v, dict) and "tuple" in v:
        return tuple(_decode(tf, x, watch) for x in v["tuple"])
    if isinstance(v, list):
        return [_decode(tf, x, watch) for x in v]
    return v


def resolve(tf, name):
    if name in COMPOSITES:
        f = COMPOSITES[name]
        return lambda *a, **k: f(tf, *a, **k)
    obj = tf
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _weights(case_id: str, i: int, shape, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(zlib.crc32(f"{case_id}/{i}".encode()))
    return rng.uniform(0.5, 1.5, size=shape).astype(dtype)


def _is_float(t) -> bool:
    return getattr(getattr(t, "dtype", None), "is_floating", False)


def _enc_grad(tf, g):
    if g is None:
        return None
    kind = "IS" if type(g).__name__ == "IndexedSlices" else "T"
    d = enc(np.asarray(tf.convert_to_tensor(g).numpy()))
    d["k"] = kind
    return d


def _err(e: BaseException) -> dict:
    return {"err": type(e).__name__, "msg": str(e).split("\n")[0][:200]}


def run_case(tf, case: dict) -> dict:
    """Run ``case`` under module ``tf``; return the result record."""
    watch: list = []
    try:
        fn = resolve(tf, case["fn"])
    except AttributeError as e:
        return {"err": "MissingAPI", "msg": str(e)[:200]}
    try:
        args = _decode(tf, case.get("args", []), watch)
        kw = {k: _decode(tf, v, watch) for k, v in case.get("kw", {}).items()}
    except Exception as e:  # noqa: BLE001 - building inputs failed
        return {"err": "Input" + type(e).__name__, "msg": str(e)[:200]}
    order = case.get("order", 2) if watch else 0
    res: dict = {}
    rec = "rnd" not in case
    try:
        with tf.GradientTape(persistent=True) as t2:
            for x in watch:
                t2.watch(x)
            with tf.GradientTape(persistent=True) as t1:
                for x in watch:
                    t1.watch(x)
                out = fn(*args, **kw)
                flat = tf.nest.flatten(out)
                target = None
                for i, o in enumerate(flat):
                    if order and _is_float(o):
                        w = tf.constant(_weights(case["id"], i, tuple(o.shape), o.dtype.name))
                        term = tf.reduce_sum(o * w)
                        target = term if target is None else target + term
    except Exception as e:  # noqa: BLE001 - the forward raised: that is the result
        return _err(e)
    outs = []
    for o in flat:
        if hasattr(o, "numpy"):
            a = np.asarray(o.numpy())
            d = enc(a) if rec else {"t": [a.dtype.name, list(a.shape), ""]}
            outs.append(d)
        else:
            outs.append({"py": repr(o)})
    res["out"] = outs
    if not order or target is None or not rec:
        return res
    try:
        with t2:
            g = t1.gradient(target, watch)
            target2 = None
            for i, gi in enumerate(g):
                if gi is None:
                    continue
                gd = tf.convert_to_tensor(gi)
                w = tf.constant(_weights(case["id"], 100 + i, tuple(gd.shape), gd.dtype.name))
                term = tf.reduce_sum(gd * w)
                target2 = term if target2 is None else target2 + term
        res["g1"] = [_enc_grad(tf, gi) for gi in g]
    except Exception as e:  # noqa: BLE001
        res["g1err"] = _err(e)
        return res
    if order < 2 or target2 is None:
        return res
    try:
        h = t2.gradient(target2, watch)
        res["g2"] = [_enc_grad(tf, hi) for hi in h]
    except Exception as e:  # noqa: BLE001
        res["g2err"] = _err(e)
    return res


# ---------------------------------------------------------------- comparison

_TOL = {"float16": (2e-2, 2e-2), "float32": (2e-4, 1e-5), "float64": (1e-8, 1e-10)}
_GTOL = {"float16": (5e-2, 5e-2), "float32": (2e-3, 1e-4), "float64": (1e-6, 1e-8)}


def _cmp_arr(e: dict, a: dict, what: str, tol, check_values=True) -> str | None:
    ed, es, _ = e["t"]
    ad, as_, _ = a["t"]
    if ed != ad:
        return f"{what} dtype {ad} != TF {ed}"
    if list(es) != list(as_):
        return f"{what} shape {as_} != TF {es}"
    if not check_values:
        return None
    if e.get("k", "T") != a.get("k", "T"):
        return f"{what} kind {a.get('k')} != TF {e.get('k')}"
    x, y = dec(e), dec(a)
    if x.dtype.kind != "f":
        if not np.array_equal(x, y):
            return f"{what} values {_short(y)} != TF {_short(x)}"
        return None
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    if not np.array_equal(np.isnan(x64), np.isnan(y64)):
        return f"{what} NaN pattern {_short(y)} != TF {_short(x)}"
    fin = np.isfinite(x64)
    if not np.array_equal(x64[~fin & ~np.isnan(x64)], y64[~fin & ~np.isnan(x64)]):
        return f"{what} inf pattern {_short(y)} != TF {_short(x)}"
    if fin.any():
        rtol, atol = tol[ed] if ed in tol else (1e-6, 1e-6)
        scale = max(1.0, float(np.max(np.abs(x64[fin]))))
        if not np.allclose(y64[fin], x64[fin], rtol=rtol, atol=atol * scale):
            return f"{what} values {_short(y)} != TF {_short(x)}"
    return None


def _short(a: np.ndarray) -> str:
    s = np.array2string(np.asarray(a).ravel()[:6], precision=5, separator=",")
    return s.replace("\n", "")


def _tf_gradient_limit(err: dict) -> bool:
    msg = err.get("msg", "")
    return err.get("err") == "LookupError" or "not in the list of allowed values" in msg or "Could not find" in msg


def compare(expected: dict, actual: dict) -> str | None:
    """First difference between TF's record and ours, or None."""
    if "err" in expected or "err" in actual:
        ee, ae = expected.get("err"), actual.get("err")
        if ee == ae:
            return None
        if ee in ("NotFoundError", "UnimplementedError", "InternalError", "TFCrash") and ae != "MissingAPI":
            return None  # TF has no kernel (or crashed): tapeflow may compute or raise
        am, em = actual.get("msg", "")[:80], expected.get("msg", "")[:80]
        return f"raised {ae or 'nothing'} ({am}) vs TF {ee or 'nothing'} ({em})"
    eo, ao = expected["out"], actual["out"]
    if len(eo) != len(ao):
        return f"{len(ao)} outputs != TF {len(eo)}"
    for i, (e, a) in enumerate(zip(eo, ao)):
        if "py" in e or "py" in a:
            if e != a:
                return f"out[{i}] {a} != TF {e}"
            continue
        m = _cmp_arr(e, a, f"out[{i}]", _TOL, check_values=bool(e["t"][2]))
        if m:
            return m
    for key in ("g1", "g2"):
        ek, ak = expected.get(key + "err"), actual.get(key + "err")
        if ek and not ak and _tf_gradient_limit(ek):
            return None  # TF has no rule/kernel for this gradient; tapeflow computes it
        if ek or ak:
            if (ek or {}).get("err") != (ak or {}).get("err"):
                ak, ek = ak or {}, ek or {}
                return f"{key} raised {ak.get('err')} ({ak.get('msg', '')[:80]}) vs TF {ek.get('err')}"
            return None
        eg, ag = expected.get(key), actual.get(key)
        if eg is None and ag is None:
            continue
        if (eg is None) != (ag is None):
            return f"{key} {'missing' if ag is None else 'present'} vs TF"
        for i, (e, a) in enumerate(zip(eg, ag)):
            if (e is None) != (a is None):
                return f"{key}[{i}] {'None' if a is None else 'present'} vs TF {'None' if e is None else 'present'}"
            if e is not None:
                m = _cmp_arr(e, a, f"{key}[{i}]", _GTOL)
                if m:
                    return m
    return None


def reproducer(case: dict) -> str:
    """A one-line Python call reproducing the case (inputs shown compactly)."""

    def show(v):
        if isinstance(v, dict) and "t" in v:
            a = dec(v)
            body = np.array2string(a, separator=",", threshold=12).replace("\n", "")
            return (
                f"tf.constant({body}, tf.{a.dtype.name})"
                if a.size <= 12
                else f"tf.constant(<{a.dtype.name}{list(a.shape)}>)"
            )
        if isinstance(v, dict) and "np" in v:
            return f"np.{show(v['np'])}"
        if isinstance(v, dict) and "dtype" in v:
            return f"tf.{v['dtype']}"
        if isinstance(v, dict) and "tuple" in v:
            return "(" + ", ".join(show(x) for x in v["tuple"]) + ",)"
        if isinstance(v, list):
            return "[" + ", ".join(show(x) for x in v) + "]"
        return repr(v)

    parts = [show(a) for a in case.get("args", [])]
    parts += [f"{k}={show(v)}" for k, v in case.get("kw", {}).items()]
    return f"{case['fn']}({', '.join(parts)})"
