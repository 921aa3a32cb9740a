"""Per-site steady state and phases (analysis/recompiles/phases.py) on hand-built compiles."""

from __future__ import annotations

from xlacli.analysis.recompiles.phases import (
    AFTER_LOOP,
    LOOP,
    NEW_PHASE,
    PERIODIC,
    SETUP,
    LoopProgress,
    SiteCompile,
    TimelineEdges,
    Verdict,
    alternates,
    count_before,
    judge,
    loop_iterations,
    loop_step_count,
    site_runs_before,
    timeline_edges,
)
from xlacli.parse.frames import Frame
from xlacli.run_folder.step_events import StepEvent, step_event

TRAIN = (Frame("main", "/u/train.py", 46),)
EVAL = (Frame("main", "/u/train.py", 53),)
READ = (Frame("main", "/u/train.py", 55),)
WRAP = (Frame("mark_step", "/lib/fsdp.py", 9), Frame("main", "/u/train.py", 30))


def at(site, step, runs, category="graph_structure", phase=LOOP, iteration=None, periodic=False):
    iteration = step if iteration is None and phase == LOOP else iteration
    return SiteCompile(site, step, phase, iteration, runs, category, periodic)


def test_train_then_evaluate_has_no_steady_state_recompile():
    verdicts = judge(
        [
            at(TRAIN, 0, 0, "first_compile"),
            at(TRAIN, 1, 1, "optimizer_state"),
            at(EVAL, 6, 0, "first_compile"),  # the evaluation loop's first graph
            at(EVAL, 7, 1),  # its second: the evaluation's own warm-up
            at(READ, None, 0, "host_sync", phase=AFTER_LOOP),  # the final accuracy read
        ],
        warmup=2,
    )
    assert verdicts == [
        Verdict(LOOP, False),
        Verdict(LOOP, False),
        Verdict(NEW_PHASE, False),
        Verdict(NEW_PHASE, False),
        Verdict(AFTER_LOOP, False),
    ]


def test_a_warm_site_that_compiles_again_is_steady_in_every_phase():
    verdicts = judge(
        [
            at(TRAIN, 0, 0, "first_compile"),
            at(TRAIN, 5, 5, "input_shape"),  # the training loop's short last batch
            at(EVAL, 6, 0, "first_compile"),
            at(EVAL, 9, 3, "input_shape"),  # the evaluation loop's short last batch
        ],
        warmup=2,
    )
    assert [v.steady_state for v in verdicts] == [False, True, False, True]
    assert [v.phase for v in verdicts] == [LOOP, LOOP, NEW_PHASE, NEW_PHASE]


def test_setup_syncs_never_recompile_and_do_not_use_up_the_warm_up():
    verdicts = judge(
        [at(WRAP, step, step, "input_shape", phase=SETUP) for step in range(4)]
        + [at(TRAIN, 4, 0, "first_compile", iteration=0), at(TRAIN, 5, 1, iteration=1)],
        warmup=2,
    )
    assert [v.phase for v in verdicts] == [SETUP] * 4 + [LOOP, LOOP]
    assert not any(v.steady_state for v in verdicts)


def test_a_read_that_cuts_a_warm_graph_is_part_of_its_recompile():
    verdicts = judge(
        [
            at(TRAIN, 0, 0, "first_compile"),
            at(READ, 3, 0, "host_sync"),
            at(TRAIN, 3, 3, "graph_structure"),
        ],
        warmup=2,
    )
    assert verdicts[1:] == [Verdict(LOOP, True), Verdict(LOOP, True)]


def test_expected_categories_are_never_steady():
    (_, verdict) = judge([at(TRAIN, 0, 0), at(TRAIN, 4, 4, "optimizer_state")], warmup=2)
    assert not verdict.steady_state


def test_site_runs_and_loop_iterations():
    runs = site_runs_before([(TRAIN, 0), (TRAIN, 0), (TRAIN, 1), (EVAL, 3), (READ, None)])
    assert runs == {TRAIN: [0, 1], EVAL: [3]}
    assert [count_before(runs[TRAIN], step) for step in (0, 1, 2, None)] == [0, 1, 2, 2]
    phases = [(0, SETUP), (1, SETUP), (2, LOOP), (3, LOOP)]
    assert loop_iterations(phases) == {2: 0, 3: 1}


def test_a_model_files_late_value_read_is_a_change_not_a_new_phase():
    compiles = [at(TRAIN, 0, 0, "first_compile"), at(READ, 3, 0, "host_sync")]
    assert judge(compiles, warmup=2, new_phases=False)[1] == Verdict(LOOP, True)
    assert judge(compiles, warmup=2)[1] == Verdict(NEW_PHASE, False)  # a script's


