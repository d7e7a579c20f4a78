from django.apps import AppConfig


class JudgesConfig(AppConfig):
    name = "judges"
    verbose_name = "LLM judges"

    def ready(self) -> None:
        # Registers the start-up check of the configured endpoints, and this app's step of the project checklist.
        from annotation.panels import register_item_panel
        from judges import endpoints, setup_steps  # noqa: F401
        from judges.generation import setup_steps as generation_setup_steps  # noqa: F401
        from judges.item_panels import suggestions_panel

        register_item_panel("suggestions", suggestions_panel, template="judges/_item_suggestions.html", order=20)
