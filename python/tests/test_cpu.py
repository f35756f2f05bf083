"""CPU tests of the hgemm Python package: every validation path, no GPU needed.

    PYTHONPATH=python HGEMM_LIBRARY=build/libhgemm.so python3 -m unittest discover -s python/tests -v

The arrays are FakeArray objects: a __cuda_array_interface__ over made-up
pointers that nothing dereferences. Three kinds of test:
  - Python-side checks (dtype, shape, strides, ...) raise before anything else;
  - library checks run the real libhgemm.so, which validates every argument
    before its first CUDA call (misalignment, unknown kernel id, ...); the
    device check is stubbed out there, as it would refuse the fake pointers;
  - what reaches hgemm_nt (leading dimensions, stream, kernel id, device
    switch) is read from a stand-in library and a stand-in CUDA runtime.
The one test that lets a fully valid call reach the real library expects
HGEMM_ERROR_NO_DEVICE on a machine without a GPU; with a GPU it checks instead
that the device check refuses the fake pointers, so no kernel ever sees them.
"""
import ctypes
import os
import subprocess
import sys
import unittest
from unittest import mock

import hgemm

# Made-up device addresses, 16-byte aligned, far apart so nothing overlaps.
A_PTR, B_PTR, C_PTR = 0x7F0000000000, 0x7F1000000000, 0x7F2000000000


class FakeArray:
    """Just enough of a CUDA array for hgemm.nt."""

    def __init__(self, shape, ptr, typestr="<f2", strides=None, readonly=False,
                 stream=None, version=3):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (ptr, readonly),
            "strides": strides, "version": version}
        if stream is not None:
            self.__cuda_array_interface__["stream"] = stream


def operands(m=64, n=32, k=48, **out_kw):
    """A valid (a, b, out) triple for an m x n x k product."""
    return (FakeArray((m, k), A_PTR), FakeArray((n, k), B_PTR),
            FakeArray((m, n), C_PTR, **out_kw))


class RecordingLibrary:
    """Stands in for libhgemm.so: records hgemm_nt's arguments and returns
    `status`; names and messages come from the real library."""

    def __init__(self, status=hgemm.SUCCESS):
        self.real, self.status, self.calls = hgemm._load(), status, []

    def hgemm_nt(self, *args):
        names = ("kernel", "m", "n", "k", "alpha", "A", "lda", "B", "ldb",
                 "beta", "C", "ldc", "stream")
        self.calls.append(dict(zip(names, args)))
        return self.status

    def hgemm_kernel_name(self, kernel):
        return self.real.hgemm_kernel_name(kernel)

    def hgemm_status_string(self, status):
        return self.real.hgemm_status_string(status)


class FakeRuntime:
    """Stands in for libcudart: every pointer is of `memory_type` on
    `devices[ptr]` (or 0), the current device is `current`; `error` is what
    cudaPointerGetAttributes returns."""

    def __init__(self, memory_type=2, devices=None, current=0, error=0):
        self.memory_type, self.devices = memory_type, devices or {}
        self.current, self.error, self.set_calls = current, error, []

    def cudaPointerGetAttributes(self, attrs, ptr):
        attrs._obj.type = self.memory_type
        attrs._obj.device = self.devices.get(ptr.value, 0)
        return self.error

    def cudaGetLastError(self):
        return 0

    def cudaGetErrorString(self, error):
        return b"fake CUDA error %d" % error

    def cudaGetDevice(self, device):
        device._obj.value = self.current
        return 0

    def cudaSetDevice(self, device):
        self.set_calls.append(device)
        return 0


def no_device_check():
    """Skip the device check: for calls the library refuses before any CUDA call."""
    return mock.patch.object(hgemm, "_device_of", return_value=None)


