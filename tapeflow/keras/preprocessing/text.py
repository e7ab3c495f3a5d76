"""``tf.keras.preprocessing.text``: the Keras 1 text helpers that ``tf.keras`` (Keras 3.15's ``keras._tf_keras``)
still carries — ``Tokenizer``, ``text_to_word_sequence``, ``one_hot``, ``hashing_trick``, ``tokenizer_from_json`` —
with their word orders, indices, matrices and JSON as Keras writes them. (New code uses the ``TextVectorization``
layer.)"""

from __future__ import annotations

import collections
import hashlib
import json
import warnings
from typing import Any

import numpy as np

__all__ = ["Tokenizer", "hashing_trick", "one_hot", "text_to_word_sequence", "tokenizer_from_json"]

FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text: str, filters: str = FILTERS, lower: bool = True, split: str = " ") -> list:
    """The words of ``input_text``: lower-cased, each character of ``filters`` made a separator, split on
    ``split``, empty pieces dropped."""
    if lower:
        input_text = input_text.lower()
    words = input_text.translate(str.maketrans({c: split for c in filters})).split(split)
    return [w for w in words if w]


def hashing_trick(text: str, n: int, hash_function: Any = None, filters: str = FILTERS, lower: bool = True,
                  split: str = " ", analyzer: Any = None) -> list:
    """Each word of ``text`` as ``hash_function(word) % (n - 1) + 1`` (Python's ``hash``, salted per process,
    by default; ``"md5"`` for a stable one)."""
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        def hash_function(word: str) -> int:
            return int(hashlib.md5(word.encode()).hexdigest(), 16)
    words = analyzer(text) if analyzer is not None else text_to_word_sequence(text, filters, lower, split)
    return [hash_function(w) % (n - 1) + 1 for w in words]


def one_hot(input_text: str, n: int, filters: str = FILTERS, lower: bool = True, split: str = " ",
            analyzer: Any = None) -> list:
    """``hashing_trick`` with Python's ``hash`` (word indices in [1, n))."""
    return hashing_trick(input_text, n, hash_function=hash, filters=filters, lower=lower, split=split,
                         analyzer=analyzer)


