# Backends are checked against the registry (judges.backends), as a project's kind is: no fixed choices.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("judges", "0005_generation"),
    ]

    operations = [
        migrations.AlterField(
            model_name="generationrun",
            name="backend",
            field=models.CharField(max_length=10),
        ),
        migrations.AlterField(
            model_name="judge",
            name="backend",
            field=models.CharField(max_length=10),
        ),
    ]
