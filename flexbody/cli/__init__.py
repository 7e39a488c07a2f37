"""The ``flexbody`` command: ``run | new | info | view | export | sweep | bench`` on case files, with
Dask sweeps and the benchmark runner.

May import: anything in flexbody.
"""

from .app import main, new_case
from .bench import benchmark_scripts
from .cases import case_parameters, format_parameters, load_case, parameter_table, parse_grid, parse_overrides
from .info import describe_case
from .sweep import flatten_summary, run_variant, sweep

__all__ = [
    "main",
    "new_case",
    "load_case",
    "case_parameters",
    "parameter_table",
    "format_parameters",
    "parse_overrides",
    "parse_grid",
    "describe_case",
    "flatten_summary",
    "run_variant",
    "sweep",
    "benchmark_scripts",
]
