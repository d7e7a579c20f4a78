"""Django admin: the operator's escape hatch. Items' payloads and the annotation log are read-only
(answers are append-only; an edit is a new version made through the product, never here)."""

from __future__ import annotations

from django.contrib import admin

from annotation.models import Annotation, Assignment, ImportJob, Item, Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    raw_id_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "title",
        "kind",
        "overlap",
        "suggestion_exposure",
        "archived_at",
        "created_by",
        "created_at",
    ]
    list_filter = ["kind", "suggestion_exposure", ("archived_at", admin.EmptyFieldListFilter)]
    search_fields = ["slug", "title"]
    raw_id_fields = ["created_by"]
    # Revealing a hidden field goes through project_update (Settings page, command, API), which logs
    # it for the report: the admin only shows it.
    readonly_fields = ["created_at", "revealed_fields", "reveal_log"]
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "project", "role", "created_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "project__slug"]
    raw_id_fields = ["user", "project"]
    list_select_related = ["user", "project"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["external_id", "project", "assigned_count", "is_open", "created_at"]
    list_filter = ["project", "is_open", ("gold_value", admin.EmptyFieldListFilter)]
    search_fields = ["external_id", "project__slug"]
    raw_id_fields = ["project", "import_job"]
    list_select_related = ["project"]
    readonly_fields = ["project", "external_id", "payload", "gold_value", "import_job", "order_key", "created_at"]
    show_full_result_count = False  # projects hold millions of items: no second COUNT per page

    def has_add_permission(self, request) -> bool:
        return False  # items come from imports, which validate them against the kind

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # deleting an item would delete its answers from the append-only log


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["item", "rater", "version", "source", "suggestion_visible", "created_at"]
    list_filter = ["source", "project", "suggestion_visible"]
    search_fields = ["rater", "item__external_id", "project__slug"]
    list_select_related = ["item__project"]
    show_full_result_count = False

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["item", "annotator", "status", "suggestion_visible", "created_at", "completed_at"]
    list_filter = ["status", "project"]
    search_fields = ["annotator__username", "item__external_id", "project__slug"]
    raw_id_fields = ["project", "item", "annotator"]
    list_select_related = ["item__project", "annotator"]
    readonly_fields = ["suggestion_visible", "created_at", "opened_at", "completed_at"]
    show_full_result_count = False


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["filename", "project", "target", "status", "rows_imported", "error_count", "created_at"]
    list_filter = ["status", "target", "project"]
    search_fields = ["filename", "project__slug"]
    list_select_related = ["project"]
    readonly_fields = [field.name for field in ImportJob._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False
