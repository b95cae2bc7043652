"""Makes Debian's python3-protobuf importable from another interpreter.

ML engineers' first python3 is often a pyenv or conda interpreter without
protobuf, while gauntlet's set-up installs Debian's python3-protobuf for
/usr/bin/python3 only. When protobuf is missing here, Debian's
dist-packages folder is appended to the search path (last, so nothing the
interpreter has of its own is shadowed); protobuf then loads its pure-Python
implementation if its C extension does not match this interpreter.
"""

import importlib
import os
import sys

# Where Debian's python3-* packages install, for every Python 3 version.
DEBIAN_DIST_PACKAGES = "/usr/lib/python3/dist-packages"


def _importable():
    try:
        importlib.import_module("google.protobuf")
        return True
    except ImportError:
        return False


def ensure_protobuf(dist_packages=DEBIAN_DIST_PACKAGES):
    """Imports google.protobuf, from Debian's package if need be; raises
    ImportError saying what to do when neither has it."""
    if _importable():
        return
    if os.path.isdir(os.path.join(dist_packages, "google", "protobuf")) and dist_packages not in sys.path:
        sys.path.append(dist_packages)
        importlib.invalidate_caches()
        # A `google` namespace package from this interpreter's own packages
        # recomputes its path; a stale failed import is forgotten.
        for name in [n for n in sys.modules if n == "google" or n.startswith("google.")]:
            if sys.modules[name] is None:
                del sys.modules[name]
        if _importable():
            return
    raise ImportError(
        "gauntlet_detector needs protobuf, which %s cannot import: install Debian's python3-protobuf "
        "(apt-get install python3-protobuf) or run the detector with /usr/bin/python3" % sys.executable)
