# Judges belong to a project and name an operator-configured endpoint instead of holding a URL and
# the name of an environment variable. Step 1 of 3: the new columns, empty.
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_idempotency_key_per_rater"),
        ("judges", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="judge",
            name="project",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.CASCADE, related_name="judges", to="annotation.project"
            ),
        ),
        migrations.AddField(
            model_name="judge",
            name="endpoint",
            field=models.CharField(
                blank=True,
                help_text="The operator-configured endpoint the openai backend calls, by name (judges.endpoints); "
                "a judge never holds a URL or a key.",
                max_length=50,
            ),
        ),
        migrations.AlterField(
            model_name="judge",
            name="fingerprint",
            field=models.CharField(editable=False, max_length=64),
        ),
    ]
