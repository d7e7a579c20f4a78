# Step 3 of 3: the project is required, a configuration is unique within its project, the URL and
# key-variable columns are gone, and deleting a project deletes its judges with their runs.
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("judges", "0003_judge_per_project_data")]

    operations = [
        migrations.AlterField(
            model_name="judge",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="judges", to="annotation.project"
            ),
        ),
        migrations.AlterField(
            model_name="judgerun",
            name="judge",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.RESTRICT, related_name="runs", to="judges.judge"
            ),
        ),
        migrations.RemoveField(model_name="judge", name="base_url"),
        migrations.RemoveField(model_name="judge", name="api_key_env"),
        migrations.AddConstraint(
            model_name="judge",
            constraint=models.UniqueConstraint(fields=("project", "fingerprint"), name="judge_unique_per_project"),
        ),
    ]
