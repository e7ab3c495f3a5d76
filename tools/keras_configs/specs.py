# ruff: noqa: E501 -- one constructor expression per line
"""The probed constructor expressions: ``(label, expression)``, evaluated with ``K`` = ``keras`` (real Keras
3.15) or ``tapeflow.keras``. See make_fixture.py."""


def relu_fn(x):
    return x


SPECS = []


def s(label, expr):
    SPECS.append((label, expr))


# ---- layers ----
L = "K.layers."
layer_specs = [
    ("Activation", ["'relu'", "'tanh', name='act'"]),
    ("ActivityRegularization", ["", "l1=0.1, l2=0.2"]),
    ("Add", [""]),
    ("Average", [""]),
    ("Concatenate", ["", "axis=1"]),
    ("Maximum", [""]),
    ("Minimum", [""]),
    ("Multiply", [""]),
    ("Subtract", [""]),
    ("AdditiveAttention", ["", "use_scale=False, dropout=0.1"]),
    ("Attention", ["", "use_scale=True, score_mode='concat', dropout=0.2"]),
    ("AveragePooling1D", ["", "pool_size=3, strides=1, padding='same'"]),
    ("AveragePooling2D", ["", "pool_size=(3, 3), strides=(1, 1), padding='same'"]),
    ("MaxPooling1D", ["", "pool_size=3, strides=1, padding='same'"]),
    ("MaxPooling2D", ["", "pool_size=(3, 3), strides=(1, 1), padding='same'"]),
    (
        "BatchNormalization",
        [
            "",
            "axis=1, momentum=0.9, epsilon=1e-2, center=False, scale=False, "
            "beta_initializer='ones', gamma_regularizer='l2'",
        ],
    ),
    ("Bidirectional", ["K.layers.LSTM(4)", "K.layers.GRU(3, return_sequences=True), merge_mode='sum'"]),
    (
        "Conv1D",
        [
            "4, 3",
            "4, 3, strides=2, padding='same', activation='relu', use_bias=False, "
            "kernel_initializer='he_normal', kernel_regularizer=K.regularizers.L2(0.01)",
        ],
    ),
    ("Conv2D", ["4, 3", "4, (3, 3), strides=(2, 2), padding='same', activation='relu', bias_initializer='ones'"]),
    ("Conv3D", ["2, 3", "2, 3, strides=2, padding='same'"]),
    ("Conv1DTranspose", ["4, 3", "4, 3, strides=2, padding='same'"]),
    ("Conv2DTranspose", ["4, 3", "4, 3, strides=2, padding='same', activation='relu'"]),
    ("Conv3DTranspose", ["2, 3", "2, 3, strides=2, padding='same'"]),
    ("DepthwiseConv1D", ["3", "3, depth_multiplier=2, padding='same'"]),
    ("DepthwiseConv2D", ["3", "3, depth_multiplier=2, strides=2, activation='relu'"]),
    ("SeparableConv1D", ["4, 3", "4, 3, depth_multiplier=2, padding='same'"]),
    ("SeparableConv2D", ["4, 3", "4, 3, depth_multiplier=2, strides=(2, 2), activation='relu'"]),
    ("Cropping1D", ["", "(1, 2)"]),
    ("Cropping2D", ["", "((1, 2), (3, 4))"]),
    ("Cropping3D", ["", "2"]),
    (
        "Dense",
        [
            "3",
            "3, activation='relu', use_bias=False, kernel_initializer='zeros', bias_initializer='ones', "
            "kernel_regularizer='l2', bias_regularizer=K.regularizers.L1(0.1)",
        ],
    ),
    ("Dropout", ["0.5", "0.3, noise_shape=(None, 1), seed=1"]),
    ("ELU", ["", "alpha=0.5"]),
    (
        "EinsumDense",
        ["'ab,bc->ac', output_shape=4", "'abc,cd->abd', output_shape=(None, 4), bias_axes='d', activation='relu'"],
    ),
    ("Embedding", ["10, 3", "10, 3, mask_zero=True, embeddings_initializer='ones'"]),
    ("Flatten", ["", "data_format='channels_first'"]),
    (
        "GRU",
        [
            "4",
            "4, return_sequences=True, return_state=True, go_backwards=True, dropout=0.1, "
            "recurrent_dropout=0.1, reset_after=False, unroll=True",
        ],
    ),
    ("GRUCell", ["4", "4, activation='relu', reset_after=False"]),
    ("LSTM", ["4", "4, unit_forget_bias=False, return_sequences=True, stateful=True"]),
    ("LSTMCell", ["4", "4, recurrent_activation='hard_sigmoid'"]),
    ("SimpleRNN", ["4", "4, activation='relu', return_state=True"]),
    ("SimpleRNNCell", ["4", "4, dropout=0.2"]),
    ("RNN", ["K.layers.SimpleRNNCell(4)", "K.layers.LSTMCell(3), return_sequences=True"]),
    ("StackedRNNCells", ["[K.layers.SimpleRNNCell(2), K.layers.SimpleRNNCell(3)]"]),
    ("GaussianDropout", ["0.2", "0.2, seed=3"]),
    ("GaussianNoise", ["0.1", "0.1, seed=3"]),
    ("GlobalAveragePooling1D", ["", "keepdims=True"]),
    ("GlobalAveragePooling2D", ["", "keepdims=True"]),
    ("GlobalMaxPooling1D", ["", "keepdims=True"]),
    ("GlobalMaxPooling2D", ["", "keepdims=True"]),
    ("Identity", [""]),
    ("InputLayer", ["shape=(3,)", "shape=(None, 4), batch_size=2, dtype='int32', name='inp'"]),
    ("LayerNormalization", ["", "axis=1, epsilon=1e-5, center=False"]),
    ("LeakyReLU", ["", "negative_slope=0.1"]),
    ("Masking", ["", "mask_value=1.0"]),
    (
        "MultiHeadAttention",
        ["2, 4", "2, 4, value_dim=3, dropout=0.1, use_bias=False, output_shape=(5,), attention_axes=(1,)"],
    ),
    ("Normalization", ["", "mean=0.0, variance=1.0"]),
    ("PReLU", ["", "alpha_initializer='ones', shared_axes=[1]"]),
    ("Permute", ["(2, 1)"]),
    ("RandomBrightness", ["0.2"]),
    ("RandomContrast", ["0.1"]),
    ("RandomCrop", ["4, 4"]),
    ("RandomFlip", ["", "'horizontal', seed=1"]),
    ("RandomHeight", ["0.2"]),
    ("RandomRotation", ["0.1"]),
    ("RandomTranslation", ["0.1, 0.1"]),
    ("RandomWidth", ["0.2"]),
    ("RandomZoom", ["0.1"]),
    ("ReLU", ["", "max_value=6.0, negative_slope=0.1, threshold=0.5"]),
    ("RepeatVector", ["3"]),
    ("Rescaling", ["1 / 255.0", "2.0, offset=1.0"]),
    ("Reshape", ["(3, 2)", "(-1,)"]),
    ("Softmax", ["", "axis=1"]),
    ("SpatialDropout1D", ["0.2"]),
    ("SpatialDropout2D", ["0.2"]),
    ("SpatialDropout3D", ["0.2, seed=1"]),
    ("TimeDistributed", ["K.layers.Dense(3)"]),
    ("UpSampling1D", ["", "3"]),
    ("UpSampling2D", ["", "(2, 3), interpolation='bilinear'"]),
    ("UpSampling3D", [""]),
    ("ZeroPadding1D", ["", "2"]),
    ("ZeroPadding2D", ["", "((1, 2), (3, 4))"]),
    ("ZeroPadding3D", [""]),
    ("Lambda", ["relu_fn"]),
    ("Layer", [""]),
]
for name, variants in layer_specs:
    for i, a in enumerate(variants):
        s(f"layers.{name}[{i}]", f"K.layers.{name}({a})")