class LibraryTests(unittest.TestCase):
    def test_library_loads(self):
        self.assertTrue(os.path.exists(hgemm.library_path()), hgemm.library_path())

    def test_kernels_come_from_the_library(self):
        names = hgemm.kernels()
        self.assertEqual(names[0], "auto")
        self.assertIn("v6", names)
        lib = hgemm._load()
        for i, name in enumerate(names):
            self.assertEqual(lib.hgemm_kernel_name(i).decode(), name)
        self.assertIsNone(lib.hgemm_kernel_name(len(names)))

    def test_status_constants_match_the_library(self):
        # Each named status has its own message; the next value is unknown.
        lib = hgemm._load()
        statuses = [hgemm.SUCCESS, hgemm.ERROR_INVALID_VALUE, hgemm.ERROR_MISALIGNED,
                    hgemm.ERROR_NOT_SUPPORTED, hgemm.ERROR_NO_DEVICE,
                    hgemm.ERROR_ARCH_MISMATCH, hgemm.ERROR_CUDA]
        self.assertEqual(statuses, list(range(len(statuses))))
        texts = [lib.hgemm_status_string(s).decode() for s in statuses]
        self.assertEqual(len(set(texts)), len(texts))
        self.assertNotIn("unknown status", texts)
        self.assertEqual(lib.hgemm_status_string(len(statuses)), b"unknown status")
        self.assertIn("no CUDA device", texts[hgemm.ERROR_NO_DEVICE])

    def test_missing_library_named_by_env(self):
        env = dict(os.environ, HGEMM_LIBRARY="/nonexistent/libhgemm.so")
        run = subprocess.run([sys.executable, "-c", "import hgemm; hgemm.kernels()"],
                             env=env, capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("OSError", run.stderr)
        self.assertIn("/nonexistent/libhgemm.so", run.stderr)

    def test_import_without_torch_registers_nothing(self):
        code = ("import sys; sys.modules['torch'] = None\n"  # makes `import torch` fail
                "import hgemm, hgemm._torch\n"
                "assert hgemm._torch.op is None\n"
                "print(hgemm.kernels())")
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("'v6'", run.stdout)


class ValidCallTests(unittest.TestCase):
    def test_valid_call_reaches_the_library(self):
        a, b, out = operands()
        if hgemm._device_count() == 0:
            with self.assertRaises(hgemm.HgemmError) as cm:
                hgemm.nt(a, b, out)
            self.assertEqual(cm.exception.status, hgemm.ERROR_NO_DEVICE)
            self.assertIn("no CUDA device or driver", str(cm.exception))
        else:
            # The fake pointers are host addresses: the device check must stop them.
            with self.assertRaisesRegex(ValueError, "device memory"):
                hgemm.nt(a, b, out)

    def test_error_type(self):
        self.assertTrue(issubclass(hgemm.HgemmError, RuntimeError))
        a, b, out = operands()
        with no_device_check(), self.assertRaises(hgemm.HgemmError) as cm:
            hgemm.nt(a, b, out, kernel=999)
        self.assertEqual(cm.exception.status, hgemm.ERROR_INVALID_VALUE)
        self.assertIn("invalid value", str(cm.exception))
        self.assertIn("status 1", str(cm.exception))

    def test_empty_products_return_out(self):
        for m, n, k in ((0, 32, 48), (64, 0, 48), (0, 0, 0)):
            a, b, out = operands(m, n, k)
            self.assertIs(hgemm.nt(a, b, out), out, (m, n, k))

    def test_k_zero_reaches_the_library(self):
        # C = beta * C: a real request, so it gets as far as the device.
        a, b, out = operands(k=0)
        lib = RecordingLibrary()
        with mock.patch.object(hgemm, "_load", return_value=lib), no_device_check():
            hgemm.nt(a, b, out, beta=2.0)
        self.assertEqual(lib.calls[0]["k"], 0)
        self.assertEqual(lib.calls[0]["beta"], 2.0)


class LibraryStatusTests(unittest.TestCase):
    """Statuses the real library returns before any CUDA call."""

    def assertStatus(self, status, a, b, out, **kw):
        with no_device_check(), self.assertRaises(hgemm.HgemmError) as cm:
            hgemm.nt(a, b, out, **kw)
        self.assertEqual(cm.exception.status, status, str(cm.exception))

    def test_misaligned_pointer(self):
        _, b, out = operands()
        a = FakeArray((64, 48), A_PTR + 8)
        self.assertStatus(hgemm.ERROR_MISALIGNED, a, b, out)

    def test_misaligned_leading_dimension(self):
        # Rows of 12 elements: a leading dimension that is not a multiple of 8.
        a, b, out = operands(k=12)
        self.assertStatus(hgemm.ERROR_MISALIGNED, a, b, out)

    def test_unknown_kernel_id(self):
        a, b, out = operands()
        self.assertStatus(hgemm.ERROR_INVALID_VALUE, a, b, out, kernel=len(hgemm.kernels()))

    def test_out_overlaps_a(self):
        a, b, _ = operands()
        out = FakeArray((64, 32), A_PTR + 64)
        self.assertStatus(hgemm.ERROR_INVALID_VALUE, a, b, out)

    def test_null_pointer(self):
        a, b, _ = operands()
        self.assertStatus(hgemm.ERROR_INVALID_VALUE, a, b, FakeArray((64, 32), 0))


class ValidationTests(unittest.TestCase):
    """Python-side checks: they raise before the library or CUDA is asked."""

    def test_not_an_array(self):
        _, b, out = operands()
        with self.assertRaisesRegex(TypeError, "a: expected a 2-D fp16 CUDA array"):
            hgemm.nt([[1.0]], b, out)

    def test_bad_dtype(self):
        a, b, out = operands()
        for name, args in (("a", (FakeArray((64, 48), A_PTR, typestr="<f4"), b, out)),
                           ("b", (a, FakeArray((32, 48), B_PTR, typestr="<i2"), out)),
                           ("out", (a, b, FakeArray((64, 32), C_PTR, typestr="<f8")))):
            with self.assertRaisesRegex(TypeError, "^%s: expected fp16" % name):
                hgemm.nt(*args)

    def test_bfloat16_is_not_fp16(self):
        a, b, out = operands()
        with self.assertRaisesRegex(TypeError, "fp16"):
            hgemm.nt(FakeArray((64, 48), A_PTR, typestr="<V2"), b, out)

    def test_wrong_ndim(self):
        a, b, out = operands()
        for shape in ((64,), (2, 64, 48), ()):
            with self.assertRaisesRegex(ValueError, "a: expected a 2-D array"):
                hgemm.nt(FakeArray(shape, A_PTR), b, out)
        with self.assertRaisesRegex(ValueError, "out: expected a 2-D array"):
            hgemm.nt(a, b, FakeArray((64 * 32,), C_PTR))

    def test_mismatched_k(self):
        a, _, out = operands()
        with self.assertRaisesRegex(ValueError, "inner dimensions differ"):
            hgemm.nt(a, FakeArray((32, 40), B_PTR), out)

    def test_wrong_out_shape(self):
        a, b, _ = operands()
        for shape in ((32, 64), (64, 33), (65, 32)):
            with self.assertRaisesRegex(ValueError, r"out has shape .* a @ b.T has shape \(64, 32\)"):
                hgemm.nt(a, b, FakeArray(shape, C_PTR))

    def test_non_unit_inner_stride(self):
        a, b, out = operands()
        # Every other element of a row (strides in bytes), and a transposed view.
        for strides in ((4 * 48, 4), (2, 2 * 64)):
            with self.assertRaisesRegex(ValueError, "a: rows must be contiguous"):
                hgemm.nt(FakeArray((64, 48), A_PTR, strides=strides), b, out)
        with self.assertRaisesRegex(ValueError, "out: rows must be contiguous"):
            hgemm.nt(a, b, FakeArray((64, 32), C_PTR, strides=(128, 4)))

    def test_odd_row_stride(self):
        a, b, out = operands()
        with self.assertRaisesRegex(ValueError, "not a whole number of fp16"):
            hgemm.nt(FakeArray((64, 48), A_PTR, strides=(97, 2)), b, out)

    def test_masked_array(self):
        a, b, out = operands()
        a.__cuda_array_interface__["mask"] = object()
        with self.assertRaisesRegex(ValueError, "masked"):
            hgemm.nt(a, b, out)

    def test_bad_data_field(self):
        a, b, out = operands()
        a.__cuda_array_interface__["data"] = A_PTR
        with self.assertRaisesRegex(ValueError, r"\['data'\]"):
            hgemm.nt(a, b, out)

    def test_readonly_out(self):
        a, b, out = operands(readonly=True)
        with self.assertRaisesRegex(ValueError, "out is read-only"):
            hgemm.nt(a, b, out)

    def test_readonly_inputs_are_fine(self):
        _, _, out = operands()
        a = FakeArray((64, 48), A_PTR, readonly=True)
        b = FakeArray((32, 48), B_PTR, readonly=True)
        lib = RecordingLibrary()
        with mock.patch.object(hgemm, "_load", return_value=lib), no_device_check():
            self.assertIs(hgemm.nt(a, b, out), out)

    def test_unknown_kernel_name(self):
        a, b, out = operands()
        with self.assertRaisesRegex(ValueError, "unknown kernel 'v99'; known kernels: auto, v0"):
            hgemm.nt(a, b, out, kernel="v99")

    def test_kernel_of_wrong_type(self):
        a, b, out = operands()
        for kernel in (6.0, None, True):
            with self.assertRaisesRegex(TypeError, "kernel must be"):
                hgemm.nt(a, b, out, kernel=kernel)

    def test_stream_of_wrong_type(self):
        a, b, out = operands()
        with self.assertRaisesRegex(TypeError, "stream must be"):
            hgemm.nt(a, b, out, stream="default")

    def test_out_none_needs_torch_or_cupy(self):
        a, b, _ = operands()
        with self.assertRaisesRegex(TypeError, "pass out= for FakeArray"):
            hgemm.nt(a, b)

    def test_out_none_with_beta(self):
        a, b, _ = operands()
        with self.assertRaisesRegex(ValueError, "beta"):
            hgemm.nt(a, b, beta=1.0)


class ArgumentTests(unittest.TestCase):
    """What hgemm.nt passes to hgemm_nt, read from a stand-in library."""

    def call(self, a, b, out, **kw):
        lib = RecordingLibrary()
        with mock.patch.object(hgemm, "_load", return_value=lib), no_device_check():
            self.assertIs(hgemm.nt(a, b, out, **kw), out)
        self.assertEqual(len(lib.calls), 1)
        return lib.calls[0]

    def test_contiguous(self):
        call = self.call(*operands(), alpha=0.5, beta=-2.0)
        self.assertEqual(call, {"kernel": 0, "m": 64, "n": 32, "k": 48, "alpha": 0.5,
                                "A": A_PTR, "lda": 48, "B": B_PTR, "ldb": 48, "beta": -2.0,
                                "C": C_PTR, "ldc": 32, "stream": 0})

    def test_row_strides_are_leading_dimensions(self):
        # Slices of wider arrays: rows of 48, 48 and 32 elements 96, 64 and 40 apart.
        a = FakeArray((64, 48), A_PTR, strides=(2 * 96, 2))
        b = FakeArray((32, 48), B_PTR, strides=(2 * 64, 2))
        out = FakeArray((64, 32), C_PTR, strides=(2 * 40, 2))
        call = self.call(a, b, out)
        self.assertEqual((call["lda"], call["ldb"], call["ldc"]), (96, 64, 40))

    def test_one_row_needs_no_row_stride(self):
        # (1, k) rows of 5 elements, with any row stride: the smallest legal ld.
        a = FakeArray((1, 5), A_PTR, strides=(2 * 5, 2))
        b = FakeArray((1, 5), B_PTR)
        out = FakeArray((1, 1), C_PTR, strides=(2 * 1000, 2 * 77))
        call = self.call(a, b, out)
        self.assertEqual((call["lda"], call["ldb"], call["ldc"]), (8, 8, 8))

    def test_version_2_interface(self):
        a, b, out = (FakeArray((64, 48), A_PTR, version=2), FakeArray((32, 48), B_PTR, version=2),
                     FakeArray((64, 32), C_PTR, version=2))
        self.assertEqual(self.call(a, b, out)["stream"], 0)

    def test_kernel_names_and_ids(self):
        for i, name in enumerate(hgemm.kernels()):
            self.assertEqual(self.call(*operands(), kernel=name)["kernel"], i)
        self.assertEqual(self.call(*operands(), kernel=3)["kernel"], 3)

    def test_stream_from_the_interface(self):
        # out's stream first, then a's, then b's; 1 and 2 pass through unchanged
        # (they are cudaStreamLegacy and cudaStreamPerThread).
        for stream in (1, 2, 0x5555AAAA0000):
            a, b, out = operands(stream=stream)
            self.assertEqual(self.call(a, b, out)["stream"], stream)
        a, b, out = operands()
        a.__cuda_array_interface__["stream"] = 2
        self.assertEqual(self.call(a, b, out)["stream"], 2)

    def test_stream_argument_wins(self):
        class CupyLikeStream:
            cuda_stream = 0x1234

        class CtypesLikeStream:
            _as_parameter_ = ctypes.c_void_p(0x5678)

        for stream, handle in ((0x42, 0x42), (CupyLikeStream(), 0x1234),
                               (CtypesLikeStream(), 0x5678), (0, 0)):
            a, b, out = operands(stream=1)
            self.assertEqual(self.call(a, b, out, stream=stream)["stream"], handle)


class DeviceCheckTests(unittest.TestCase):
    """The device check, over a stand-in CUDA runtime."""

    def call(self, runtime, a, b, out):
        lib = RecordingLibrary()
        with mock.patch.object(hgemm, "_load", return_value=lib), \
                mock.patch.object(hgemm, "_runtime", return_value=runtime):
            hgemm.nt(a, b, out)
        return lib.calls

    def test_device_memory_passes(self):
        self.assertEqual(len(self.call(FakeRuntime(memory_type=2), *operands())), 1)
        self.assertEqual(len(self.call(FakeRuntime(memory_type=3), *operands())), 1)  # managed

    def test_host_memory_is_refused(self):
        for memory_type in (0, 1):  # unregistered, pinned host
            with self.assertRaisesRegex(ValueError, "a: 0x.* is not device memory"):
                self.call(FakeRuntime(memory_type=memory_type), *operands())

    def test_different_devices(self):
        runtime = FakeRuntime(devices={B_PTR: 1})
        with self.assertRaisesRegex(ValueError, "different devices: a on cuda:0, b on cuda:1"):
            self.call(runtime, *operands())

    def test_no_device_skips_the_check(self):
        # cudaErrorNoDevice: the library is called and reports it itself.
        self.assertEqual(len(self.call(FakeRuntime(error=100), *operands())), 1)

    def test_other_runtime_errors_refuse(self):
        with self.assertRaisesRegex(ValueError, "cudaPointerGetAttributes.*fake CUDA error 1"):
            self.call(FakeRuntime(error=1), *operands())

    def test_no_runtime_skips_the_check(self):
        self.assertEqual(len(self.call(None, *operands())), 1)

    def test_switches_to_the_arrays_device_and_back(self):
        runtime = FakeRuntime(devices={A_PTR: 1, B_PTR: 1, C_PTR: 1}, current=0)
        self.call(runtime, *operands())
        self.assertEqual(runtime.set_calls, [1, 0])
        runtime = FakeRuntime(current=0)  # already there: no switch
        self.call(runtime, *operands())
        self.assertEqual(runtime.set_calls, [])

    def test_empty_product_checks_nothing(self):
        # Not even host memory is refused: an empty product touches no memory.
        self.assertEqual(len(self.call(FakeRuntime(memory_type=0), *operands(m=0))), 1)


if __name__ == "__main__":
    unittest.main()
