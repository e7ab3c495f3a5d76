"""The input argument names of TF's OpDefs, by op type (TF 2.21's op registry; ops with list inputs
are left out). A Python value an op converts becomes a ``Const`` node named for its argument under the
op's scope (``Greater/y``, ``Sum/reduction_indices``), so ``FuncGraph`` names eager inputs with these."""

from __future__ import annotations

__all__ = ["input_names"]

# argument names -> the op types that take them
_BY_ARGS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("bytes",): tuple("DecodeRaw".split()),
    ("features",): tuple("Elu LeakyRelu Relu Relu6 Selu Softplus Softsign".split()),
    ("filename",): tuple("ReadFile".split()),
    ("input",): tuple(
        "AsString AvgPool3D Cholesky Identity LogMatrixDeterminant MatrixDeterminant MatrixInverse MaxPool "
        "MaxPool3D MaxPoolWithArgmax Qr Rank SelfAdjointEigV2 Shape Size StopGradient StringLength "
        "StringLower StringStrip StringToHashBucketFast StringToHashBucketStrong StringUpper Svd "
        "UnicodeDecode Where".split()
    ),
    ("logits",): tuple("LogSoftmax Softmax".split()),
    ("serialized",): tuple("ParseTensor".split()),
    ("shape",): tuple("RandomStandardNormal RandomUniform TruncatedNormal".split()),
    ("string_tensor",): tuple("StringToHashBucket StringToNumber".split()),
    ("t",): tuple("L2Loss".split()),
    ("tensor",): tuple("CheckNumerics SerializeTensor".split()),
    ("value",): tuple("AvgPool RandomShuffle Unpack".split()),
    ("x",): tuple(
        "Abs Acos Acosh Asin Asinh Atan Atanh Cast Ceil Cos Cosh Digamma Erf Erfc Erfinv Exp Expm1 Floor "
        "Invert InvertPermutation IsFinite IsInf IsNan Lgamma Log Log1p LogicalNot Ndtri Neg OnesLike "
        "Reciprocal Rint Round Rsqrt Sigmoid Sign Sin Sinh Sqrt Square Tan Tanh Unique ZerosLike".split()
    ),
    ("a", "b"): tuple("Cross".split()),
    ("a", "x"): tuple("Polygamma".split()),
    ("data", "segment_ids"): tuple("SegmentMax SegmentMean SegmentMin SegmentProd SegmentSum".split()),
    ("dims", "value"): tuple("Fill".split()),
    ("features", "labels"): tuple("SoftmaxCrossEntropyWithLogits SparseSoftmaxCrossEntropyWithLogits".split()),
    ("filename", "contents"): tuple("WriteFile".split()),
    ("gradients", "features"): tuple("ReluGrad".split()),
    ("grads", "original_image"): tuple("ResizeBilinearGrad".split()),
    ("grads", "size"): tuple("ResizeNearestNeighborGrad".split()),
    ("images", "contrast_factor"): tuple("AdjustContrastv2".split()),
    ("images", "size"): tuple("ResizeBilinear ResizeNearestNeighbor".split()),
    ("input", "dimension"): tuple("ArgMax ArgMin".split()),
    ("input", "filter"): tuple("Conv2D Conv3D DepthwiseConv2dNative".split()),
    ("input", "k"): tuple("TopKV2".split()),
    ("input", "multiples"): tuple("Tile".split()),
    ("input", "paddings"): tuple("MirrorPad MirrorPadGrad".split()),
    ("input", "pattern"): tuple("RegexFullMatch".split()),
    ("input", "reduction_indices"): tuple("All Any EuclideanNorm Max Mean Min Prod Sum".split()),
    ("input", "sep"): tuple("StringSplitV2".split()),
    ("input", "shape"): tuple("BroadcastTo".split()),
    ("input_bytes", "fixed_length"): tuple("DecodePaddedRaw".split()),
    ("input_values", "input_splits"): tuple("UnicodeEncode".split()),
    ("inputs", "reduction_indices"): tuple("ReduceJoin".split()),
    ("logits", "num_samples"): tuple("Multinomial".split()),
    ("matrix", "rhs"): tuple("MatrixSolve MatrixTriangularSolve".split()),
    ("orig_input_shape", "grad"): tuple("AvgPool3DGrad AvgPoolGrad".split()),
    ("params", "indices"): tuple("GatherNd".split()),
    ("shape", "seed"): tuple(
        "StatelessRandomNormal StatelessRandomUniform StatelessRandomUniformFullInt StatelessTruncatedNormal".split()
    ),
    ("tensor", "axis"): tuple("ReverseV2".split()),
    ("tensor", "shape"): tuple("Reshape".split()),
    ("value", "bias"): tuple("BiasAdd".split()),
    ("x", "axis"): tuple("Cumprod Cumsum CumulativeLogsumexp".split()),
    ("x", "perm"): tuple("Transpose".split()),
    ("x", "q"): tuple("Zeta".split()),
    ("x", "y"): tuple(
        "AddV2 BatchMatMulV2 BitwiseAnd BitwiseOr BitwiseXor DivNoNan Equal FloorDiv FloorMod Greater "
        "GreaterEqual Less LessEqual LogicalAnd LogicalOr Maximum Minimum Mul MulNoNan NotEqual Pow RealDiv "
        "SquaredDifference Sub Xdivy Xlog1py Xlogy".split()
    ),
    ("x1", "x2"): tuple("NextAfter".split()),
    ("y", "dy"): tuple("SqrtGrad".split()),
    ("y", "x"): tuple("Atan2".split()),
    ("condition", "t", "e"): tuple("SelectV2".split()),
    ("data", "segment_ids", "num_segments"): tuple(
        "UnsortedSegmentMax UnsortedSegmentMin UnsortedSegmentProd UnsortedSegmentSum".split()
    ),
    ("indices", "updates", "shape"): tuple("ScatterNd".split()),
    ("input", "diagonal", "k"): tuple("MatrixSetDiagV3".split()),
    ("input", "filter_sizes", "out_backprop"): tuple(
        "Conv2DBackpropFilter Conv3DBackpropFilterV2 DepthwiseConv2dNativeBackpropFilter".split()
    ),
    ("input", "k", "padding_value"): tuple("MatrixDiagPartV3".split()),
    ("input", "num_lower", "num_upper"): tuple("MatrixBandPart".split()),
    ("input", "paddings", "constant_values"): tuple("PadV2".split()),
    ("input", "pattern", "rewrite"): tuple("RegexReplace".split()),
    ("input", "pos", "len"): tuple("Substr".split()),
    ("input", "shift", "axis"): tuple("Roll".split()),
    ("input", "size", "weights"): tuple("DenseBincount".split()),
    ("input_handle", "index", "element_shape"): tuple("TensorListGetItem".split()),
    ("input_handle", "index", "item"): tuple("TensorListSetItem".split()),
    ("input_sizes", "filter", "out_backprop"): tuple(
        "Conv2DBackpropInput Conv3DBackpropInputV2 DepthwiseConv2dNativeBackpropInput".split()
    ),
    ("logits", "num_samples", "seed"): tuple("StatelessMultinomial".split()),
    ("orig_input", "orig_output", "grad"): tuple("MaxPool3DGrad MaxPool3DGradGrad MaxPoolGrad MaxPoolGradGrad".split()),
    ("params", "indices", "axis"): tuple("GatherV2".split()),
    ("predictions", "targets", "k"): tuple("InTopKV2".split()),
    ("resource", "algorithm", "shape"): tuple(
        "StatefulStandardNormalV2 StatefulTruncatedNormal StatefulUniform StatefulUniformFullInt".split()
    ),
    ("shape", "minval", "maxval"): tuple("RandomUniformInt".split()),
    ("start", "limit", "delta"): tuple("Range".split()),
    ("t", "clip_value_min", "clip_value_max"): tuple("ClipByValue".split()),
    ("tensor", "indices", "updates"): tuple(
        "TensorScatterAdd TensorScatterMax TensorScatterMin TensorScatterSub TensorScatterUpdate".split()
    ),
    ("value", "size_splits", "split_dim"): tuple("SplitV".split()),
    ("a_indices", "a_values", "a_shape", "b"): tuple("SparseTensorDenseMatMul".split()),
    ("images", "transforms", "output_shape", "fill_value"): tuple("ImageProjectiveTransformV3".split()),
    ("indices", "depth", "on_value", "off_value"): tuple("OneHot".split()),
    ("input", "begin", "end", "strides"): tuple("StridedSlice".split()),
    ("shape", "seed", "minval", "maxval"): tuple("StatelessRandomUniformInt".split()),
    ("diagonal", "k", "num_rows", "num_cols", "padding_value"): tuple("MatrixDiagV3".split()),
    ("resource", "algorithm", "shape", "minval", "maxval"): tuple("StatefulUniformInt".split()),
    ("shape", "begin", "end", "strides", "dy"): tuple("StridedSliceGrad".split()),
}
_NAMES = {op: args for args, ops in _BY_ARGS.items() for op in ops}


def input_names(op_type: str, n: int) -> tuple[str, ...]:
    """TF's names for the ``n`` inputs of ``op_type``; ``Const`` where TF's OpDef
    differs from tapeflow's op (an attr here is an input there) or is not known."""
    names = _NAMES.get(op_type)
    if names is not None and len(names) == n:
        return names
    return ("Const",) * n
