"""The assembler runs its processors in order and survives one that raises."""

from __future__ import annotations

import os
from typing import Any

import pytest

from xlacli.assemble.beside import can_run_beside
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
        Processor("last", last, str, reads=("first", "broken")),
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

    processors = (
        Processor("first", lambda r, d: "kept", str),
        Processor("m", meddle, str, reads=("first",)),
    )
    sections, problems = run_processors(object(), processors)  # type: ignore[arg-type]
    assert sections["first"] == "kept" and not problems


def test_processors_are_declared_once_with_distinct_sections() -> None:
    names = [processor.section for processor in PROCESSORS]
    assert len(names) == len(set(names))
    assert names.index("dynamo") < names.index("events")  # events read Dynamo's causes


def test_each_processor_reads_sections_declared_before_it_and_none_beside() -> None:
    """What ``beside`` promises: a processor run in the second process reads no
    section and none reads its own (the two processes share nothing)."""
    declared: list[str] = []
    aside = {processor.section for processor in PROCESSORS if processor.beside}
    for processor in PROCESSORS:
        assert set(processor.reads) <= set(declared), processor.section
        assert not set(processor.reads) & aside, processor.section
        assert not (processor.beside and processor.reads), processor.section
        declared.append(processor.section)
    assert aside  # the split exists


def _pid(run: Any, done: Any) -> int:
    return os.getpid()


def _pickles_badly(run: Any, done: Any) -> Any:
    return lambda: None  # a section that cannot cross to this process


_THIS_PROCESS = os.getpid()


def _dies_beside(run: Any, done: Any) -> str:
    if os.getpid() != _THIS_PROCESS:
        os._exit(3)  # the second process, killed outright
    return "done here"


@pytest.mark.skipif(not can_run_beside(), reason="no fork or one core")
def test_processors_beside_run_in_a_second_process_and_land_in_order() -> None:
    processors = (
        Processor("here", _pid, int),
        Processor("beside", _pid, int, beside=True),
        Processor("broken beside", _raise, tuple, beside=True),
        Processor("reads here", lambda run, done: dict(done), dict, reads=("here",)),
    )
    sections, problems = run_processors(object(), processors, beside=True)  # type: ignore[arg-type]
    assert list(sections) == ["here", "beside", "broken beside", "reads here"]
    assert sections["here"] == os.getpid() != sections["beside"]
    assert sections["broken beside"] == () and sections["reads here"] == {"here": os.getpid()}
    assert [(p.processor, p.exception) for p in problems] == [("broken beside", "ValueError")]
    assert problems[0].where.endswith(f"test_pipeline.py:{_raise.__code__.co_firstlineno + 1}")
    serial, serial_problems = run_processors(object(), processors, beside=False)  # type: ignore[arg-type]
    assert serial["beside"] == os.getpid() and serial_problems == problems


@pytest.mark.skipif(not can_run_beside(), reason="no fork or one core")
@pytest.mark.parametrize("failure", [_pickles_badly, _dies_beside])
def test_a_second_process_that_fails_costs_time_only(failure: Any) -> None:
    processors = (
        Processor("beside", _pid, int, beside=True),
        Processor("failing beside", failure, str, beside=True),
    )
    sections, problems = run_processors(object(), processors, beside=True)  # type: ignore[arg-type]
    assert sections["beside"] == os.getpid() and not problems  # both done here after all
    assert sections["failing beside"] == "done here" or callable(sections["failing beside"])
