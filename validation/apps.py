from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"
    verbose_name = "Agreement and gold"

    def ready(self) -> None:
        from annotation.panels import register_item_filter, register_item_panel
        from validation import (
            item_panels,
            setup_steps,  # noqa: F401  (registers its steps of the project checklist)
        )

        register_item_panel("gold", item_panels.gold_panel, template="validation/_item_gold.html", order=10)
        register_item_filter("disagreement", item_panels.in_disagreement, label="In disagreement")
        register_item_filter("gold_ready", item_panels.gold_ready, label="Gold-ready")
