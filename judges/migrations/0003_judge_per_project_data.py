# Step 2 of 3: every judge moves to the project its runs belong to, and its endpoint gets a name.
#
# A judge used on several projects becomes one judge per project (the runs and suggestions of each
# project follow their copy). A judge never run belongs to no project and carries no results: it is
# removed. An openai judge on the default server (no URL of its own, or OPENAI_BASE_URL) uses the
# `default` endpoint; one with any other URL is named `legacy`, which no configuration defines, so
# it cannot send anything until a researcher creates a judge on a configured endpoint.
import os

from django.db import migrations

LEGACY_ENDPOINT = "legacy"


def endpoint_name(judge) -> str:
    if judge.backend != "openai":
        return ""
    if not judge.base_url or judge.base_url == os.environ.get("OPENAI_BASE_URL", ""):
        return "default"
    return LEGACY_ENDPOINT


def forwards(apps, schema_editor):
    Judge = apps.get_model("judges", "Judge")
    JudgeRun = apps.get_model("judges", "JudgeRun")
    Suggestion = apps.get_model("judges", "Suggestion")
    for judge in Judge.objects.order_by("pk"):
        projects = list(
            JudgeRun.objects.filter(judge=judge).order_by("project_id").values_list("project_id", flat=True).distinct()
        )
        if not projects:
            judge.delete()
            continue
        judge.endpoint = endpoint_name(judge)
        judge.project_id = projects[0]
        judge.save(update_fields=["endpoint", "project"])
        for project_id in projects[1:]:
            original = judge.pk
            copy = Judge.objects.get(pk=original)
            copy.pk = None
            copy.project_id = project_id
            copy.save()
            JudgeRun.objects.filter(judge_id=original, project_id=project_id).update(judge=copy)
            Suggestion.objects.filter(judge_id=original, run__project_id=project_id).update(judge=copy)


class Migration(migrations.Migration):
    dependencies = [("judges", "0002_judge_project_endpoint")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