init_specs = [
    ("Constant", ["", "2.0"]),
    ("GlorotNormal", ["", "seed=1"]),
    ("GlorotUniform", ["", "seed=1"]),
    ("HeNormal", ["", "seed=1"]),
    ("HeUniform", ["", "seed=1"]),
    ("LecunNormal", ["", "seed=1"]),
    ("LecunUniform", ["", "seed=1"]),
    ("Identity", ["", "gain=2.0"]),
    ("Orthogonal", ["", "gain=2.0, seed=3"]),
    ("Ones", [""]),
    ("Zeros", [""]),
    ("RandomNormal", ["", "mean=1.0, stddev=2.0, seed=4"]),
    ("RandomUniform", ["", "-1.0, 1.0, seed=5"]),
    ("TruncatedNormal", ["", "mean=1.0, stddev=2.0, seed=4"]),
    ("VarianceScaling", ["", "scale=2.0, mode='fan_out', distribution='uniform', seed=6"]),
]
for name, variants in init_specs:
    for i, a in enumerate(variants):
        s(f"initializers.{name}[{i}]", f"K.initializers.{name}({a})")

for name, variants in [("L1", ["", "0.1"]), ("L2", ["", "0.2"]), ("L1L2", ["", "l1=0.1, l2=0.2"])]:
    for i, a in enumerate(variants):
        s(f"regularizers.{name}[{i}]", f"K.regularizers.{name}({a})")

