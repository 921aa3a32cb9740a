"""The HLO parser: real torch_xla and JAX dumps, every construct, and malformed input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ASSETS, GOLDEN_FILES

from xlacli.errors import HloParseError, UsageError
from xlacli.hlo import ArrayShape, HloModule, Layout, TupleShape, parse_hlo, parse_hlo_file

_INSTRUCTION_LINE = re.compile(r"^\s*(ROOT\s+)?%?[\w.\-]+ = ", re.MULTILINE)


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.name)
def test_golden_files_parse_with_every_instruction(path: Path) -> None:
    module = parse_hlo_file(path)
    text = path.read_text()
    assert module.instruction_count == len(_INSTRUCTION_LINE.findall(text))
    assert module.opcode_counts()["fusion"] == text.count(" fusion(")
    assert sum(module.opcode_counts().values()) == module.instruction_count
    assert module.entry.is_entry or module.entry is module.computations[-1]
    assert module.entry.root.is_root
    assert module.filename == str(path)


def test_torch_xla_metadata_names_the_op_and_the_source_line() -> None:
    module = parse_hlo_file(ASSETS / "torch_mlp_relu.before_optimizations.txt")
    maximum = next(i for i in module.entry.instructions if i.opcode == "maximum")
    assert maximum.metadata.op_type == "aten__relu"
    assert maximum.metadata.source_file.endswith("torch/nn/functional.py")
    assert maximum.metadata.source_line > 0
    assert (
        maximum.metadata.source == f"{maximum.metadata.source_file}:{maximum.metadata.source_line}"
    )


def test_jax_stack_frame_ids_resolve_through_the_preamble() -> None:
    module = parse_hlo_file(ASSETS / "jax_cnn.after_optimizations.txt")
    assert module.stack_frames is not None
    assert module.stack_frames.file_names[1] == "examples/genjax2.py"
    dot = module.computation("fused_computation").root
    assert dot.name == "dot_general.0"
    # frame 11 -> file location 9 -> examples/genjax2.py line 9
    assert dot.metadata.stack_frame_id == 11
    assert (dot.metadata.source_file, dot.metadata.source_line) == ("examples/genjax2.py", 9)
    assert dot.metadata.resolved
    assert dot.metadata.op_name == "jit(cnn)/transpose(jvp())/dot_general"
    assert module.is_scheduled


def test_jax_text_without_percent_or_signatures() -> None:
    module = parse_hlo_file(ASSETS / "jax_cnn.before_optimizations.txt")
    relu = module.computation("relu.1")
    assert relu.parameters is None
    assert [i.name for i in relu.instructions] == ["Arg_0.1", "constant.6", "max.2", "max.3"]
    assert relu.root.operands == ("Arg_0.1", "max.2")
    assert module.entry.name == "main.14"
    assert not module.is_scheduled


def test_header_attributes_are_typed(features: HloModule) -> None:
    assert features.name == "features.7"
    assert features.is_scheduled
    layout = features.entry_computation_layout
    assert layout is not None
    assert str(layout.parameters[0]) == "f32[8,128]{1,0:T(8,128)}"
    assert str(layout.result) == "(f32[8,128]{1,0}, s32[])"
    assert [
        (a.output_index, a.parameter_number, a.parameter_index, a.kind)
        for a in features.input_output_alias
    ] == [((0,), 0, (), "may-alias"), ((1,), 1, (0,), "must-alias")]
    assert features.attributes["frontend_attributes"] == '{fingerprint_before_lhs="abc"}'


@pytest.mark.parametrize(
    ("name", "printed", "shape"),
    [
        (
            "p0",
            "f32[8,128]{1,0:T(8,128)}",
            ArrayShape("f32", (8, 128), (), Layout((1, 0), "T(8,128)")),
        ),
        ("p2", "f32[<=10,5]{1,0}", ArrayShape("f32", (10, 5), (True, False), Layout((1, 0)))),
        ("p1", "(s32[], token[])", TupleShape((ArrayShape("s32", ()), ArrayShape("token", ())))),
        (
            "many",
            "(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])",
            TupleShape((ArrayShape("f32", ()),) * 6),
        ),
        ("zero", "f32[]", ArrayShape("f32", ())),
    ],
)
def test_shapes_are_typed_and_print_as_xla_does(
    features: HloModule, name: str, printed: str, shape: object
) -> None:
    instruction = next(i for i in features.entry.instructions if i.name == name)
    assert instruction.shape == shape
    assert str(instruction.shape) == printed


def test_unbounded_dynamic_dimension_and_empty_tuple() -> None:
    module = parse_hlo(
        "HloModule m\nENTRY e {\n  ROOT t = () tuple()\n  a = f32[?,3] parameter(0)\n}\n"
    )
    assert str(module.entry.instructions[1].shape) == "f32[?,3]"
    assert module.entry.root.shape == TupleShape(())


def test_attributes_keep_their_text_and_calls_are_typed(features: HloModule) -> None:
    entry = {i.name: i for i in features.entry.instructions}
    assert entry["fusion.1"].fusion_kind == "kLoop"
    assert entry["fusion.1"].called_computations == ("fused_exp",)
    assert entry["fusion.1"].attributes["backend_config"].endswith('{"b":2}]}}')
    assert entry["cc"].attributes["backend_config"] == '"opaque \\"text\\" {"'
    assert entry["loop"].called_computations == ("cond.3", "body.4")
    assert entry["branch"].called_computations == ("true_branch", "false_branch")
    assert entry["reduce.2"].called_computations == ("add_f32",)
    assert entry["sliced"].attributes["slice"] == "{[0:4], [0:128:2]}"
    assert entry["conv"].attributes["dim_labels"] == "b01f_01io->b01f"
    assert entry["conv"].operands == ("img", "kernel")  # inline operand shapes
    assert entry["many"].operands[-1] == "branch"  # after /*index=5*/
    assert entry["init"].attributes["control-predecessors"] == "{%dot.3, %sliced}"
    assert entry["p1"].attributes["sharding"] == "{{replicated}, {maximal device=0}}"
    assert entry["matrix"].literal == "{ {1, 2}, {3, 4} }"
    assert entry["p2"].parameter_number == 2
    assert features.computation("false_branch").attributes == {"execution_thread": '"main"'}


def test_forward_references_and_sharing_of_names(features: HloModule) -> None:
    init = next(i for i in features.entry.instructions if i.name == "init")
    assert init.operands == ("i0", "cc")  # i0 is defined after its use


@pytest.mark.parametrize(
    ("text", "line", "column", "expected"),
    [
        ("", 1, 1, "'HloModule'"),
        # No HloModule line is a headerless module: HloModel is a computation's name.
        ("HloModel m\n", 1, 10, "'{'"),
        ("HloModule m\n", 2, 1, "a computation"),
        ("HloModule m, entry_computation_layout={(f32[2]->f32[2]}\n", 1, 47, "','"),
        ("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n", 2, 9, "'}' to close"),
        ("HloModule m\nENTRY e {\n  a = f32[2 parameter(0)\n}\n", 3, 7, "a shape"),
        ("HloModule m\nENTRY e {\n  a = f33x[2] parameter(0)\n}\n", 3, 7, "an element type"),
        ("HloModule m\nENTRY e {\n  a = f32[2]{1,0} parameter(0)\n}\n", 3, 13, "a layout"),
        ("HloModule m\nENTRY e {\n  a = f32[2] parameter(x)\n}\n", 3, 24, "a parameter number"),
        (
            "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] add(a, c)\n}\n",
            4,
            21,
            "an instruction of computation e",
        ),
        (
            "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  a = f32[2] negate(a)\n}\n",
            4,
            3,
            "a unique instruction name",
        ),
        (
            "HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n"
            "  ROOT b = f32[2] negate(a)\n}\n",
            4,
            3,
            "one ROOT",
        ),
        (
            'HloModule m\nENTRY e {\n  a = f32[2] parameter(0), metadata={op_name="x}\n}\n',
            3,
            49,
            'a closing "',
        ),
        (
            # An open brace reads on, as XLA does, to the end of the file.
            "HloModule m\nENTRY e {\n  a = f32[2] parameter(0), sharding={{replicated}\n}\n",
            2,
            9,
            "'}' to close computation e",
        ),
        ("HloModule m\nENTRY e {\n  a = f32[2] parameter(0), foo\n}\n", 3, 26, "an attribute"),
        (
            "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] negate(a b)\n}\n",
            4,
            23,
            "',' or ')'",
        ),
        (
            "HloModule m\ne (x: f32[]) -> f32[] {\n  ROOT x = f32[] parameter(0)\n}\n"
            "e {\n  ROOT y = f32[] parameter(0)\n}\n",
            5,
            1,
            "a computation name not used before",
        ),
        ("HloModule m\nENTRY e {\n  a = f32[2] constant(%x)\n}\n", 3, 23, "a constant literal"),
        (
            "HloModule m\nENTRY e {\n  a = f32[2] parameter(0), metadata={source_line=x7}\n}\n",
            3,
            37,
            "a whole number for source_line",
        ),
        ("HloModule m\nENTRY e {\n}\n", 3, 1, "an instruction in computation e"),
    ],
)
def test_malformed_input_names_line_column_and_expectation(
    text: str, line: int, column: int, expected: str
) -> None:
    with pytest.raises(HloParseError) as raised:
        parse_hlo(text, "bad.hlo")
    error = raised.value
    assert (error.filename, error.line, error.column) == ("bad.hlo", line, column), error.message
    assert expected in error.expected
    assert error.message.startswith(f"bad.hlo:{line}:{column}: malformed HLO: expected ")


def test_file_errors_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        parse_hlo_file(tmp_path / "missing.txt")
    with pytest.raises(UsageError, match="is a folder"):
        parse_hlo_file(tmp_path)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"HloModule m\nENTRY e {\n  \xff\n}\n")
    with pytest.raises(HloParseError) as raised:
        parse_hlo_file(binary)
    assert (raised.value.line, raised.value.column) == (3, 3)


def test_windows_line_endings_and_comments_are_accepted() -> None:
    text = "// a comment\r\nHloModule m\r\n\r\nENTRY e {\r\n  ROOT a = f32[] parameter(0)\r\n}\r\n"
    assert parse_hlo(text).entry.root.name == "a"


@pytest.mark.parametrize(
    ("text", "line"), [("HloModule m\n\nFileNames", 3), ("HloModule m\n", 2), ("HloModule m", 1)]
)
def test_end_of_file_errors_point_inside_the_file(text: str, line: int) -> None:
    # Found by the fuzz test: a last line without a newline ends the file on that line.
    with pytest.raises(HloParseError) as caught:
        parse_hlo(text, "f.hlo")
    assert (caught.value.line, caught.value.column) == (line, 1)
    assert "expected a computation" in caught.value.message


def test_a_computation_called_but_not_defined_is_accepted() -> None:
    # Test snippets leave fused computations out; a diff tool reads what it is given.
    module = parse_hlo(
        "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n"
        "  ROOT b = f32[2] call(a), to_apply=%g\n}\n"
    )
    assert module.entry.root.called_computations == ("g",)
