"""Django's PostgreSQL backend for server-side parameter binding.

Bound by the server, a statement carries at most 65,535 parameters, while Django's PostgreSQL
backend puts every row of a batch into one statement (with client-side binding there is no such
limit). The deleting collector and ``bulk_create`` ask ``bulk_batch_size`` how many rows fit: here
the answer respects that limit, so deleting a project of a million items still works.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base, features, operations

MAX_QUERY_PARAMS = 2**16 - 1


class DatabaseFeatures(features.DatabaseFeatures):
    max_query_params = MAX_QUERY_PARAMS


class DatabaseOperations(operations.DatabaseOperations):
    def bulk_batch_size(self, fields: Any, objs: Any) -> int:
        return max(1, min(len(objs), MAX_QUERY_PARAMS // max(1, len(fields))))


class DatabaseWrapper(base.DatabaseWrapper):
    features_class = DatabaseFeatures
    ops_class = DatabaseOperations
