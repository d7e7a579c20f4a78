"""The judges layer of the ``rating``: its judge prompt follows the project's design."""
