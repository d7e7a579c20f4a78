from django.apps import AppConfig

from annotation.hooks import register_suggestion_provider
from annotation.panels import register_item_panel


class JudgesConfig(AppConfig):
    name = "judges"
    verbose_name = "LLM judges"

    def ready(self) -> None:
        # Modules that need the models load here. endpoints and the setup_steps modules register on import:
        # the start-up check of the configured endpoints, and this app's steps of the project checklist.
        from judges import endpoints, setup_steps  # noqa: F401

        # The run types of the run engine (judges.runs) register on import.
        from judges import execution as judge_runs  # noqa: F401
        from judges.generation import execution as generation_runs  # noqa: F401
        from judges.generation import setup_steps as generation_setup_steps  # noqa: F401
        from judges.item_panels import suggestions_panel
        from judges.selectors import suggestion_for_display

        register_item_panel("suggestions", suggestions_panel, template="judges/_item_suggestions.html", order=20)
        # The workspace shows the suggestion this app chooses for an item.
        register_suggestion_provider(suggestion_for_display)
