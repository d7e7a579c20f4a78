"""Agreement at scale: the full report over 100,000 CoPA items and a 1,000-resample bootstrap.

The parent stores a CoPA project in the database: ``--items`` items, each rated by ``--raters``
annotators on the six factors, with ``--missing`` of the (item, annotator) annotations absent and 2%
of the rest edited once (so the latest version has to be picked). A child process then, timed:

1. builds the full report without bootstrap: ratings from the annotations, every measure on every
   dimension (percent agreement, Cohen's kappas where two raters, Fleiss where complete,
   Krippendorff's alpha), the kind's tables and figure data, and its Markdown, LaTeX and CSV;
2. bootstraps one dimension (CT) with ``--resamples`` resamples over units, every measure again.

The set-up takes the tables' statistics once its rows are stored (as every bulk write of the product
does, ``annotation.table_statistics``). Then the same answers are written to a JSONL file and imported
into a second project of the same items (``bench-agreement-import``) with the ``import_annotations``
command, and the report is built right after it, in the same child: no wait, no manual ANALYZE, as a
researcher who imports past answers and opens the report at once meets it.

    python bench/agreement_scale.py [--items 100000] [--raters 3] [--missing 0.05] [--resamples 1000] [--keep]

The database is whatever DATABASE_URL names (SQLite under var/ when unset). The project's slug is
``bench-agreement``; it is deleted afterwards unless ``--keep`` (a later run with ``--keep`` reuses it
when its size matches). The last line is ``RESULT report_s=<n> bootstrap_s=<n> rss_mb=<n> import_s=<n>
report_after_import_s=<n>``, where rss_mb is the child's peak resident memory (it includes Django and
the libraries).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench.common import peak_rss_mb, setup_django  # noqa: E402 - importable once the repository root is on the path

SLUG = "bench-agreement"
IMPORT_SLUG = "bench-agreement-import"
FACTORS = ("CT", "SA", "SC", "CLM", "MS", "AMR")
BATCH = 5000
EDITED = 0.02  # share of annotations that get a second version
SEED = 20260101


# -- parent: the data ---------------------------------------------------------------------------


def _expected(items: int, raters: int, missing: float) -> str:
    return f"bench:{items}:{raters}:{missing}:{SEED}"


def store_project(items: int, raters: int, missing: float, keep: bool) -> tuple[int, float]:
    """The benchmark project, generated unless a kept one of the same size exists; (annotations, seconds)."""
    import numpy as np
    from django.db import transaction

    from annotation.kinds import get_kind
    from annotation.models import Annotation, Item, Project
    from annotation.services import project_create
    from annotation.table_statistics import statistics_refreshed

    marker = _expected(items, raters, missing)
    existing = Project.objects.filter(slug=SLUG).first()
    if existing is not None and keep and existing.guidelines == marker:
        return Annotation.objects.filter(project=existing).count(), 0.0
    Project.objects.filter(slug=SLUG).delete()
    started = time.perf_counter()
    project = project_create(slug=SLUG, kind="copa_likert", title="Agreement benchmark", overlap=raters)
    Project.objects.filter(pk=project.pk).update(guidelines=marker)
    payload = get_kind("copa_likert").example_payload()
    rng = np.random.default_rng(SEED)
    names = [f"annotator-{r + 1}" for r in range(raters)]
    stored = 0
    with transaction.atomic():
        for start in range(0, items, BATCH):
            size = min(BATCH, items - start)
            created = Item.objects.bulk_create(
                [Item(project=project, external_id=f"r{start + i:07d}", payload=payload) for i in range(size)]
            )
            # Each response has a true fit per factor; annotators agree with it about 70% of the time.
            truth = rng.integers(0, 3, size=(size, len(FACTORS)))
            rows = []
            for name in names:
                agree = rng.random((size, len(FACTORS))) < 0.7
                scores = np.where(agree, truth, rng.integers(0, 3, size=(size, len(FACTORS))))
                present = rng.random(size) >= missing
                edited = rng.random(size) < EDITED
                visible = rng.random(size) < 0.5
                for i, item in enumerate(created):
                    if not present[i]:
                        continue
                    value = {"scores": dict(zip(FACTORS, map(int, scores[i]), strict=True))}
                    rows.append(
                        Annotation(
                            project=project,
                            item=item,
                            rater=name,
                            version=1,
                            value=value,
                            source=Annotation.Source.IMPORT,
                            suggestion_visible=bool(visible[i]),
                        )
                    )
                    if edited[i]:
                        changed = {"scores": {**value["scores"], "CT": int((scores[i, 0] + 1) % 3)}}
                        rows.append(
                            Annotation(project=project, item=item, rater=name, version=2, value=changed, source="web")
                        )
            Annotation.objects.bulk_create(rows, batch_size=BATCH)
            stored += len(rows)
        statistics_refreshed(Item, items)
        statistics_refreshed(Annotation, stored)
    return stored, time.perf_counter() - started


def write_import_files(folder: Path) -> tuple[Path, Path]:
    """The benchmark project's items and answers as files for ``import_items`` and ``import_annotations``
    (each rater's versions in order, so an edit is imported as that rater's second version)."""
    from annotation.models import Annotation, Item, Project

    project = Project.objects.get(slug=SLUG)
    items_path, answers_path = folder / "items.jsonl", folder / "answers.jsonl"
    with items_path.open("w", encoding="utf-8") as out:
        for external_id, payload in Item.objects.filter(project=project).values_list("external_id", "payload"):
            out.write(json.dumps({"external_id": external_id, **payload}) + "\n")
    rows = Annotation.objects.filter(project=project).order_by("item_id", "rater", "version")
    with answers_path.open("w", encoding="utf-8") as out:
        for external_id, rater, value, visible in rows.values_list(
            "item__external_id", "rater", "value", "suggestion_visible"
        ).iterator(chunk_size=BATCH):
            line = {"rater": rater, "external_id": external_id, "value": value}
            if visible is not None:
                line["suggestion_visible"] = visible
            out.write(json.dumps(line) + "\n")
    return items_path, answers_path


def store_import_project(items_path: Path, raters: int) -> None:
    """A second project with the same items (imported from their file), no answers yet."""
    from annotation.importing import import_items
    from annotation.models import Project
    from annotation.services import project_create

    Project.objects.filter(slug=IMPORT_SLUG).delete()
    project = project_create(slug=IMPORT_SLUG, kind="copa_likert", title="Agreement import benchmark", overlap=raters)
    import_items(project=project, path=items_path)


# -- child: the timed work -----------------------------------------------------------------------


def child_after_import(answers_path: str) -> dict:
    """Import the answers with the command, then build the report at once; both timed."""
    setup_django()
    from django.core.management import call_command

    from annotation.models import Project
    from validation.reports import ReportParameters, build_report

    with open(os.devnull, "w") as quiet:
        started = time.perf_counter()
        call_command("import_annotations", IMPORT_SLUG, answers_path, stdout=quiet, stderr=quiet)
        import_s = time.perf_counter() - started
    started = time.perf_counter()
    report = build_report(project=Project.objects.get(slug=IMPORT_SLUG), parameters=ReportParameters(bootstrap=0))
    return {"import_s": import_s, "report_s": time.perf_counter() - started, "units": report.n_units}


def child(resamples: int) -> dict:
    setup_django()
    from annotation.models import Project
    from validation.agreement import DimensionInput, joint_agreement
    from validation.ratings import project_ratings
    from validation.reports import ReportParameters, build_report
    from validation.services import render_report

    project = Project.objects.get(slug=SLUG)
    startup_mb = peak_rss_mb()

    started = time.perf_counter()
    report = build_report(project=project, parameters=ReportParameters(bootstrap=0))
    texts = [render_report(report, fmt) for fmt in ("md", "latex", "csv")]
    report_s = time.perf_counter() - started

    ratings = project_ratings(project=project)
    dimension = project.task_kind.rating_dimensions[0]
    started = time.perf_counter()
    result = joint_agreement(
        {
            dimension.name: DimensionInput(
                ratings=ratings.matrix(dimension.name),
                level=dimension.level,
                categories=dimension.categories,
            )
        },
        raters=ratings.raters,
        bootstrap=resamples,
        seed=0,
    )
    bootstrap_s = time.perf_counter() - started

    ct = result.dimensions[dimension.name]
    return {
        "report_s": report_s,
        "bootstrap_s": bootstrap_s,
        "startup_mb": startup_mb,
        "peak_mb": peak_rss_mb(),
        "units": report.n_units,
        "raters": len(report.human_raters),
        "ratings": sum(d.n_ratings for d in report.agreement.dimensions.values()),
        "alpha_ct": ct.krippendorff_alpha.statistic,
        "alpha_ct_ci": list(ct.krippendorff_alpha.confidence_interval or ()),
        "percent_ct": ct.percent_agreement.statistic,
        "text_bytes": sum(len(t) for t in texts),
    }


# -- parent: report --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--raters", type=int, default=3)
    parser.add_argument("--missing", type=float, default=0.05)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--keep", action="store_true", help="keep the project (and reuse a kept one)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-import", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.resamples)))
        return
    if args.child_import:
        print(json.dumps(child_after_import(args.child_import)))
        return

    setup_django()
    from django.core.management import call_command
    from django.db import connection

    from annotation.models import Project

    call_command("migrate", verbosity=0)
    print(
        f"database: {connection.vendor}; {args.items} items x {args.raters} raters x 6 factors, "
        f"{args.missing:.0%} of annotations missing, {EDITED:.0%} edited once"
    )
    annotations, setup_s = store_project(args.items, args.raters, args.missing, args.keep)
    print(f"stored {annotations} annotation rows in {setup_s:.1f} s (setup, not timed below)")
    command = [sys.executable, __file__, "--child", "--resamples", str(args.resamples)]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=False)
    with tempfile.TemporaryDirectory(prefix="concord-bench-") as tmp:
        items_path, answers_path = write_import_files(Path(tmp))
        store_import_project(items_path, args.raters)
        command = [sys.executable, __file__, "--child-import", str(answers_path)]
        imported = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(), check=False)
    Project.objects.filter(slug=IMPORT_SLUG).delete()
    if not args.keep:
        Project.objects.filter(slug=SLUG).delete()
    for child_run in (done, imported):
        if child_run.returncode != 0:
            sys.stderr.write(child_run.stderr)
            raise SystemExit(f"a timed child failed (exit {child_run.returncode})")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    after = json.loads(imported.stdout.strip().splitlines()[-1])
    print(f"{'step':<52}{'seconds':>9}")
    print(f"{'full report, all measures, no bootstrap (+ md/tex/csv)':<52}{figures['report_s']:>9.2f}")
    print(f"{f'bootstrap, {args.resamples} resamples, one dimension (CT)':<52}{figures['bootstrap_s']:>9.2f}")
    print(
        f"units {figures['units']}, raters {figures['raters']}, ratings {figures['ratings']}; "
        f"CT: alpha {figures['alpha_ct']:.4f} {figures['alpha_ct_ci']}, agreement {figures['percent_ct']:.4f}"
    )
    print(f"memory: {figures['startup_mb']:.0f} MB after start-up, {figures['peak_mb']:.0f} MB peak")
    print(f"{'import_annotations command, the same answers':<52}{after['import_s']:>9.2f}")
    print(f"{'full report right after that import (no wait)':<52}{after['report_s']:>9.2f}")
    print(f"units after the import {after['units']}; load average {os.getloadavg()[0]:.1f}")
    print("targets: report <= 10 s (both), bootstrap <= 30 s")
    print(
        f"RESULT report_s={figures['report_s']:.2f} bootstrap_s={figures['bootstrap_s']:.2f} "
        f"rss_mb={figures['peak_mb']:.0f} import_s={after['import_s']:.2f} "
        f"report_after_import_s={after['report_s']:.2f}"
    )


if __name__ == "__main__":
    main()
