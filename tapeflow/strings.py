"""``tf.strings``: string tensor ops (see tapeflow/ops/string_ops.py)."""

from tapeflow.ops.string_ops import (
    as_string, bytes_split, format, join, length, lower, ngrams, reduce_join, regex_full_match, regex_replace, split,
    strip, substr, to_hash_bucket, to_hash_bucket_fast, to_hash_bucket_strong, to_number, unicode_decode,
    unicode_decode_with_offsets, unicode_encode, unicode_script, unicode_split, unicode_split_with_offsets,
    unicode_transcode, unsorted_segment_join, upper,
)

__all__ = [
    "as_string", "bytes_split", "format", "join", "length", "lower", "ngrams", "reduce_join", "regex_full_match",
    "regex_replace", "split", "strip", "substr", "to_hash_bucket", "to_hash_bucket_fast", "to_hash_bucket_strong",
    "to_number", "unicode_decode", "unicode_decode_with_offsets", "unicode_encode", "unicode_script", "unicode_split",
    "unicode_split_with_offsets", "unicode_transcode", "unsorted_segment_join", "upper",
]
