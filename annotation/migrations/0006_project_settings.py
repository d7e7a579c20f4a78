# Projects can be archived: hidden from annotators and closed to new claims, with every row kept.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0005_idempotency_key_per_rater"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="archived_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
