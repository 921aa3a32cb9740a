"""The assembler runs its processors in order and survives one that raises."""

from __future__ import annotations

from typing import Any

from xlacli.assemble.pipeline import run_processors
from xlacli.assemble.processors import PROCESSORS, Processor


def _raise(run: Any, done: Any) -> Any:
    raise ValueError("tuple.index(x): x not in tuple")


def test_a_failing_processor_costs_its_own_section_only() -> None:
    seen: list[dict[str, Any]] = []

    def first(run: Any, done: Any) -> str:
        return "first section"

    def last(run: Any, done: Any) -> str:
        seen.append(dict(done))
        return "last section"

    processors = (
        Processor("first", first, str),
        Processor("broken", _raise, tuple),
        Processor("last", last, str),
    )
    sections, problems = run_processors(object(), processors)  # type: ignore[arg-type]
    assert sections == {"first": "first section", "broken": (), "last": "last section"}
    # A later processor reads the earlier sections, the failed one as its empty section.
    assert seen == [{"first": "first section", "broken": ()}]
    assert len(problems) == 1
    problem = problems[0]
    assert (problem.processor, problem.exception) == ("broken", "ValueError")
    assert problem.message == "tuple.index(x): x not in tuple"
    assert problem.where.endswith(f"test_pipeline.py:{_raise.__code__.co_firstlineno + 1}")


def test_a_processor_cannot_change_what_earlier_ones_wrote() -> None:
    def meddle(run: Any, done: Any) -> str:
        done["first"] = "changed"
        return "meddled"

    processors = (Processor("first", lambda r, d: "kept", str), Processor("m", meddle, str))
    sections, problems = run_processors(object(), processors)  # type: ignore[arg-type]
    assert sections["first"] == "kept" and not problems


def test_processors_are_declared_once_with_distinct_sections() -> None:
    names = [processor.section for processor in PROCESSORS]
    assert len(names) == len(set(names))
    assert names.index("dynamo") < names.index("events")  # events read Dynamo's causes
