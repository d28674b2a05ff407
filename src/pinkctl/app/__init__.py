"""The application layer: what the ``pinkctl`` command runs."""
