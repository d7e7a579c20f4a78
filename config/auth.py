"""Django's model backend, with the per-request user read written out.

Every request reads the signed-in user once; built by the ORM that statement costs more Python
than the database spends on it (see annotation/sql.py). The rules are Django's own.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


class SessionUserBackend(ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        users = get_user_model()
        # Django has already turned the session's value into a primary key (auth.get_user).
        statement = f"SELECT * FROM {users._meta.db_table} WHERE {users._meta.pk.column} = %s"
        found = next(iter(users._default_manager.raw(statement, [user_id])), None)
        return found if found is not None and self.user_can_authenticate(found) else None
