"""The recompile block: the user's line, the library line, also, grouped patterns."""

import io

from rich.console import Console

from xlacli.render.recompiles import event_block, group_block, grouped
from xlacli.report.run import CompileCause, CompileEvent


def text(renderable) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=160, color_system=None, force_terminal=False).print(renderable)
    return buffer.getvalue()


def event(step, category, location="/nowhere/train.py:36", **cause) -> CompileEvent:
    return CompileEvent(
        step=step,
        graph_hash=f"h{step}-{category}",
        compile_time_s=0.5,
        steady_state=True,
        cause=CompileCause(
            category, location, cause.pop("library", None), cause.pop("detail", "d"), **cause
        ),
    )


def test_block_shows_the_library_line_inside_and_the_other_reading():
    also = CompileCause("graph_structure", "/nowhere/train.py:42", None, "1 op added: aten::tanh")
    shown = text(
        event_block(
            event(
                3,
                "data_dependent_shape",
                library="/nowhere/lib/sgd.py:375",
                hint="fix it",
                also=(also,),
            )
        )
    )
    assert "step 3  data_dependent_shape  /nowhere/train.py:36" in shown
    assert "(inside /nowhere/lib/sgd.py:375)" in shown
    assert "fix: fix it" in shown
    assert "also: graph_structure at /nowhere/train.py:42: 1 op added: aten::tanh" in shown


def test_an_unsynced_loop_is_one_block_told_by_its_last_compile():
    loop = [event(0, "unsynced_loop", detail=f"{n} reads") for n in (2, 3, 4)]
    groups = grouped([event(0, "host_sync"), *loop, event(0, "first_compile")])
    assert [len(group) for group in groups] == [1, 3, 1]
    shown = text(group_block(groups[1]))
    assert "unsynced_loop ×3" in shown and "4 reads" in shown and "+1.50 s compile" in shown
