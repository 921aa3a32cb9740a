"""stdout never ends a line with spaces (issue 20, item 12)."""

from __future__ import annotations

import io

from xlacli.render.console import TrimmedLines


def test_trailing_spaces_go_styles_stay_and_a_line_may_span_writes():
    out = io.StringIO()
    stream = TrimmedLines(out)
    stream.write("graph  site   \n\x1b[1mstep 3  \x1b[0m\npartial ")
    assert out.getvalue() == "graph  site\n\x1b[1mstep 3\x1b[0m\n"
    stream.write(" line  \n")
    stream.write("last  ")
    stream.flush()
    assert out.getvalue().endswith("partial  line\nlast")
