#!/usr/bin/env python
import gc
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lifeproject.settings")
    if sys.argv[1:2] == ["resolve"]:
        # A fresh process per call (docs/performance.md, "The shell door"): what its start-up
        # creates (modules, classes, settings, models) lives as long as the process, so the
        # cyclic collector's passes over it while importing find nothing to free. The command
        # freezes those objects and turns the collector back on before it reads a calendar.
        gc.disable()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
