"""tf.keras.tree against Keras 3.15's (optree) answers, pinned from real Keras."""

import collections
import warnings

import numpy as np
import pytest

import tapeflow as tf

tree = tf.keras.tree
P = collections.namedtuple("P", "x y")


def test_flatten_orders_dict_keys_and_keeps_ordered_dicts():
    assert tree.flatten({"b": 1, "a": [2, (3, None)], "c": P(4, 5)}) == [2, 3, None, 1, 4, 5]
    assert tree.flatten(collections.OrderedDict([("b", 1), ("a", 2)])) == [1, 2]
    assert tree.flatten({1: "a", "b": 2}) == ["a", 2]  # unsortable keys keep their order
    assert tree.flatten(collections.deque([1, [2]])) == [1, 2]
    assert tree.flatten(None) == [None] and tree.flatten(1) == [1]
    assert tree.flatten([]) == [] and tree.flatten({}) == [] and tree.flatten([[]]) == []
    x = tf.constant([1.0, 2.0])
    assert len(tree.flatten(x)) == 1 and tree.flatten(x)[0] is x
    assert tree.flatten("ab") == ["ab"]


def test_flatten_with_path():
    assert tree.flatten_with_path({"b": 1, "a": [2, (3, None)], "c": P(4, 5)}) == [
        (("a", 0), 2), (("a", 1, 0), 3), (("a", 1, 1), None), (("b",), 1), (("c", 0), 4), (("c", 1), 5)]
    assert tree.flatten_with_path(collections.OrderedDict([("b", 1), ("a", [2])])) == [(("b",), 1), (("a", 0), 2)]


def test_is_nested():
    assert [tree.is_nested(v) for v in (42, "ab", None, (), {"a": 1}, np.zeros(2))] == [
        False, False, False, True, True, False]


def test_map_structure_rebuilds_each_container():
    assert tree.map_structure(lambda x: x * 2, {"b": 1, "a": 2}) == {"b": 2, "a": 4}
    assert list(tree.map_structure(lambda x: x * 2, {"b": 1, "a": 2})) == ["b", "a"]
    assert tree.map_structure(lambda x: x * 2, collections.deque([1, [2]])) == collections.deque([2, [4]])
    d = tree.map_structure(lambda x: x * 2, collections.defaultdict(list, b=1, a=2))
    assert type(d) is collections.defaultdict and d == {"b": 2, "a": 4} and d.default_factory is list
    assert tree.map_structure(lambda v: v * 2, P(1, 2)) == P(2, 4)
    assert tree.map_structure(lambda a, b: a * b, [[1], [2], [3]], [[1], [2], [3]]) == [[1], [4], [9]]
    assert tree.map_structure(lambda a: a, [1, None], none_is_leaf=False) == [1, None]
    assert tree.map_structure(lambda a: 0, [1, None]) == [0, 0]
    got = tree.map_structure(lambda a, b: a, {"a": 1, "b": 2}, collections.OrderedDict([("b", 3), ("a", 4)]))
    assert got == {"a": 1, "b": 2} and type(got) is dict


@pytest.mark.parametrize("args, message", [
    (([1, 2], (1, 2)), "Expected an instance of list, got (1, 2)."),
    (([1, 2], [1, 2, 3]), "list arity mismatch; expected: 2, got: 3; list: [1, 2, 3]."),
    (({"a": 1}, {"b": 1}), "dictionary key mismatch; expected key(s): ['a'], got key(s): ['b'], missing key(s): "
                           "['a'], extra key(s): ['b']; dict: {'b': 1}."),
    (([1, [2]], [1, 2]), "Expected an instance of list, got 2."),
    (([1, 2], [1, [2]]), "Structures don't have the same nested structure."),
    ((P(1, 2), (1, 2)), "Expected an instance of collections.namedtuple, got (1, 2)."),
])
def test_map_structure_mismatches(args, message):
    with pytest.raises(ValueError) as e:
        tree.map_structure(lambda a, b: a, *args)
    assert str(e.value) == message
    with pytest.raises(ValueError) as e:
        tree.assert_same_structure(*args)
    assert str(e.value) == message