class Tokenizer:
    """A word (or character) vocabulary fitted on texts: ``word_index`` numbers the words from 1 by decreasing
    count (ties in first-seen order; ``oov_token`` takes 1), ``texts_to_sequences`` keeps the words below
    ``num_words``, ``texts_to_matrix`` counts them ("binary", "count", "freq", "tfidf")."""

    def __init__(self, num_words: int | None = None, filters: str = FILTERS, lower: bool = True, split: str = " ",
                 char_level: bool = False, oov_token: str | None = None, analyzer: Any = None, **kwargs: Any) -> None:
        if "nb_words" in kwargs:
            warnings.warn("The `nb_words` argument in `Tokenizer` has been renamed `num_words`.", stacklevel=2)
            num_words = kwargs.pop("nb_words")
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError(f"Unrecognized keyword arguments: {str(kwargs)}")
        self.word_counts: collections.OrderedDict = collections.OrderedDict()
        self.word_docs: collections.defaultdict = collections.defaultdict(int)
        self.filters, self.split, self.lower = filters, split, lower
        self.num_words, self.document_count = num_words, document_count
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.index_docs: collections.defaultdict = collections.defaultdict(int)
        self.word_index: dict = {}
        self.index_word: dict = {}

    def _tokens(self, text: Any) -> Any:
        if self.char_level or isinstance(text, list):  # a string's characters, or a list of given tokens
            if self.lower:
                text = [w.lower() for w in text] if isinstance(text, list) else text.lower()
            return text
        if self.analyzer is not None:
            return self.analyzer(text)
        return text_to_word_sequence(text, filters=self.filters, lower=self.lower, split=self.split)

    def fit_on_texts(self, texts: Any) -> None:
        for text in texts:
            self.document_count += 1
            seq = self._tokens(text)
            for w in seq:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(seq):
                self.word_docs[w] += 1
        by_count = sorted(self.word_counts.items(), key=lambda wc: wc[1], reverse=True)  # stable: ties keep order
        vocab = ([] if self.oov_token is None else [self.oov_token]) + [w for w, _ in by_count]
        self.word_index = {w: i for i, w in enumerate(vocab, start=1)}  # 0 is never a word
        self.index_word = {i: w for w, i in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences: Any) -> None:
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def texts_to_sequences(self, texts: Any) -> list:
        return list(self.texts_to_sequences_generator(texts))

    def texts_to_sequences_generator(self, texts: Any):
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            out = []
            for w in self._tokens(text):
                i = self.word_index.get(w)
                if i is None:  # an unknown word
                    if self.oov_token is not None:
                        out.append(oov)
                elif self.num_words and i >= self.num_words:  # a word past num_words
                    if oov is not None:
                        out.append(oov)
                else:
                    out.append(i)
            yield out

    def sequences_to_texts(self, sequences: Any) -> list:
        return list(self.sequences_to_texts_generator(sequences))

    def sequences_to_texts_generator(self, sequences: Any):
        oov = self.word_index.get(self.oov_token)
        for seq in sequences:
            out = []
            for i in seq:
                word = self.index_word.get(i)
                if word is None:
                    if self.oov_token is not None:
                        out.append(self.index_word[oov])
                elif self.num_words and i >= self.num_words:
                    if oov is not None:
                        out.append(self.index_word[oov])
                else:
                    out.append(word)
            yield " ".join(out)

    def texts_to_matrix(self, texts: Any, mode: str = "binary") -> np.ndarray:
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences: Any, mode: str = "binary") -> np.ndarray:
        if self.num_words:
            width = self.num_words
        elif self.word_index:
            width = len(self.word_index) + 1
        else:
            raise ValueError("Specify a dimension (`num_words` argument), or fit on some text data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Fit the Tokenizer on some data before using tfidf mode.")
        x = np.zeros((len(sequences), width))
        for row, seq in enumerate(sequences):
            if not seq:
                continue
            counts = collections.Counter(j for j in seq if j < width)
            for j, c in counts.items():
                if mode == "count":
                    x[row][j] = c
                elif mode == "freq":
                    x[row][j] = c / len(seq)
                elif mode == "binary":
                    x[row][j] = 1
                elif mode == "tfidf":
                    x[row][j] = (1 + np.log(c)) * np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                else:
                    raise ValueError("Unknown vectorization mode:", mode)
        return x

    def get_config(self) -> dict:
        return {
            "num_words": self.num_words, "filters": self.filters, "lower": self.lower, "split": self.split,
            "char_level": self.char_level, "oov_token": self.oov_token, "document_count": self.document_count,
            "word_counts": json.dumps(self.word_counts), "word_docs": json.dumps(self.word_docs),
            "index_docs": json.dumps(self.index_docs), "index_word": json.dumps(self.index_word),
            "word_index": json.dumps(self.word_index),
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()}, **kwargs)


def tokenizer_from_json(json_string: str) -> Tokenizer:
    """The ``Tokenizer`` a ``Tokenizer.to_json()`` string describes."""
    config = json.loads(json_string).get("config")
    tables = {k: json.loads(config.pop(k)) for k in ("word_counts", "word_docs", "index_docs", "index_word",
                                                     "word_index")}
    tokenizer = Tokenizer(**config)
    tokenizer.word_counts, tokenizer.word_docs = tables["word_counts"], tables["word_docs"]
    tokenizer.index_docs = {int(k): v for k, v in tables["index_docs"].items()}  # JSON made the ints strings
    tokenizer.index_word = {int(k): v for k, v in tables["index_word"].items()}
    tokenizer.word_index = tables["word_index"]
    return tokenizer