def test_a_graph_that_alternates_with_its_sites_first_and_recurs_is_periodic():
    """A logging op every 2 steps folded into the next batch's graph (Trainer):
    A A L A L A... The variant ran again after the base did, from the cache."""

    def site(*graphs: str) -> list[tuple[int, str]]:
        return list(enumerate(graphs))

    assert alternates(3, "L", site("A", "A", "A", "L", "A", "L", "A"))
    assert alternates(3, "L", site("X", "X", "B", "L", "B", "L"))  # B compiled at another site
    assert not alternates(3, "L", site("A", "A", "A", "L", "A"))  # not seen to recur
    assert not alternates(3, "L", site("A", "A", "A", "L", "L", "L"))  # replaced A for good
    assert not alternates(None, "L", site("A", "L", "A", "L"))
    verdicts = judge(
        [
            at(TRAIN, 0, 0, "first_compile"),
            at(READ, 2, 0, "host_sync"),  # the logging read that cut the step
            at(TRAIN, 2, 2, periodic=True),
        ],
        warmup=2,
    )
    assert verdicts == [Verdict(LOOP, False), Verdict(PERIODIC, False), Verdict(PERIODIC, False)]


def test_a_periodic_change_of_shapes_or_values_is_still_a_recompile():
    for category in ("input_shape", "constant_value", "intermediate_shape", "sharding"):
        compiles = [at(TRAIN, 0, 0, "first_compile"), at(TRAIN, 5, 5, category, periodic=True)]
        assert judge(compiles, warmup=2)[1] == Verdict(LOOP, True), category
    model_file = [at(TRAIN, 0, 0, "first_compile"), at(TRAIN, 3, 3, periodic=True)]
    assert judge(model_file, warmup=2, new_phases=False)[1] == Verdict(PERIODIC, False)
    assert judge([model_file[0], at(TRAIN, 3, 3)], warmup=2)[1] == Verdict(LOOP, True)


def test_the_timeline_edges_are_the_loops_after_setup_syncs():
    assert timeline_edges([LOOP] * 5, warmup=2) == TimelineEdges(loop_start=None, warm=2)
    phases = [SETUP] * 3 + [LOOP] * 4
    assert timeline_edges(phases, warmup=2) == TimelineEdges(loop_start=3, warm=5)
    assert timeline_edges([SETUP, LOOP, LOOP], warmup=2) == TimelineEdges(loop_start=1, warm=None)
    assert timeline_edges([LOOP, LOOP], warmup=0) == TimelineEdges(loop_start=None, warm=None)
    assert loop_step_count(phases) == 4


def test_the_progress_counts_loop_iterations_once_the_loop_is_found():
    steps = [{"step": n} for n in range(4)]
    assert LoopProgress().read(_typed(steps)) == 4  # no loop found yet: every sync
    steps += [{"step": 4, "loop_start": 3}, {"step": 5, "loop_start": 3}]
    assert LoopProgress().read(_typed(steps)) == 3


def test_a_site_first_seen_in_the_setup_starts_afresh_in_the_loop():
    """A loader's first batch flushed the setup at its `next`; its later batches
    (the loop) sync at the same line: their first compile is the loop's."""
    loader = (Frame("next", "/lib/parallel_loader.py", 46), Frame("main", "/u/train.py", 40))
    verdicts = judge(
        [at(loader, 0, 0, "first_compile", phase=SETUP), at(loader, 1, 1, iteration=0)],
        warmup=2,
    )
    assert verdicts == [Verdict(SETUP, False), Verdict(LOOP, False)]


def test_the_progress_reads_only_the_events_added_since_it_last_read():
    progress = LoopProgress()
    steps = [{"step": n, "counters": {"UncachedCompile": int(n < 2)}} for n in range(4)]
    assert progress.read(_typed(steps)) == 4 and progress.compiles == 2
    steps += [{"step": 4, "loop_start": 3}, {"step": 5, "loop_start": 3}]
    assert progress.read(_typed(steps)) == 3 == LoopProgress().read(_typed(steps))
    steps.append({"step": 6, "counters": {"UncachedCompile": 1}})
    assert progress.read(_typed(steps)) == 4 and progress.compiles == 3 and progress.read_steps == 7


def _typed(steps: list[dict]) -> list[StepEvent]:
    return [step_event(s) for s in steps]
