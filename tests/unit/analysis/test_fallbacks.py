from xlacli.analysis.fallbacks import locate_fallbacks

SOURCES = {"m.py:10": "if loss > 1:", "m.py:20": "idx = torch.nonzero(mask)"}


def test_one_candidate_line_per_op():
    ops = locate_fallbacks(
        {0: {"aten::_local_scalar_dense": 1}, 1: {"aten::_local_scalar_dense": 1}},
        [(0, "m.py:10"), (1, "m.py:10")],
        SOURCES.get,
    )
    assert [(op.op, op.count, op.location) for op in ops] == [
        ("aten::_local_scalar_dense", 2, "m.py:10")
    ]


def test_several_lines_pick_the_one_naming_the_op():
    ops = locate_fallbacks(
        {0: {"aten::nonzero": 1, "aten::_local_scalar_dense": 1}},
        [(0, "m.py:10"), (0, "m.py:20")],
        SOURCES.get,
    )
    assert {op.op: op.location for op in ops}["aten::nonzero"] == "m.py:20"


def test_no_value_read_no_location():
    (op,) = locate_fallbacks({None: {"aten::median": 3}}, [], SOURCES.get)
    assert (op.count, op.location) == (3, None)
