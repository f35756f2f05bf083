"""Run the GPU tests (test_gpu.py) for CTest.

    PYTHONPATH=python HGEMM_LIBRARY=build/libhgemm.so python3 python/tests/run_gpu.py

Exit 0 when they pass, 1 when any fails, and 77 (what CTest's
SKIP_RETURN_CODE reports as skipped) when none could run: no torch and no
cupy, or no sm_90 GPU.
"""
import os
import sys
import unittest

SKIPPED = 77


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    suite = unittest.defaultTestLoader.loadTestsFromNames(["test_gpu", "test_gpu_native"])
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    # A class that skips in setUpClass is one skip entry that is not a test
    # case, and none of its tests count in testsRun.
    skipped_tests = sum(1 for test, _ in result.skipped if isinstance(test, unittest.TestCase))
    if result.testsRun - skipped_tests == 0:
        print("run_gpu: every GPU test was skipped (reasons above)")
        return SKIPPED
    return 0


if __name__ == "__main__":
    sys.exit(main())
