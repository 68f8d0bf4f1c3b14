"""The ``hermes-memory`` command (click). ``main`` builds the group and loads each command module on
demand; the modules parse arguments and print through ``output`` (rich). Rules live in the
layers and the library, never here."""
