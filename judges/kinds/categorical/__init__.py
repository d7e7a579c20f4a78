"""The judges layer of the ``categorical``: its judge prompt follows the project's design."""