def test_map_structure_errors():
    with pytest.raises(ValueError, match="Must provide at least one structure"):
        tree.map_structure(lambda a: a)
    other = collections.namedtuple("P", "x y")
    with pytest.raises(ValueError, match="namedtuple type mismatch"):
        tree.map_structure(lambda a, b: a, P(1, 2), other(3, 4))


def test_assert_same_structure_and_paths():
    assert tree.assert_same_structure({"a": 1}, collections.OrderedDict(a=3)) is None
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tree.assert_same_structure([1, 2], [3, 4], check_types=False)
    assert w and issubclass(w[0].category, DeprecationWarning)
    assert tree.assert_same_paths([0, 1], (2, 3)) is None
    with pytest.raises(ValueError) as e:
        tree.assert_same_paths([0, 1], {"a": 2})
    assert str(e.value).startswith("`a` and `b` don't have the same paths.\nPaths in `a` missing in `b`:\n")
    assert str(e.value).endswith("\nPaths in `b` missing in `a`:\n{('a',)}")


def test_pack_sequence_as():
    assert tree.pack_sequence_as({"key3": "", "key1": "", "key2": ""}, ["v1", "v2", "v3"]) == {
        "key3": "v3", "key1": "v1", "key2": "v2"}
    assert tree.pack_sequence_as(1, [5]) == 5
    assert tree.pack_sequence_as(P(1, [2]), [5, 6]) == P(5, [6])
    assert tree.pack_sequence_as([1, [2]], (7, 8)) == [7, [8]]
    with pytest.raises(ValueError, match=r"Too few leaves for PyTreeSpec; expected: 2, got: 1\."):
        tree.pack_sequence_as([1, 2], [1])
    with pytest.raises(ValueError, match=r"Too many leaves for PyTreeSpec; expected: 2\."):
        tree.pack_sequence_as([1, 2], [1, 2, 3])
    with pytest.raises(TypeError):
        tree.pack_sequence_as([1], 7)


def test_traverse_top_down_and_bottom_up():
    seen = []
    assert tree.traverse(seen.append, [(1, 2), [3], {"a": 4}], top_down=True) == [(1, 2), [3], {"a": 4}]
    assert seen == [[(1, 2), [3], {"a": 4}], (1, 2), 1, 2, [3], 3, {"a": 4}, 4]
    seen = []
    assert tree.traverse(seen.append, [(1, 2), [3], {"a": 4}], top_down=False) == [(1, 2), [3], {"a": 4}]
    assert seen == [1, 2, (1, 2), 3, [3], 4, {"a": 4}, [(1, 2), [3], {"a": 4}]]
    assert tree.traverse(lambda x: tree.MAP_TO_NONE if x == 2 else None, [1, 2, [2]]) == [1, None, [None]]
    assert tree.traverse(lambda x: "X" if isinstance(x, tuple) else None, [(1, 2), 3]) == ["X", 3]
    with pytest.raises(TypeError, match="'int' object is not callable"):
        tree.traverse(5, [1])


def test_lists_to_tuples_and_shape_structures():
    assert tree.lists_to_tuples([1, [2, (3, [4])], {"a": [5]}]) == (1, (2, (3, (4,))), {"a": (5,)})
    assert tree.map_shape_structure(lambda s: len(s), [(1, None), {"a": (2,)}, [3, 4]]) == [2, {"a": 1}, 2]


def test_map_structure_up_to():
    assert tree.map_structure_up_to([0, 0], len, [[1, 1], [2, 2]]) == [2, 2]
    assert tree.map_structure_up_to([0, [0, 0]], str, [[1, 1], [2, 2]]) == ["[1, 1]", ["2", "2"]]
    # Keras 3.15: None leaves in the shallow structure raise (its docstring's example does too)
    with pytest.raises(ValueError, match="Structures don't have the same nested structure."):
        tree.map_structure_up_to([None, None], len, [[1, 1], [2, 2]])
    with pytest.raises(ValueError, match="Expected an instance of list, got 2."):
        tree.map_structure_up_to([None, [None, None]], str, [[1, 1], 2])


def test_tracked_containers_are_nodes():
    class M(tf.keras.layers.Layer):
        pass

    m = M()
    m.items = [1, {"b": 2, "a": 3}]
    assert tree.flatten(m.items) == [1, 3, 2]
    out = tree.map_structure(lambda x: x + 1, m.items)
    assert out == [2, {"b": 3, "a": 4}]
