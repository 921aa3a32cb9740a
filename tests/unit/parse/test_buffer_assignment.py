from tests.conftest import GOLDEN
from xlacli.parse.buffer_assignment import parse_buffer_assignment, summarize_buffers


def _golden():
    folder = GOLDEN / "shape_change" / "xla-dump"
    return next(folder.glob("module_0000.*buffer-assignment.txt")).read_text()


def test_allocations_by_role():
    allocations = parse_buffer_assignment(_golden())
    assert allocations, "no allocation parsed"
    parameters = [a for a in allocations if a.is_parameter]
    assert len(parameters) == 5  # 2 weights, 2 biases, the batch
    # f32[32,16] + f32[32] + f32[4,32] + f32[4] + the f32[4,16] batch
    assert sum(a.size for a in parameters) == 4 * (32 * 16 + 32 + 4 * 32 + 4 + 4 * 16)


def test_summary():
    summary = summarize_buffers(parse_buffer_assignment(_golden()))
    assert summary.input_bytes == 4 * (32 * 16 + 32 + 4 * 32 + 4 + 4 * 16)
    assert summary.output_bytes >= 4 * 4 * 4  # the f32[4,4] result
    assert summary.temp_bytes >= 0


def test_lines_of_other_kinds():
    text = "allocation 3: size 16, constant:\nallocation 4: size 8, thread-local:\nnoise\n"
    allocations = parse_buffer_assignment(text)
    assert [a.size for a in allocations] == [16, 8]
    assert summarize_buffers(allocations).temp_bytes == 8  # constants are not temporaries
