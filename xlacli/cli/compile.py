"""``xlacli compile MODEL``: trace a model on an XLA device and report each graph."""

from __future__ import annotations

from typing import Annotated

import typer

from xlacli import defaults
from xlacli.cli import options


def compile_command(
    ctx: typer.Context,
    model: options.Model = None,
    module: options.Module = None,
    steps: options.CompileSteps = None,
    warmup: options.CompileWarmup = None,
    train: options.Train = None,
    optimizer: options.Optimizer = None,
    out: options.Out = None,
    force: options.Force = False,
    output_format: options.Format = options.OutputFormat.text,
    max_compiles: Annotated[
        int | None,
        typer.Option(
            "--max-compiles",
            min=0,
            metavar="N",
            help="Fail (exit 1) above N compilations.",
            show_default=False,
        ),
    ] = None,
    fail_on_recompile: Annotated[
        bool,
        typer.Option("--fail-on-recompile", help="Fail (exit 1) on any steady-state recompile."),
    ] = False,
    devices: options.Devices = None,
    mode: options.Mode = options.RunMode.lazy,
    html: options.Html = False,
) -> int:
    """Trace MODEL lazily on an XLA device, dump IR and HLO, and report each graph.

    MODEL defines get_model() and get_inputs(step) (see the README), or is a
    training script run as it is, whose own syncs are the steps. The run
    folder keeps, per graph, the IR with source locations, the HLO before and
    after optimization and XLA's buffer assignment. The report opens with its
    verdict: the steady-state recompiles, or none.
    """
    from xlacli.analysis.budgets import check_budgets
    from xlacli.config import load_config, project_runs_dir
    from xlacli.flows.compare import raise_first_error
    from xlacli.flows.session import capture, configured_target
    from xlacli.render.compile_report import render_compile_report

    model, script_args = options.split_script_args(ctx, model, module)
    config = load_config()
    target = configured_target(model, module, script_args, config, "compile")
    devices = devices if devices is not None else config.devices
    steps = steps if steps is not None or target.is_script else defaults.COMPILE.steps
    warmup = defaults.COMPILE.warmup if warmup is None else warmup
    html = html or output_format is options.OutputFormat.html  # --format html: the page too
    train_steps = bool(train)
    optimizer_name = (optimizer or options.OptimizerName.sgd).value
    if mode is options.RunMode.both:
        from xlacli.flows.compare import compare_compile
        from xlacli.flows.modes import check_mode

        check_mode(target, "dynamo")  # before the lazy run, not after it
        results = compare_compile(
            target,
            out=out,
            force=force,
            output_format=output_format.value,
            steps=steps,
            train=train_steps,
            optimizer=optimizer_name,
            explain_warmup=warmup,
            devices=devices,
        )
    else:
        result = capture(
            target,
            steps=steps,
            train=train_steps,
            optimizer=optimizer_name,
            out=out,
            force=force,
            label=f"Compiling {target.module or target.path.name}",
            explain_warmup=warmup,
            devices=devices,
            mode=mode.value,
            runs_dir=project_runs_dir(config),
        )
        render_compile_report(result.report, output_format.value)
        results = [result]
    if html:
        from xlacli.render.html.run_page import announce_run_html

        for result in results:
            announce_run_html(result.paths.root, result.report)
    raise_first_error(results)  # each mode's own error first, then the budgets of each
    for result in results:
        check_budgets(result.report, max_compiles=max_compiles, fail_on_recompile=fail_on_recompile)
    return 0
