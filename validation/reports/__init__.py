"""Agreement reports: each task kind's paper tables plus the sections every kind gets."""

from validation.reports.base import Cell, Figure, ReportParameters, Row, Table
from validation.reports.build import Report, UnknownJudgeRun, build_report, library_versions, report_builder

__all__ = [
    "Cell",
    "Figure",
    "Report",
    "ReportParameters",
    "Row",
    "Table",
    "UnknownJudgeRun",
    "build_report",
    "library_versions",
    "report_builder",
]
