"""The ``ucma`` command line (``ucma --help``); the Typer app is ``ucma.cli.main.app``."""
