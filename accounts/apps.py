from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        # Connects the receiver that drops a user's API tokens when their password changes.
        from accounts import signals  # noqa: F401