for name, variants in [
    ("MaxNorm", ["", "3.0, axis=1"]),
    ("MinMaxNorm", ["", "0.1, 2.0, rate=0.5"]),
    ("NonNeg", [""]),
    ("UnitNorm", ["", "axis=1"]),
]:
    for i, a in enumerate(variants):
        s(f"constraints.{name}[{i}]", f"K.constraints.{name}({a})")

opt_specs = [
    ("SGD", ["", "0.1, momentum=0.9, nesterov=True, clipnorm=1.0"]),
    ("Adam", ["", "1e-2, beta_1=0.8, amsgrad=True, clipvalue=0.5, weight_decay=0.01"]),
    ("AdamW", ["", "1e-2, weight_decay=0.1"]),
    ("Adadelta", ["", "0.5, rho=0.9"]),
    ("Adafactor", ["", "0.01"]),
    ("Adagrad", ["", "0.1, epsilon=1e-5"]),
    ("Adamax", ["", "0.1"]),
    ("Ftrl", ["", "0.1, l1_regularization_strength=0.1"]),
    ("Lamb", ["", "0.1"]),
    ("Lion", ["", "0.1, beta_1=0.8"]),
    ("Nadam", ["", "0.1"]),
    ("RMSprop", ["", "0.1, momentum=0.5, centered=True"]),
    ("LossScaleOptimizer", ["K.optimizers.Adam()", "K.optimizers.SGD(0.1), dynamic_growth_steps=100"]),
]
for name, variants in opt_specs:
    for i, a in enumerate(variants):
        s(f"optimizers.{name}[{i}]", f"K.optimizers.{name}({a})")
s("optimizers.Adam[sched]", "K.optimizers.Adam(K.optimizers.schedules.ExponentialDecay(0.1, 100, 0.9))")

sched_specs = [
    ("CosineDecay", ["0.1, 100", "0.1, 100, alpha=0.1, warmup_target=0.2, warmup_steps=10"]),
    ("CosineDecayRestarts", ["0.1, 100"]),
    ("ExponentialDecay", ["0.1, 100, 0.9", "0.1, 100, 0.9, staircase=True"]),
    ("InverseTimeDecay", ["0.1, 10, 0.5"]),
    ("PiecewiseConstantDecay", ["[10, 20], [1.0, 0.5, 0.1]"]),
    ("PolynomialDecay", ["0.1, 100", "0.1, 100, end_learning_rate=0.01, power=2.0, cycle=True"]),
]
for name, variants in sched_specs:
    for i, a in enumerate(variants):
        s(f"schedules.{name}[{i}]", f"K.optimizers.schedules.{name}({a})")

loss_specs = [
    ("BinaryCrossentropy", ["", "from_logits=True, label_smoothing=0.1, reduction='sum', name='bce'"]),
    ("CategoricalCrossentropy", ["", "from_logits=True, label_smoothing=0.1, axis=1"]),
    ("SparseCategoricalCrossentropy", ["", "from_logits=True, ignore_class=0"]),
    ("CategoricalHinge", [""]),
    ("CosineSimilarity", ["", "axis=0"]),
    ("Hinge", [""]),
    ("Huber", ["", "delta=2.0"]),
    ("KLDivergence", [""]),
    ("LogCosh", [""]),
    ("MeanAbsoluteError", ["", "reduction='sum', name='m'"]),
    ("MeanAbsolutePercentageError", [""]),
    ("MeanSquaredError", ["", "reduction=None"]),
    ("MeanSquaredLogarithmicError", [""]),
    ("Poisson", [""]),
    ("SquaredHinge", [""]),
]
for name, variants in loss_specs:
    for i, a in enumerate(variants):
        s(f"losses.{name}[{i}]", f"K.losses.{name}({a})")

