from django.apps import AppConfig

from annotation.hooks import register_project_rules_validator
from annotation.panels import register_item_filter, register_item_panel, register_project_panel


class ValidationConfig(AppConfig):
    name = "validation"
    verbose_name = "Agreement and gold"

    def ready(self) -> None:
        # Modules that need the models load here; setup_steps registers this app's steps of the project checklist.
        from validation import (
            item_panels,
            setup_steps,  # noqa: F401
        )
        from validation.adjudication import AdjudicationRules

        register_project_panel(
            "gold", item_panels.gold_readiness_panel, template="validation/_project_gold.html", order=10
        )
        register_item_panel("gold", item_panels.gold_panel, template="validation/_item_gold.html", order=10)
        register_item_filter("disagreement", item_panels.in_disagreement, label="In disagreement")
        register_item_filter("gold_ready", item_panels.gold_ready, label="Gold-ready")
        register_item_filter("flipped", item_panels.flipped, label="Flipped by Dawid–Skene")
        # A project's adjudication rules are checked by the code that applies them.
        register_project_rules_validator(AdjudicationRules.from_json)
