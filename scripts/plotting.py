"""What the plotting scripts share: matplotlib, or one clear message.

    from plotting import pyplot
    plt = pyplot()   # matplotlib.pyplot on a file-only backend

Without matplotlib the script says what to install and exits with status 2,
never with a traceback.
"""
import os
import sys

MISSING_STATUS = 2


def missing(module, err):
    """Say that `module` is needed and how to get it; exit 2."""
    name = os.path.basename(sys.argv[0]) or "hgemm"
    print("%s: needs %s, which is not installed (%s).\n"
          "Install it with `pip install %s`, or `pip install '.[plot]'` from the repository\n"
          "(on Debian/Ubuntu: `apt-get install python3-%s`)." % (name, module, err, module, module),
          file=sys.stderr)
    sys.exit(MISSING_STATUS)


def pyplot():
    """matplotlib.pyplot with the Agg backend (files only, no display needed)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        missing("matplotlib", e)
    return plt