metric_specs = [
    ("AUC", ["", "num_thresholds=50, curve='PR', name='auc2'"]),
    ("Accuracy", [""]),
    ("BinaryAccuracy", ["", "threshold=0.3"]),
    ("BinaryCrossentropy", ["", "from_logits=True"]),
    ("CategoricalAccuracy", [""]),
    ("CategoricalCrossentropy", ["", "label_smoothing=0.1"]),
    ("CategoricalHinge", [""]),
    ("CosineSimilarity", ["", "axis=0"]),
    ("FalseNegatives", ["", "thresholds=0.3"]),
    ("FalsePositives", [""]),
    ("TrueNegatives", [""]),
    ("TruePositives", [""]),
    ("Hinge", [""]),
    ("KLDivergence", [""]),
    ("LogCoshError", [""]),
    ("Mean", ["", "name='mm', dtype='float64'"]),
    ("Sum", [""]),
    ("MeanAbsoluteError", [""]),
    ("MeanAbsolutePercentageError", [""]),
    ("MeanSquaredError", [""]),
    ("MeanSquaredLogarithmicError", [""]),
    ("Poisson", [""]),
    ("Precision", ["", "thresholds=0.3, top_k=2"]),
    ("Recall", ["", "class_id=1"]),
    ("RootMeanSquaredError", [""]),
    ("SparseCategoricalAccuracy", [""]),
    ("SparseCategoricalCrossentropy", ["", "from_logits=True"]),
    ("SparseTopKCategoricalAccuracy", ["", "k=3"]),
    ("SquaredHinge", [""]),
    ("TopKCategoricalAccuracy", ["", "k=2"]),
]
for name, variants in metric_specs:
    for i, a in enumerate(variants):
        s(f"metrics.{name}[{i}]", f"K.metrics.{name}({a})")

s("mixed_precision.DTypePolicy[0]", "K.mixed_precision.DTypePolicy('mixed_float16')")
s("mixed_precision.DTypePolicy[1]", "K.mixed_precision.DTypePolicy('float32')")

pre_specs = [
    ("CategoryEncoding", ["num_tokens=5", "num_tokens=5, output_mode='one_hot', sparse=False"]),
    ("Discretization", ["bin_boundaries=[0.0, 1.0]", "num_bins=3, epsilon=0.1"]),
    ("Hashing", ["num_bins=4", "num_bins=4, salt=3, output_mode='one_hot'"]),
    ("IntegerLookup", ["", "vocabulary=[1, 2, 3], num_oov_indices=2"]),
    ("StringLookup", ["", "vocabulary=['a', 'b'], mask_token='', output_mode='multi_hot'"]),
    ("TextVectorization", ["", "max_tokens=10, output_sequence_length=4, standardize='lower'"]),
]
for name, variants in pre_specs:
    for i, a in enumerate(variants):
        s(f"layers.{name}[{i}]", f"K.layers.{name}({a})")

SPECS += [
    ("layers.Dense[f64]", "K.layers.Dense(2, dtype='float64')"),
    ("layers.Dense[mixed]", "K.layers.Dense(2, dtype='mixed_float16')"),
    ("layers.Dense[policy]", "K.layers.Dense(2, dtype=K.mixed_precision.DTypePolicy('float16'))"),
    ("layers.Conv2D[groups]", "K.layers.Conv2D(4, 3, groups=2, dilation_rate=2, kernel_constraint='non_neg')"),
    ("layers.Conv1D[causal]", "K.layers.Conv1D(4, 3, padding='causal', dilation_rate=2)"),
    ("layers.InputLayer[sparse]", "K.layers.InputLayer(shape=(3,), sparse=True)"),
    ("layers.Dropout[trainable]", "K.layers.Dropout(0.2, trainable=False, name='dd')"),
    ("layers.LSTM[act_reg]", "K.layers.LSTM(3, activity_regularizer='l2', kernel_constraint=K.constraints.UnitNorm())"),
    ("layers.Embedding[reg]", "K.layers.Embedding(4, 2, embeddings_regularizer='l1', activity_regularizer='l2')"),
    (
        "layers.BatchNormalization[constraint]",
        "K.layers.BatchNormalization(beta_constraint='non_neg', synchronized=True)",
    ),
    ("models.Sequential[0]", "K.Sequential([K.Input((3,)), K.layers.Dense(2), K.layers.Dropout(0.1)])"),
    ("models.Sequential[1]", "K.Sequential([K.layers.Dense(2)], name='s')"),
    ("models.Functional[0]", "(lambda i: K.Model(i, K.layers.Dense(2)(K.layers.Dense(3)(i))))(K.Input((4,)))"),
    ("optimizers.SGD[lr_var]", "K.optimizers.SGD(learning_rate=0.25)"),
    ("metrics.AUC[thresholds]", "K.metrics.AUC(thresholds=[0.2, 0.6])"),
    ("metrics.Precision[list]", "K.metrics.Precision(thresholds=[0.2, 0.6])"),
]

