# Idempotency keys are scoped to the rater: the old per-project constraint let one rater's key swallow
# another rater's answer. Every row that was unique per project is unique per rater, so no data changes.
from django.db import migrations, models
from django.db.models import Q


class Migration(migrations.Migration):
    dependencies = [
        ("annotation", "0004_assignment_index"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="annotation", name="annotation_unique_idempotency_key"),
        migrations.AddConstraint(
            model_name="annotation",
            constraint=models.UniqueConstraint(
                condition=Q(idempotency_key__isnull=False),
                fields=("project", "rater", "idempotency_key"),
                name="annotation_unique_rater_idempotency_key",
            ),
        ),
    ]
