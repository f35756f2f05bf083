"""The torch extension's plan (python/hgemm/csrc/plan.h, C) against the ctypes
path's (_layout.plan): the same hgemm_gemm call, or the same refusal, for
thousands of random views. The C side runs as tests/cpu/test_torch_plan,
named by $HGEMM_PLAN_DRIVER (CTest sets it)."""
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hgemm"))
import _layout  # noqa: E402  (pure Python: no library, no torch)

# plan.h's hgemm_plan_error values and the words _layout's ValueError says for each.
_ERRORS = {1: "dimensions", 2: "must equal", 3: "do not broadcast", 4: "out has shape",
           5: "neither its rows nor its columns", 6: "batch dimensions do not step"}
_NAMES = {0: "a", 1: "b", 2: "out"}


def _strides(shape, rng):
    """Strides (elements) for a view of `shape`: contiguous, transposed, padded
    rows, a broadcast batch, or a non-matrix step now and then."""
    kind = rng.choice(["c", "c", "t", "pad", "bcast", "odd", "neg"])
    dims = len(shape)
    order = list(range(dims))
    if kind == "t" and dims >= 2:
        order[-1], order[-2] = order[-2], order[-1]
    strides, step = [0] * dims, 1
    for d in reversed(order):
        strides[d] = step
        grow = shape[d] if shape[d] > 0 else 1
        if kind == "pad" and d == order[-1]:
            grow = -(-grow // 8) * 8 + rng.choice([0, 8, 3])
        step *= grow
    if kind == "bcast" and dims > 2:
        strides[rng.randrange(dims - 2)] = 0
    if kind == "odd":
        strides[rng.randrange(dims)] += rng.choice([1, 2, 5])
    if kind == "neg":
        strides[rng.randrange(dims)] *= -1
    return strides


def _random_case(rng):
    sizes = [0, 1, 2, 3, 8, 9, 16, 24, 64]
    k = rng.choice(sizes)
    m, n = rng.choice(sizes), rng.choice(sizes)
    batch = [rng.choice([1, 2, 3]) for _ in range(rng.randrange(0, 3))]
    a_batch = batch[rng.randrange(len(batch) + 1):]
    b_batch = [1 if rng.random() < 0.3 else x for x in batch[rng.randrange(len(batch) + 1):]]
    a_shape = a_batch + [m, k if rng.random() > 0.05 else k + 1]
    b_shape = b_batch + [k, n]
    if rng.random() < 0.03:
        a_shape = [k]
    out_shape = batch + [m, n]
    if rng.random() < 0.05:
        out_shape = out_shape[:-1] + [n + 1]
    return [(tuple(s), tuple(_strides(s, rng))) for s in (a_shape, b_shape, out_shape)]


def _python_line(case):
    try:
        p = _layout.plan(*case)
    except ValueError as e:
        return ("error", str(e))
    return ("ok", " ".join(str(int(x)) for x in p))


class TorchPlanMatchesLayout(unittest.TestCase):
    def test_random_views(self):
        driver = os.environ.get("HGEMM_PLAN_DRIVER")
        if not driver:
            self.skipTest("HGEMM_PLAN_DRIVER is not set (CTest sets it to tests/cpu/test_torch_plan)")
        rng = random.Random(20261207)
        cases = [_random_case(rng) for _ in range(4000)]
        text = "".join(" ".join(str(x) for view in case for x in (len(view[0]),) + view[0] + view[1]) + "\n"
                       for case in cases)
        run = subprocess.run([driver], input=text, capture_output=True, text=True, check=True)
        lines = run.stdout.splitlines()
        self.assertEqual(len(lines), len(cases))
        kinds = {"ok": 0, "error": 0}
        for case, line in zip(cases, lines):
            want_kind, want = _python_line(case)
            word, rest = line.split(" ", 1)
            kinds[word] = kinds.get(word, 0) + 1
            self.assertEqual(word, want_kind, "views %s: C says %r, Python %r" % (case, line, want))
            if word == "ok":
                self.assertEqual(rest, want, "views %s" % (case,))
            else:
                code, which = (int(x) for x in rest.split())
                self.assertIn(_ERRORS[code], want, "views %s: C error %d, Python: %s" % (case, code, want))
                if code in (5, 6):
                    self.assertTrue(want.startswith(_NAMES[which] + " "), "views %s: C names %s, Python: %s"
                                    % (case, _NAMES[which], want))
        # Both outcomes are exercised in number, or the comparison says little.
        self.assertGreater(kinds["ok"], 1000)
        self.assertGreater(kinds["error"], 200)


if __name__ == "__main__":
    unittest.main()