SPECS += [
    (
        "layers.Dense[ntf]",
        "K.layers.Dense(2, trainable=False, name='x', kernel_initializer=K.initializers.Orthogonal(gain=2.0, seed=1))",
    ),
    (
        "layers.Conv2D[vs]",
        "K.layers.Conv2D(3, 2, kernel_initializer=K.initializers.VarianceScaling(2.0, 'fan_avg', 'uniform', seed=3), bias_constraint=K.constraints.MaxNorm(1.5))",
    ),
    ("layers.Conv2DTranspose[op]", "K.layers.Conv2DTranspose(2, 3, strides=2, output_padding=1, dilation_rate=1)"),
    (
        "layers.DepthwiseConv2D[reg]",
        "K.layers.DepthwiseConv2D(3, depthwise_regularizer='l2', depthwise_constraint='non_neg', use_bias=False)",
    ),
    (
        "layers.SeparableConv2D[reg]",
        "K.layers.SeparableConv2D(2, 3, pointwise_regularizer='l1', depthwise_initializer='ones', pointwise_constraint='unit_norm')",
    ),
    (
        "layers.EinsumDense[reg]",
        "K.layers.EinsumDense('ab,bc->ac', output_shape=3, bias_axes='c', kernel_regularizer='l2', bias_constraint='non_neg')",
    ),
    (
        "layers.MultiHeadAttention[reg]",
        "K.layers.MultiHeadAttention(2, 3, kernel_regularizer='l2', bias_initializer='ones', kernel_constraint='non_neg', seed=2)",
    ),
    (
        "layers.LayerNormalization[reg]",
        "K.layers.LayerNormalization(gamma_regularizer='l2', beta_constraint='non_neg', scale=False)",
    ),
    (
        "layers.GRU[reg]",
        "K.layers.GRU(2, kernel_regularizer='l1', recurrent_constraint='unit_norm', bias_initializer='ones', seed=4, use_bias=False)",
    ),
    ("layers.SimpleRNNCell[reg]", "K.layers.SimpleRNNCell(2, recurrent_regularizer='l2', seed=5)"),
    ("layers.PReLU[reg]", "K.layers.PReLU(alpha_regularizer='l2', alpha_constraint='non_neg')"),
    ("layers.Embedding[c]", "K.layers.Embedding(4, 2, embeddings_constraint=K.constraints.MaxNorm(1.0))"),
    ("layers.TimeDistributed[conv]", "K.layers.TimeDistributed(K.layers.Conv2D(2, 3))"),
    ("layers.Bidirectional[ave]", "K.layers.Bidirectional(K.layers.SimpleRNN(2), merge_mode='ave')"),
    (
        "layers.Bidirectional[bw]",
        "K.layers.Bidirectional(K.layers.LSTM(2), backward_layer=K.layers.LSTM(2, go_backwards=True))",
    ),
    ("layers.RandomFlip[v]", "K.layers.RandomFlip('vertical', seed=3)"),
    (
        "layers.RandomRotation[v]",
        "K.layers.RandomRotation((-0.2, 0.3), fill_mode='constant', interpolation='nearest', seed=1, fill_value=1.0)",
    ),
    ("layers.RandomZoom[v]", "K.layers.RandomZoom(0.2, width_factor=(-0.1, 0.3), seed=1)"),
    ("layers.RandomTranslation[v]", "K.layers.RandomTranslation((-0.1, 0.2), 0.3, fill_mode='nearest', seed=2)"),
    ("layers.RandomContrast[v]", "K.layers.RandomContrast((0.1, 0.4), seed=3)"),
    ("layers.RandomBrightness[v]", "K.layers.RandomBrightness((-0.2, 0.1), value_range=(0, 1), seed=4)"),
    ("layers.RandomCrop[v]", "K.layers.RandomCrop(3, 4, seed=5)"),
    ("layers.Rescaling[v]", "K.layers.Rescaling(scale=0.5, offset=-1.0, dtype='float64')"),
    ("layers.Normalization[v]", "K.layers.Normalization(axis=None, mean=[1.0, 2.0], variance=[1.0, 4.0], invert=True)"),
    ("layers.Attention[v]", "K.layers.Attention(score_mode='dot', seed=2)"),
    ("layers.GaussianNoise[v]", "K.layers.GaussianNoise(0.3, seed=1, name='gn')"),
    ("layers.Activation[fn]", "K.layers.Activation(K.activations.gelu)"),
    ("layers.Dense[act]", "K.layers.Dense(2, activation=K.activations.softmax)"),
    ("layers.Dense[act_sw]", "K.layers.Dense(2, activation='swish')"),
    ("layers.Concatenate[v]", "K.layers.Concatenate(axis=-2, name='cc')"),
    ("layers.Dot[v]", "K.layers.Dot(axes=1)"),
    ("layers.GlobalAveragePooling2D[cf]", "K.layers.GlobalAveragePooling2D(keepdims=True, name='g')"),
    (
        "optimizers.Adam[ema]",
        "K.optimizers.Adam(use_ema=True, ema_momentum=0.9, global_clipnorm=2.0, gradient_accumulation_steps=2)",
    ),
    ("optimizers.Nadam[v]", "K.optimizers.Nadam(beta_1=0.8, beta_2=0.99, epsilon=1e-5, weight_decay=0.004)"),
    ("optimizers.Adafactor[v]", "K.optimizers.Adafactor(beta_2_decay=-0.7, clip_threshold=2.0, relative_step=False)"),
    ("optimizers.Lamb[v]", "K.optimizers.Lamb(0.01, beta_1=0.8, epsilon=1e-5)"),
    (
        "optimizers.Ftrl[v]",
        "K.optimizers.Ftrl(learning_rate_power=-0.6, initial_accumulator_value=0.2, l2_shrinkage_regularization_strength=0.1, beta=0.5)",
    ),
    (
        "optimizers.RMSprop[sched]",
        "K.optimizers.RMSprop(K.optimizers.schedules.PiecewiseConstantDecay([5], [0.1, 0.01]))",
    ),
    (
        "schedules.CosineDecayRestarts[v]",
        "K.optimizers.schedules.CosineDecayRestarts(0.1, 10, t_mul=3.0, m_mul=0.5, alpha=0.1, name='cdr')",
    ),
    (
        "schedules.InverseTimeDecay[v]",
        "K.optimizers.schedules.InverseTimeDecay(0.1, 10, 0.5, staircase=True, name='itd')",
    ),
    ("losses.CategoricalHinge[v]", "K.losses.CategoricalHinge(reduction='sum', name='ch')"),
    ("losses.KLDivergence[v]", "K.losses.KLDivergence(reduction='mean')"),
    ("losses.SparseCategoricalCrossentropy[v]", "K.losses.SparseCategoricalCrossentropy(axis=-1, reduction='none')"),
    ("losses.BinaryCrossentropy[dtype]", "K.losses.BinaryCrossentropy(dtype='float64')"),
    ("metrics.BinaryAccuracy[v]", "K.metrics.BinaryAccuracy(name='ba', dtype='float64', threshold=0.7)"),
    ("metrics.TopKCategoricalAccuracy[n]", "K.metrics.TopKCategoricalAccuracy(k=3, name='t3')"),
    ("metrics.Recall[t]", "K.metrics.Recall(thresholds=[0.1, 0.5, 0.9], name='r')"),
    ("metrics.AUC[v]", "K.metrics.AUC(summation_method='minoring', from_logits=True, num_labels=None)"),
    ("metrics.RootMeanSquaredError[v]", "K.metrics.RootMeanSquaredError(name='rmse', dtype='float64')"),
    ("metrics.Sum[v]", "K.metrics.Sum(name='s', dtype='int32')"),
    ("initializers.Constant[list]", "K.initializers.Constant([1.0, 2.0])"),
    ("initializers.TruncatedNormal[s]", "K.initializers.TruncatedNormal(0.0, 0.5, seed=9)"),
    ("regularizers.L1L2[big]", "K.regularizers.L1L2(l1=1e-3, l2=3)"),
    ("constraints.MaxNorm[list]", "K.constraints.MaxNorm(3, axis=[0, 1])"),
]
