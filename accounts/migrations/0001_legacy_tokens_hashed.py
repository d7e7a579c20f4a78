"""Tokens of the former plain-text token table carry on as hashed, expiring tokens.

Clients keep sending the key they have (`Authorization: Token <key>`); the database keeps only its
SHA-512 digest, and the plain-text rows are deleted. The old table itself is left empty.
"""

import hashlib

from django.conf import settings
from django.db import migrations
from django.utils import timezone

LEGACY_TABLE = "authtoken_token"


def hash_legacy_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if LEGACY_TABLE not in connection.introspection.table_names():
        return
    table = connection.ops.quote_name(LEGACY_TABLE)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {connection.ops.quote_name('key')}, user_id FROM {table}")
        rows = cursor.fetchall()
    token_model = apps.get_model("knox", "AuthToken")
    expiry = timezone.now() + settings.REST_KNOX["TOKEN_TTL"]
    token_model.objects.bulk_create(
        [
            token_model(
                digest=hashlib.sha512(key.encode()).hexdigest(), token_key=key[:15], user_id=user_id, expiry=expiry
            )
            for key, user_id in rows
        ],
        ignore_conflicts=True,
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table}")


class Migration(migrations.Migration):
    dependencies = [
        ("knox", "0009_extend_authtoken_field"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(hash_legacy_tokens, migrations.RunPython.noop)]
