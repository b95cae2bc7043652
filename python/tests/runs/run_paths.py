"""What the run tests share: the gauntlet binary and the repository's root, from their command line."""
import argparse
import os
import sys
import unittest

PATHS = {}


def main(doc):
    """Reads --gauntlet and --source-dir into PATHS, then runs the calling module's tests."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--gauntlet", required=True, help="the gauntlet binary")
    parser.add_argument("--source-dir", required=True, help="the repository's root (for its scenarios)")
    args, rest = parser.parse_known_args()
    PATHS["gauntlet"], PATHS["source"] = os.path.abspath(args.gauntlet), os.path.abspath(args.source_dir)
    unittest.main(module="__main__", argv=[sys.argv[0]] + rest)
