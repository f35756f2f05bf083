#!/usr/bin/env python3
"""Print why each skipped test was skipped, from ctest's JUnit report.

    ctest --test-dir build --output-junit ctest-junit.xml
    python3 scripts/ctest_skips.py build/ctest-junit.xml

ctest's own summary names the skipped tests but not the reason, which each
test prints itself (a GPU test: "skipped: no usable CUDA device ..."). This
prints, per skipped test, its lines that say "skip" (or its last line).
Exit status 0 always: the tests' own result is ctest's to report.
"""
import sys
import xml.etree.ElementTree as ET


def reasons(out):
    lines = [ln.strip() for ln in (out or "").splitlines() if ln.strip()]
    said = [ln for ln in lines if "skip" in ln.lower() and not ln.startswith("OK (")]
    return (said or lines[-1:] or ["(the test printed nothing)"])[:3]


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 0
    try:
        suite = ET.parse(argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print("ctest_skips: cannot read %s: %s" % (argv[1], e), file=sys.stderr)
        return 0
    skipped = [t for t in suite.iter("testcase") if t.find("skipped") is not None]
    if not skipped:
        return 0
    print("\nWhy the skipped tests were skipped:")
    for t in skipped:
        for i, line in enumerate(reasons(t.findtext("system-out"))):
            print("  %-26s %s" % (t.get("name") if i == 0 else "", line))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
