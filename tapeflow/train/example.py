"""``tf.train.Example`` and its parts (``Features``, ``Feature``, ``BytesList``, ``FloatList``,
``Int64List``, ``FeatureList(s)``, ``SequenceExample``): TF's protocol buffer messages.

They are real protobuf messages of TF's own schema (``tensorflow/core/example/feature.proto`` and
``example.proto``, package ``tensorflow``), built at import time from a descriptor written here,
so ``SerializeToString``/``FromString``, text printing and equality are the ``protobuf`` package's
and the bytes are TF's. They need the optional ``protobuf`` package (``pip install protobuf``;
the ``tensorboard`` extra brings it); ``tf.io.parse_example`` does not.
"""

from __future__ import annotations

from typing import Any

_CLASSES: dict[str, Any] = {}
_NAMES = ("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList", "FeatureLists", "Example",
          "SequenceExample")


def _build() -> dict[str, Any]:
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        raise NotImplementedError(
            "tf.train.Example and its Feature messages need the protobuf package: pip install protobuf "
            "(tf.io.parse_example and TFRecord files work without it).") from None
    fd = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/example.proto", package="tensorflow",
                                            syntax="proto3")
    f = descriptor_pb2.FieldDescriptorProto
    rep, opt = f.LABEL_REPEATED, f.LABEL_OPTIONAL

    def message(name: str, fields: list, nested: list | None = None, oneofs: list | None = None) -> None:
        m = fd.message_type.add(name=name)
        for o in oneofs or ():
            m.oneof_decl.add(name=o)
        for n, num, label, typ, type_name, oneof in fields:
            fld = m.field.add(name=n, number=num, label=label, type=typ, json_name=_camel(n))
            if type_name:
                fld.type_name = type_name
            if oneof is not None:
                fld.oneof_index = oneof
        for entry_name, value_type in nested or ():
            e = m.nested_type.add(name=entry_name)
            e.options.map_entry = True
            e.field.add(name="key", number=1, label=opt, type=f.TYPE_STRING, json_name="key")
            e.field.add(name="value", number=2, label=opt, type=f.TYPE_MESSAGE, type_name=value_type,
                        json_name="value")

    message("BytesList", [("value", 1, rep, f.TYPE_BYTES, None, None)])
    message("FloatList", [("value", 1, rep, f.TYPE_FLOAT, None, None)])
    message("Int64List", [("value", 1, rep, f.TYPE_INT64, None, None)])
    message("Feature", [("bytes_list", 1, opt, f.TYPE_MESSAGE, ".tensorflow.BytesList", 0),
                        ("float_list", 2, opt, f.TYPE_MESSAGE, ".tensorflow.FloatList", 0),
                        ("int64_list", 3, opt, f.TYPE_MESSAGE, ".tensorflow.Int64List", 0)], oneofs=["kind"])
    message("Features", [("feature", 1, rep, f.TYPE_MESSAGE, ".tensorflow.Features.FeatureEntry", None)],
            nested=[("FeatureEntry", ".tensorflow.Feature")])
    message("FeatureList", [("feature", 1, rep, f.TYPE_MESSAGE, ".tensorflow.Feature", None)])
    message("FeatureLists", [("feature_list", 1, rep, f.TYPE_MESSAGE, ".tensorflow.FeatureLists.FeatureListEntry",
                              None)], nested=[("FeatureListEntry", ".tensorflow.FeatureList")])
    message("Example", [("features", 1, opt, f.TYPE_MESSAGE, ".tensorflow.Features", None)])
    message("SequenceExample", [("context", 1, opt, f.TYPE_MESSAGE, ".tensorflow.Features", None),
                                ("feature_lists", 2, opt, f.TYPE_MESSAGE, ".tensorflow.FeatureLists", None)])
    pool = descriptor_pool.DescriptorPool()  # private: never clashes with other copies of these names
    file_desc = pool.Add(fd) if hasattr(pool, "Add") else None
    if file_desc is None or not hasattr(file_desc, "message_types_by_name"):
        file_desc = pool.FindFileByName(fd.name)
    return {n: message_factory.GetMessageClass(file_desc.message_types_by_name[n]) for n in _NAMES}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def message_class(name: str) -> Any:
    """The message class ``tf.train.<name>`` (built on first use)."""
    if not _CLASSES:
        _CLASSES.update(_build())
    return _CLASSES[name]
