from django.db import migrations, models

#: What ``ReportSnapshot.kind`` held for a frozen paper evaluation before the field of its own.
EVALUATION_NAMES = ("copa_eval", "mcq_eval", "estimates", "ipqa_eval")


def evaluation_names_to_their_field(apps, schema_editor):
    """A snapshot whose ``kind`` named an evaluation says so in ``evaluation``; ``kind`` becomes the project's."""
    snapshots = apps.get_model("validation", "ReportSnapshot")
    # update(): snapshot rows refuse save() once stored.
    for snapshot in snapshots.objects.filter(kind__in=EVALUATION_NAMES).select_related("project").iterator():
        snapshots.objects.filter(pk=snapshot.pk).update(evaluation=snapshot.kind, kind=snapshot.project.kind)


def evaluation_names_back(apps, schema_editor):
    snapshots = apps.get_model("validation", "ReportSnapshot")
    snapshots.objects.exclude(evaluation="").update(kind=models.F("evaluation"))


class Migration(migrations.Migration):
    dependencies = [
        ("validation", "0002_adjudication"),
    ]

    operations = [
        migrations.AddField(
            model_name="reportsnapshot",
            name="evaluation",
            field=models.CharField(
                blank=True,
                help_text="The paper evaluation these numbers are of (its command's name); empty for the agreement report.",
                max_length=50,
            ),
        ),
        migrations.RunPython(evaluation_names_to_their_field, evaluation_names_back),
    ]
