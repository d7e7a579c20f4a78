"""Django admin for judges, their runs and suggestions: the operator's view. A judge's configuration
is its fingerprint and a run's counters are its workers' state, so both are read here, not edited;
a judge's display name is the one thing that may change."""

from __future__ import annotations

from django.contrib import admin

from judges.models import Judge, JudgeRun, Suggestion


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "kind", "backend", "model", "endpoint", "prompt_name", "prompt_version"]
    list_filter = ["backend", "kind", "project"]
    search_fields = ["name", "model", "endpoint", "prompt_name", "project__slug"]
    list_select_related = ["project"]
    readonly_fields = [
        "project", "kind", "backend", "model", "endpoint", "prompt_name", "prompt_version", "temperature",
        "max_tokens", "seed", "fingerprint", "created_by", "created_at",
    ]  # fmt: skip

    def has_add_permission(self, request) -> bool:
        return False  # judges are made on the project's judges page or with a command, which validate them


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "judge", "project", "status", "total", "ok_count", "failed_count", "pending_count",
                    "created_at", "finished_at"]  # fmt: skip
    list_filter = ["status", "project"]
    search_fields = ["judge__name", "project__slug", "last_error"]
    list_select_related = ["judge", "project"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Suggestion)
class SuggestionAdmin(admin.ModelAdmin):
    list_display = ["item", "judge", "run", "status", "attempts", "latency_ms", "updated_at"]
    list_filter = ["status", "judge"]
    search_fields = ["item__external_id", "judge__name", "failure_reason"]
    list_select_related = ["item__project", "judge"]
    show_full_result_count = False

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
