"""
# An image pipeline: PNG files on disk, image_dataset_from_directory, tf.image ops, augmentation, a small CNN
"""
import os

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
for label in ("circles", "squares"):
    os.makedirs(os.path.join("shapes", label), exist_ok=True)
    for i in range(24):
        img = np.zeros((32, 32, 3), np.uint8)
        c, r = rng.randint(10, 22, size=2), rng.randint(4, 9)
        yy, xx = np.mgrid[0:32, 0:32]
        if label == "circles":
            inside = (yy - c[0]) ** 2 + (xx - c[1]) ** 2 <= r * r
        else:
            inside = (abs(yy - c[0]) <= r) & (abs(xx - c[1]) <= r)
        img[inside] = rng.randint(120, 256, size=3)
        tf.io.write_file(os.path.join("shapes", label, f"{i:02d}.png"), tf.io.encode_png(img))
print(sorted(os.listdir("shapes")), len(os.listdir("shapes/circles")))
"""
Loading with image_dataset_from_directory and by hand.
"""
train = tf.keras.utils.image_dataset_from_directory("shapes", image_size=(28, 28), batch_size=8, seed=1,
                                                    validation_split=0.25, subset="training")
val = tf.keras.utils.image_dataset_from_directory("shapes", image_size=(28, 28), batch_size=8, seed=1,
                                                  validation_split=0.25, subset="validation")
print(train.class_names, train.element_spec)
for images, labels in train.take(1):
    print(images.shape, images.dtype, labels.numpy().tolist(), float(tf.reduce_max(images)))
files = tf.data.Dataset.list_files("shapes/*/*.png", shuffle=False)
print(files.cardinality().numpy(), [os.path.basename(f.numpy().decode()) for f in files.take(2)])


def load(path):
    label = tf.cast(tf.strings.split(path, os.sep)[-2] == "squares", tf.int32)
    img = tf.io.decode_png(tf.io.read_file(path), channels=3)
    return tf.image.convert_image_dtype(img, tf.float32), label


by_hand = files.map(load, num_parallel_calls=tf.data.AUTOTUNE)
img0, lab0 = next(iter(by_hand))
print(img0.shape, img0.dtype, lab0.numpy(), round(float(tf.reduce_sum(img0)), 3))
"""
tf.image ops.
"""
x = img0
print(tf.image.resize(x, (16, 16)).shape, tf.image.resize(x, (16, 16), method="nearest").shape)
print(round(float(tf.reduce_sum(tf.image.resize(x, (16, 16)))), 3))
print(tf.image.central_crop(x, 0.5).shape, tf.image.resize_with_crop_or_pad(x, 40, 20).shape)
print(round(float(tf.reduce_mean(tf.image.adjust_brightness(x, 0.1))), 4),
      round(float(tf.reduce_mean(tf.image.adjust_contrast(x, 2.0))), 4))
print(round(float(tf.math.reduce_std(tf.image.per_image_standardization(x))), 4))
print(np.allclose(tf.image.flip_left_right(x)[:, ::-1], x), tf.image.rot90(x).shape)
print(tf.image.rgb_to_grayscale(x).shape, round(float(tf.reduce_sum(tf.image.rgb_to_grayscale(x))), 3))
print(np.round(tf.image.stateless_random_brightness(x, 0.2, seed=(1, 2))[0, 0].numpy(), 4))
print(tf.image.stateless_random_flip_left_right(x, seed=(3, 4)).shape)
print(tf.image.stateless_random_crop(x, (20, 20, 3), seed=(5, 6)).shape)
print(np.round(tf.image.psnr(x, x * 0.9, max_val=1.0).numpy(), 3), np.round(tf.image.ssim(x, x, 1.0).numpy(), 4))
"""
A small CNN with augmentation layers; fit, evaluate, confusion matrix.
"""
tf.keras.utils.set_random_seed(2)
model = tf.keras.Sequential([
    tf.keras.Input((28, 28, 3)),
    tf.keras.layers.Rescaling(1.0 / 255),
    tf.keras.layers.RandomFlip("horizontal"),
    tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
    tf.keras.layers.BatchNormalization(),
    tf.keras.layers.MaxPooling2D(),
    tf.keras.layers.Conv2D(16, 3, activation="relu"),
    tf.keras.layers.GlobalAveragePooling2D(),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(2),
])
model.summary()
model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
hist = model.fit(train.cache().prefetch(tf.data.AUTOTUNE), validation_data=val, epochs=3, verbose=0)
print(sorted(hist.history), len(hist.history["loss"]))
loss, acc = model.evaluate(val, verbose=0)
print(type(loss).__name__, 0.0 <= acc <= 1.0)
preds = tf.argmax(model.predict(val, verbose=0), axis=1)
truth = tf.concat([y for _, y in val], axis=0)
cm = tf.math.confusion_matrix(truth, preds, num_classes=2)
print(cm.shape, int(tf.reduce_sum(cm)), cm.dtype)
print([l.name for l in model.layers][:4], model.layers[3].moving_mean.shape)
