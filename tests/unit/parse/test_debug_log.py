from tests.conftest import GOLDEN
from xlacli.parse.debug_log import parse_debug_log
from xlacli.parse.frames import XLACLI_PACKAGE, Frame, without_our_wrappers


def test_compiles_and_executions_in_order():
    events = parse_debug_log((GOLDEN / "host_sync" / "pt-xla-debug.txt").read_text())
    kinds = [e.kind for e in events]
    assert kinds.count("compile") == 4  # = UncachedCompile in metrics.txt
    assert kinds.count("execute") == 6  # = ExecuteComputation
    first = events[0]
    assert first.kind == "compile"
    assert first.cause.startswith("most likely user code trying to access tensor value")
    assert first.graph_hash == "da78d0373e2be16442d176e83585e567"
    assert first.inputs == 3 and first.outputs == 1
    assert first.computation_hash and len(first.computation_hash) == 32
    assert set(first.sizes) >= {"Graph input", "Graph output", "Intermediate tensor"}


def test_frames_reach_the_user_line():
    events = parse_debug_log((GOLDEN / "host_sync" / "pt-xla-debug.txt").read_text())
    frames = events[0].frames
    assert frames[0].function == "forward"
    assert frames[0].file.endswith("tests/assets/models/host_sync.py")
    assert frames[0].line == 14  # the .item() line


def test_every_execution_names_its_graph():
    events = parse_debug_log((GOLDEN / "shape_change" / "pt-xla-debug.txt").read_text())
    executions = [e for e in events if e.kind == "execute"]
    compiles = [e for e in events if e.kind == "compile"]
    assert len(executions) == 4 and len(compiles) == 2
    assert executions[0].graph_hash == executions[1].graph_hash == executions[3].graph_hash
    assert executions[2].graph_hash == compiles[1].graph_hash
    assert all(e.cause == "user torch_xla.sync" for e in events)


def test_unrelated_lines_are_ignored():
    assert parse_debug_log("hello\nComputation hash: abc\n") == []


def test_dynamos_disable_frame_around_our_wrapper_is_dropped():
    """xlacli's `.item()` wrapper runs under `torch._dynamo.disable`: its `_fn`
    frame is no library line the user's read went through (a bare run has none)."""
    ours = Frame("read", XLACLI_PACKAGE + "child/value_reads.py", 77)
    disable = Frame("_fn", "/venv/site-packages/torch/_dynamo/eval_frame.py", 1044)
    user = Frame("_train_update", "/u/train.py", 49)
    assert without_our_wrappers((ours, disable, user)) == (ours, user)
    compiled = (Frame("f", "/u/train.py", 3), disable, user)  # the user's own disable()
    assert without_our_wrappers(compiled) == compiled
