"""Studies at scale: an FMU over a grid, a list or random samples of start values, on Dask.

    from fmu_mb.sweep import load_study, run_study
    table, executed = run_study(load_study("studies/manipulator_variants.toml"), "results/variants")

``fmu-mb sweep STUDY.toml`` is the same from the command line. See fmu_mb.sweep.spec for the study
file, fmu_mb.sweep.study for the results' layout and the scheduling.
"""
from .spec import STATS, Study, StudyError, load_study, study_from_dict
from .study import run_study, summary_plot

__all__ = ["STATS", "Study", "StudyError", "load_study", "run_study", "study_from_dict", "summary_plot"]
