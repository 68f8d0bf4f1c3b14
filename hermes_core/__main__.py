"""``python -m hermes_core`` runs the ``hermes-memory`` CLI."""

from hermes_core.cli.main import main

if __name__ == "__main__":
    main()
