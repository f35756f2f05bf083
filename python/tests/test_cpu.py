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

hgemm.matmul's decisions (which op, leading dimension and batch stride each
operand gets) are pure functions of shapes and strides (hgemm._layout),
tested directly and checked element by element against the views they
describe; then its arguments, read as above, and its torch path over a
stand-in torch module. With torch installed, the fake (meta) side of
torch.ops.hgemm.matmul is tested on meta tensors.
"""
import ctypes
import itertools
import os
import random
import subprocess
import sys
import types
import unittest
from unittest import mock

import hgemm

# Made-up device addresses, 16-byte aligned, far apart so nothing overlaps.
A_PTR, B_PTR, C_PTR = 0x7F0000000000, 0x7F1000000000, 0x7F2000000000


class FakeArray:
    """Just enough of a CUDA array for hgemm.nt and hgemm.matmul."""

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

    def hgemm_gemm(self, *args):
        names = ("kernel", "dtype", "op_a", "op_b", "m", "n", "k", "alpha", "A", "lda",
                 "stride_a", "B", "ldb", "stride_b", "beta", "C", "ldc", "stride_c", "batch",
                 "options", "stream")
        call = dict(zip(names, args))
        if call["options"] is not None:  # ctypes.byref(hgemm_nt_options): read it now
            o = call["options"]._obj
            assert o.c_in is None and o.ldc_in == 0, "the package never passes a separate C input"
            call["options"] = (o.workspace, o.workspace_bytes, o.sm_count_target)
        self.calls.append(call)
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

    def test_workspace_bytes_match_the_header(self):
        # hgemm.WORKSPACE_BYTES is include/hgemm.h's HGEMM_WORKSPACE_BYTES, and
        # hgemm_nt_ws (hgemm.linear's call with a workspace) takes hgemm_nt's
        # arguments with the workspace and its size before the stream.
        header = os.path.join(os.path.dirname(__file__), "..", "..", "include", "hgemm.h")
        with open(header) as f:
            line = next(l for l in f if l.startswith("#define HGEMM_WORKSPACE_BYTES"))
        self.assertIn("((size_t)32 << 20)", line)
        self.assertEqual(hgemm.WORKSPACE_BYTES, 32 << 20)
        lib = hgemm._load()
        self.assertEqual(lib.hgemm_nt_ws.argtypes[:-3], lib.hgemm_nt.argtypes[:-1])
        self.assertEqual(lib.hgemm_nt_ws.argtypes[-3:], [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p])

    def test_missing_library_named_by_env(self):
        env = dict(os.environ, HGEMM_LIBRARY="/nonexistent/libhgemm.so")
        run = subprocess.run([sys.executable, "-c", "import hgemm; hgemm.kernels()"],
                             env=env, capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("OSError", run.stderr)
        self.assertIn("/nonexistent/libhgemm.so", run.stderr)

    def test_import_without_torch_registers_nothing(self):
        # ... and hgemm.workspace, which makes a torch tensor, says why it cannot
        code = ("import sys; sys.modules['torch'] = None\n"  # makes `import torch` fail
                "import hgemm, hgemm._torch\n"
                "assert hgemm._torch.op is None and hgemm._torch.matmul_op is None\n"
                "print(hgemm.kernels())\n"
                "try:\n"
                "    hgemm.workspace()\n"
                "except RuntimeError as e:\n"
                "    print(e)\n")
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("'v6'", run.stdout)
        self.assertIn("torch is not installed", run.stdout)


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



# --- hgemm.matmul: layouts from strides (pure) -------------------------------------

N, T = hgemm._layout.OP_N, hgemm._layout.OP_T
layout = hgemm._layout


def contiguous(shape):
    """Strides (elements) of a C-ordered array of `shape`."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def view(shape, strides=None):
    """(shape, strides) of a C-ordered array, or of any strides given."""
    return tuple(shape), contiguous(shape) if strides is None else tuple(strides)


def tr(v):
    """v.transpose(-1, -2)."""
    shape, strides = v
    return shape[:-2] + (shape[-1], shape[-2]), strides[:-2] + (strides[-1], strides[-2])


def sliced(shape, pad):
    """x[..., :shape[-1]] of a C-ordered x whose last dimension is shape[-1] + pad."""
    return tuple(shape), contiguous(tuple(shape[:-1]) + (shape[-1] + pad,))


def offset(v, index):
    """Elements from v's first element to v[index], index being the full
    broadcast index (v's dimensions right-aligned, those of size 1 broadcast)."""
    shape, strides = v
    index = index[len(index) - len(shape):]
    return sum(i * s for i, s, d in zip(index, strides, shape) if d != 1)


class MatrixLayoutTests(unittest.TestCase):
    def test_rows_contiguous_is_op_n(self):
        self.assertEqual(layout.matrix_layout(64, 48, 48, 1), (N, 48))
        self.assertEqual(layout.matrix_layout(64, 48, 48, 1, prefer=T), (N, 48))

    def test_transposed_view_is_op_t(self):
        # x (48, 64) C-ordered; x.T is 64 x 48 with strides (1, 64).
        self.assertEqual(layout.matrix_layout(64, 48, 1, 64), (T, 64))
        self.assertEqual(layout.matrix_layout(64, 48, 1, 64, prefer=T), (T, 64))

    def test_padded_leading_dimension(self):
        # x[:, :48] of a (64, 56) array, and its transpose.
        self.assertEqual(layout.matrix_layout(64, 48, 56, 1), (N, 56))
        self.assertEqual(layout.matrix_layout(48, 64, 1, 56), (T, 56))

    def test_not_expressible(self):
        for rows, cols, rs, cs, why in (
                (64, 24, 96, 2, "every other column"),
                (32, 24, 192, 2, "every other row and column"),
                (64, 48, 0, 1, "one row broadcast to 64 (stride 0)"),
                (64, 48, 1, 0, "one column broadcast"),
                (64, 48, 8, 1, "rows that overlap (row stride < row length)"),
                (64, 48, -48, 1, "rows reversed (x[::-1])"),
                (64, 48, 48, -1, "columns reversed"),
                (2, 2, 1, 1, "both strides 1")):
            self.assertIsNone(layout.matrix_layout(rows, cols, rs, cs), why)
            self.assertIsNone(layout.matrix_layout(rows, cols, rs, cs, prefer=T), why)

    def test_single_row_takes_any_row_stride(self):
        # One stored row never steps: the smallest leading dimension hgemm takes.
        for row_stride in (48, 0, 7, 4096, -3):
            self.assertEqual(layout.matrix_layout(1, 48, row_stride, 1), (N, 48))
        self.assertEqual(layout.matrix_layout(1, 12, 12, 1), (N, 16))
        # (k, 1) for b with n = 1: stored transposed, it is one row of k.
        self.assertEqual(layout.matrix_layout(48, 1, 1, 1, prefer=T), (T, 48))

    def test_single_column_prefers_an_aligned_form(self):
        # (64, 1) C-ordered: op N would need ld 1 (misaligned); op T is one row.
        self.assertEqual(layout.matrix_layout(64, 1, 1, 1), (T, 64))
        self.assertEqual(layout.matrix_layout(64, 1, 1, 1, prefer=T), (T, 64))
        # (1, 64) for b (k = 1): op T would need ld 1; op N is one row.
        self.assertEqual(layout.matrix_layout(1, 64, 64, 1, prefer=T), (N, 64))

    def test_one_by_one_and_empty(self):
        self.assertEqual(layout.matrix_layout(1, 1, 1, 1), (N, 8))
        self.assertEqual(layout.matrix_layout(1, 1, 1, 1, prefer=T), (T, 8))
        self.assertEqual(layout.matrix_layout(0, 48, 48, 1), (N, 48))
        self.assertEqual(layout.matrix_layout(48, 0, 1, 1, prefer=T), (T, 48))
        self.assertEqual(layout.matrix_layout(0, 0, 5, 3, prefer=T), (T, 8))

    def test_misaligned_is_left_to_the_library(self):
        # Expressible but misaligned either way: the preferred form, whose
        # leading dimension the library then refuses (MISALIGNED).
        self.assertEqual(layout.matrix_layout(64, 12, 12, 1, prefer=T), (N, 12))
        self.assertEqual(layout.matrix_layout(12, 64, 1, 12), (T, 12))

    def test_min_ld_and_padded_strides(self):
        self.assertEqual([layout.min_ld(c) for c in (0, 1, 8, 9, 100)], [8, 8, 8, 16, 104])
        self.assertEqual(layout.padded_strides((3, 5, 12)), (80, 16, 1))
        self.assertEqual(layout.padded_strides((4, 8)), (8, 1))
        self.assertEqual(layout.padded_strides((2, 0)), (8, 1))


class BatchStrideTests(unittest.TestCase):
    def test_contiguous(self):
        self.assertEqual(layout.batch_stride((5,), (5, 64, 48), contiguous((5, 64, 48))), 64 * 48)
        # Two batch dimensions that compose into one stride.
        self.assertEqual(layout.batch_stride((2, 3), (2, 3, 64, 48), contiguous((2, 3, 64, 48))),
                         64 * 48)

    def test_padded_entries(self):
        # x[:, :64, :] of (5, 72, 48): entries 72 * 48 apart.
        self.assertEqual(layout.batch_stride((5,), (5, 64, 48), (72 * 48, 48, 1)), 72 * 48)

    def test_broadcast_is_stride_zero(self):
        self.assertEqual(layout.batch_stride((5,), (48, 32), (32, 1)), 0)
        self.assertEqual(layout.batch_stride((5,), (1, 48, 32), (7, 32, 1)), 0)
        self.assertEqual(layout.batch_stride((2, 3), (48, 32), (32, 1)), 0)
        self.assertEqual(layout.batch_stride((2, 3), (1, 1, 48, 32), (5, 5, 32, 1)), 0)
        # expand(): a dimension of full size with stride 0.
        self.assertEqual(layout.batch_stride((4,), (4, 48, 32), (0, 32, 1)), 0)

    def test_size_one_batch_dimensions_never_step(self):
        self.assertEqual(layout.batch_stride((1,), (1, 64, 48), (12345, 48, 1)), 0)
        self.assertEqual(layout.batch_stride((2, 1, 3), (2, 1, 3, 8, 8), (3 * 64, 7, 64, 8, 1)),
                         64)
        self.assertEqual(layout.batch_stride((), (64, 48), (48, 1)), 0)

    def test_not_expressible(self):
        # b (3, k, n) under a batch (2, 3): steps (0, k*n), which is no one stride.
        self.assertIsNone(layout.batch_stride((2, 3), (3, 48, 32), contiguous((3, 48, 32))))
        # Broadcast inside, stepping outside.
        self.assertIsNone(layout.batch_stride((2, 3), (2, 1, 48, 32), contiguous((2, 1, 48, 32))))
        # Batch dimensions permuted (x.transpose(0, 1) of a (3, 2, ...) array).
        self.assertIsNone(layout.batch_stride((2, 3), (2, 3, 8, 8), (64, 128, 8, 1)))
        # A gap between the outer entries.
        self.assertIsNone(layout.batch_stride((2, 3), (2, 3, 8, 8), (4 * 64, 64, 8, 1)))
        # Entries in reverse order (x[::-1]).
        self.assertIsNone(layout.batch_stride((4,), (4, 8, 8), (-64, 8, 1)))


class MatmulShapesTests(unittest.TestCase):
    def test_numpy_rules(self):
        self.assertEqual(layout.matmul_shapes((64, 48), (48, 32)), ((), 64, 32, 48))
        self.assertEqual(layout.matmul_shapes((5, 64, 48), (48, 32)), ((5,), 64, 32, 48))
        self.assertEqual(layout.matmul_shapes((64, 48), (5, 48, 32)), ((5,), 64, 32, 48))
        self.assertEqual(layout.matmul_shapes((2, 1, 64, 48), (3, 48, 32)), ((2, 3), 64, 32, 48))
        self.assertEqual(layout.matmul_shapes((0, 64, 48), (1, 48, 32)), ((0,), 64, 32, 48))

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, r"a: expected an array of 2 or more dimensions"):
            layout.matmul_shapes((48,), (48, 32))
        with self.assertRaisesRegex(ValueError, r"b: expected an array of 2 or more"):
            layout.matmul_shapes((64, 48), ())
        with self.assertRaisesRegex(ValueError, r"a.shape\[-1\] \(48\) must equal b.shape\[-2\] \(40\)"):
            layout.matmul_shapes((64, 48), (40, 32))
        with self.assertRaisesRegex(ValueError, "do not broadcast"):
            layout.matmul_shapes((2, 64, 48), (3, 48, 32))


class PlanTests(unittest.TestCase):
    """hgemm_gemm's arguments for views, and element by element, that they
    address what the views hold."""

    def check(self, a, b, out):
        """The plan for (a, b, out), after checking that for every entry and
        every (i, j, q) the library's A, B and C address a[..., i, q],
        b[..., q, j] and out[..., i, j], and that no leading dimension is
        shorter than its rows."""
        p = layout.plan(a, b, out)
        batch_shape, m, n, k = layout.matmul_shapes(a[0], b[0])
        batch = 1
        for size in batch_shape:
            batch *= size
        m_entry = n if p.swap else m  # the library's rows per entry
        folded = batch > 1 and p.batch == 1
        if folded:
            self.assertEqual(p.m, batch * m_entry)
        else:
            self.assertEqual((p.m, p.n, p.k, p.batch), ((n, m) if p.swap else (m, n)) + (k, batch))

        def entry(op, ld, stride, t, r, c):  # element (r, c) of op(X_t)
            return t * stride + (r * ld + c if op == N else c * ld + r)

        for t, index in enumerate(itertools.product(*(range(s) for s in batch_shape))):
            for i, j, q in itertools.product(range(m), range(n), range(k)):
                ia, jb = (j, i) if p.swap else (i, j)
                tl = t
                if folded:
                    tl, ia = 0, t * m_entry + ia
                a_at, b_at = offset(a, index + (i, q)), offset(b, index + (q, j))
                want_a, want_b = (b_at, a_at) if p.swap else (a_at, b_at)
                self.assertEqual(entry(p.op_a, p.lda, p.stride_a, tl, ia, q), want_a, (t, i, j, q))
                self.assertEqual(entry(p.op_b, p.ldb, p.stride_b, tl, q, jb), want_b, (t, i, j, q))
                self.assertEqual(entry(N, p.ldc, p.stride_c, tl, ia, jb),
                                 offset(out, index + (i, j)), (t, i, j))
        # Leading dimensions the library takes: rows that do not overlap.
        # (Whether C's entries overlap is the library's to say.)
        a_cols = p.k if p.op_a == N else p.m
        b_cols = p.n if p.op_b == N else p.k
        for cols, ld in ((a_cols, p.lda), (b_cols, p.ldb), (p.n, p.ldc)):
            self.assertGreaterEqual(ld, max(cols, 1))
        return p

    def test_the_four_forms(self):
        m, n, k = 64, 32, 48
        a_n, a_t = view((m, k)), tr(view((k, m)))
        b_n, b_t = view((k, n)), tr(view((n, k)))
        out = view((m, n))
        for a, b, ops, lds in ((a_n, b_t, (N, T), (48, 48)), (a_n, b_n, (N, N), (48, 32)),
                               (a_t, b_t, (T, T), (64, 48)), (a_t, b_n, (T, N), (64, 32))):
            p = layout.plan(a, b, out)
            self.assertEqual((p.op_a, p.op_b), ops)
            self.assertEqual((p.lda, p.ldb, p.ldc), lds + (32,))
            self.assertEqual((p.swap, p.m, p.n, p.k, p.batch), (False, m, n, k, 1))
            self.assertEqual((p.stride_a, p.stride_b, p.stride_c), (0, 0, 0))

    def test_padded_leading_dimensions(self):
        p = layout.plan(sliced((64, 48), 16), tr(sliced((32, 48), 8)), sliced((64, 32), 24))
        self.assertEqual((p.op_a, p.lda, p.op_b, p.ldb, p.ldc), (N, 64, T, 56, 56))

    def test_batched(self):
        p = layout.plan(view((5, 64, 48)), tr(view((5, 32, 48))), view((5, 64, 32)))
        self.assertEqual((p.batch, p.stride_a, p.stride_b, p.stride_c),
                         (5, 64 * 48, 32 * 48, 64 * 32))
        self.assertEqual((p.op_a, p.op_b), (N, T))

    def test_broadcast_a(self):
        p = layout.plan(view((64, 48)), view((5, 48, 32)), view((5, 64, 32)))
        self.assertEqual((p.batch, p.stride_a, p.stride_b, p.stride_c), (5, 0, 48 * 32, 64 * 32))

    def test_broadcast_b_folds_into_m(self):
        # x (B, S, K) @ W.T: one product of B * S rows.
        p = layout.plan(view((5, 64, 48)), tr(view((32, 48))), view((5, 64, 32)))
        self.assertEqual((p.m, p.batch, p.lda, p.ldc, p.stride_a, p.stride_c),
                         (320, 1, 48, 32, 0, 0))
        # Two batch dimensions, and b given with a batch dimension of 1.
        p = layout.plan(view((2, 3, 64, 48)), view((1, 48, 32)), view((2, 3, 64, 32)))
        self.assertEqual((p.m, p.batch), (384, 1))

    def test_decode_folds_into_m(self):
        # x (B, 1, K): the entries are the rows of one (B, K) matrix.
        p = layout.plan(view((7, 1, 4096)), tr(view((1024, 4096))), view((7, 1, 1024)))
        self.assertEqual((p.m, p.batch, p.lda, p.ldc), (7, 1, 4096, 1024))
        # Entries of x padded apart (rows of a wider array): their stride is the row stride.
        p = layout.plan(sliced((7, 1, 4096), 64), tr(view((1024, 4096))), view((7, 1, 1024)))
        self.assertEqual((p.m, p.batch, p.lda), (7, 1, 4160))

    def test_no_fold(self):
        # Entries of a with a gap between them.
        p = layout.plan(((5, 64, 48), (72 * 48, 48, 1)), view((48, 32)), view((5, 64, 32)))
        self.assertEqual((p.m, p.batch, p.stride_a), (64, 5, 72 * 48))
        # a read transposed.
        p = layout.plan(tr(view((5, 48, 64))), view((48, 32)), view((5, 64, 32)))
        self.assertEqual((p.m, p.batch, p.op_a), (64, 5, T))
        # out with a gap between entries.
        p = layout.plan(view((5, 64, 48)), view((48, 32)), ((5, 64, 32), (80 * 32, 32, 1)))
        self.assertEqual((p.m, p.batch), (64, 5))
        # Decode entries that overlap (stride below k): fine for a batch of A, not for one matrix.
        p = layout.plan(((3, 1, 48), (16, 48, 1)), view((48, 32)), view((3, 1, 32)))
        self.assertEqual((p.m, p.batch, p.stride_a), (1, 3, 16))
        # More rows than the library serves.
        p = layout.plan(view((2 ** 22, 1024, 64)), view((64, 64)), view((2 ** 22, 1024, 64)))
        self.assertEqual((p.m, p.batch), (1024, 2 ** 22))

    def test_transposed_out_swaps(self):
        # out = y.T of y (32, 64): out^T = b^T a^T, a and b trade places.
        p = layout.plan(view((64, 48)), tr(view((32, 48))), tr(view((32, 64))))
        self.assertEqual((p.swap, p.m, p.n, p.k), (True, 32, 64, 48))
        self.assertEqual((p.op_a, p.lda, p.op_b, p.ldb, p.ldc), (N, 48, T, 48, 64))
        p = layout.plan(view((64, 48)), view((48, 32)), tr(view((32, 64))))
        self.assertEqual((p.op_a, p.lda, p.op_b, p.ldb), (T, 32, T, 48))
        # A single output column (n = 1) reads as one row of m.
        p = layout.plan(view((64, 48)), view((48, 1)), view((64, 1)))
        self.assertEqual((p.swap, p.m, p.n, p.ldc), (True, 1, 64, 64))

    def test_k_zero_reads_no_operand(self):
        p = layout.plan(view((5, 64, 0)), view((0, 32)), view((5, 64, 32)))
        self.assertEqual((p.k, p.batch, p.stride_a, p.stride_b, p.stride_c),
                         (0, 5, 0, 0, 64 * 32))
        # Strides of empty operands do not matter.
        p = layout.plan(((64, 0), (3, 5)), ((0, 32), (-1, 7)), view((64, 32)))
        self.assertEqual((p.k, p.m, p.n), (0, 64, 32))

    def test_empty_products(self):
        for a, b, out in ((view((0, 64, 48)), view((48, 32)), view((0, 64, 32))),
                          (view((0, 48)), view((48, 32)), view((0, 32))),
                          (((64, 48), (1, 1)), view((48, 0)), ((64, 0), (0, 0)))):
            p = layout.plan(a, b, out)
            self.assertEqual(p.batch * p.m * p.n, 0)

    def test_every_form_addresses_its_elements(self):
        # Small ragged sizes, every combination of: a and b stored or
        # transposed, C-ordered or padded; out C-ordered, padded or
        # transposed; batches broadcast on either side, or on none.
        def operand(batch, rows, cols, form):
            shape = batch + (rows, cols)
            if form == "n":
                return view(shape)
            if form == "n-padded":
                return sliced(shape, 3)
            if form == "t":
                return tr(view(batch + (cols, rows)))
            return tr(sliced(batch + (cols, rows), 5))  # transposed, padded

        forms = ("n", "n-padded", "t", "t-padded")
        batches = (((), ()), ((2,), ()), ((), (3,)), ((2,), (2,)), ((2, 3), ()), ((2, 3), (2, 3)),
                   ((2, 1), (1, 1)), ((1,), (3,)))
        checked = 0
        for (m, n, k), (ba, bb), fa, fb, fo in itertools.product(
                ((3, 4, 5), (1, 4, 5), (3, 1, 5), (3, 4, 1), (1, 1, 1), (2, 3, 0)),
                batches, forms, forms, ("n", "n-padded", "t")):
            a, b = operand(ba, m, k, fa), operand(bb, k, n, fb)
            batch_shape = layout.matmul_shapes(a[0], b[0])[0]
            out = operand(batch_shape, m, n, fo)
            with self.subTest(m=m, n=n, k=k, batch=(ba, bb), forms=(fa, fb, fo)):
                self.check(a, b, out)
                checked += 1
        self.assertEqual(checked, 6 * len(batches) * 4 * 4 * 3)

    def test_random_views_address_their_elements(self):
        # Random permutations of batch dimensions, broadcasts and paddings:
        # each plan either addresses every element right or says why not.
        rng = random.Random(1)
        planned = refused = 0
        for _ in range(400):
            m, n, k = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)
            batch = tuple(rng.randint(1, 3) for _ in range(rng.randint(0, 2)))
            views = []
            for rows, cols in ((m, k), (k, n), (m, n)):
                if len(views) == 2:  # out: the batch of a and b
                    own = layout.matmul_shapes(views[0][0], views[1][0])[0]
                else:  # a and b: all of the batch, or its last dimensions; maybe one broadcast
                    own = batch if rng.random() < 0.7 else batch[rng.randint(0, len(batch)):]
                    if own and rng.random() < 0.3:
                        own = (1,) + own[1:]
                dims = list(own) + [rows, cols]
                order = list(range(len(dims)))
                rng.shuffle(order)  # lay the dimensions out in any order
                pad = [rng.choice((0, 0, 1)) for _ in dims]
                strides, step = [0] * len(dims), 1
                for d in reversed(order):
                    strides[d] = step
                    step *= dims[d] + pad[d]
                views.append((tuple(dims), tuple(strides)))
            a, b, out = views
            try:
                self.check(a, b, out)
                planned += 1
            except ValueError as e:
                self.assertRegex(str(e), "pass a copy")
                refused += 1
        self.assertGreater(planned, 100)
        self.assertGreater(refused, 20)

    def test_errors(self):
        a, b, out = view((64, 48)), view((48, 32)), view((64, 32))
        with self.assertRaisesRegex(ValueError, r"^a \(shape \(64, 24\), strides \(96, 2\).*"
                                                r"neither its rows nor its columns.*copy"):
            layout.plan(((64, 24), (96, 2)), view((24, 32)), out)
        with self.assertRaisesRegex(ValueError, r"^b \(shape.*neither"):
            layout.plan(a, ((48, 32), (0, 0)), out)
        with self.assertRaisesRegex(ValueError, r"^out \(shape.*neither"):
            layout.plan(a, b, ((64, 32), (64, 2)))
        with self.assertRaisesRegex(ValueError, r"^b \(shape \(3, 48, 32\).*batch dimensions do "
                                                r"not step through the batch \(2, 3\).*copy"):
            layout.plan(view((2, 3, 64, 48)), view((3, 48, 32)), view((2, 3, 64, 32)))
        with self.assertRaisesRegex(ValueError, r"out has shape \(64, 33\); a @ b has shape \(64, 32\)"):
            layout.plan(a, b, view((64, 33)))
        with self.assertRaisesRegex(ValueError, r"out has shape \(64, 32\); a @ b has shape \(2, 64, 32\)"):
            layout.plan(view((2, 64, 48)), b, out)
        with self.assertRaisesRegex(ValueError, "a: 1 strides for 2 dimensions"):
            layout.plan(((64, 48), (1,)), b, out)

    def test_overlapping_out_entries_are_left_to_the_library(self):
        # out.expand(5, 64, 32): every entry the same matrix. Expressible
        # (stride 0), and the library refuses it (C's entries overlap).
        p = layout.plan(view((5, 64, 48)), view((5, 48, 32)), ((5, 64, 32), (0, 32, 1)))
        self.assertEqual((p.batch, p.stride_c), (5, 0))


# --- hgemm.matmul: the call ------------------------------------------------------

def mm_operands(a_shape=(64, 48), b_shape=(48, 32), out_shape=(64, 32), **out_kw):
    """C-ordered fp16 FakeArrays for hgemm.matmul."""
    return (FakeArray(a_shape, A_PTR), FakeArray(b_shape, B_PTR),
            FakeArray(out_shape, C_PTR, **out_kw))


def byte_strides(strides):
    return tuple(2 * s for s in strides)


class MatmulArgumentTests(unittest.TestCase):
    """What hgemm.matmul passes to hgemm_gemm, read from a stand-in library."""

    def call(self, a, b, out, **kw):
        lib = RecordingLibrary()
        with mock.patch.object(hgemm, "_load", return_value=lib), no_device_check():
            self.assertIs(hgemm.matmul(a, b, out, **kw), out)
        self.assertEqual(len(lib.calls), 1)
        return lib.calls[0]

    def test_nn(self):
        call = self.call(*mm_operands(), alpha=0.5, beta=-2.0)
        self.assertEqual(call, {
            "kernel": 0, "dtype": hgemm.DTYPE_F16, "op_a": N, "op_b": N, "m": 64, "n": 32, "k": 48,
            "alpha": 0.5, "A": A_PTR, "lda": 48, "stride_a": 0, "B": B_PTR, "ldb": 32, "stride_b": 0,
            "beta": -2.0, "C": C_PTR, "ldc": 32, "stride_c": 0, "batch": 1, "options": None,
            "stream": 0})

    def test_transposed_views(self):
        # a = x.T for x (48, 64); b = w.T for w (32, 48): TT.
        a = FakeArray((64, 48), A_PTR, strides=byte_strides((1, 64)))
        b = FakeArray((48, 32), B_PTR, strides=byte_strides((1, 48)))
        call = self.call(a, b, FakeArray((64, 32), C_PTR))
        self.assertEqual((call["op_a"], call["lda"], call["op_b"], call["ldb"]), (T, 64, T, 48))

    def test_batch(self):
        call = self.call(*mm_operands((4, 64, 48), (4, 48, 32), (4, 64, 32)))
        self.assertEqual((call["batch"], call["stride_a"], call["stride_b"], call["stride_c"]),
                         (4, 64 * 48, 48 * 32, 64 * 32))

    def test_batch_folded_into_m(self):
        call = self.call(*mm_operands((4, 64, 48), (48, 32), (4, 64, 32)))
        self.assertEqual((call["m"], call["batch"], call["stride_a"]), (256, 1, 0))

    def test_transposed_out_passes_b_as_a(self):
        out = FakeArray((64, 32), C_PTR, strides=byte_strides((1, 64)))
        call = self.call(FakeArray((64, 48), A_PTR), FakeArray((48, 32), B_PTR), out)
        self.assertEqual((call["A"], call["B"], call["C"]), (B_PTR, A_PTR, C_PTR))
        self.assertEqual((call["m"], call["n"], call["op_a"], call["op_b"], call["ldc"]),
                         (32, 64, T, T, 64))

    def test_options(self):
        ws = FakeArray((1 << 20,), 0x7F3000000000, typestr="|u1")
        call = self.call(*mm_operands(), workspace=ws, sm_count_target=16)
        self.assertEqual(call["options"], (0x7F3000000000, 1 << 20, 16))
        call = self.call(*mm_operands(), sm_count_target=8)
        self.assertEqual(call["options"], (None, 0, 8))
        ws = FakeArray((1024, 8), 0x7F3000000000, typestr="<f4")
        self.assertEqual(self.call(*mm_operands(), workspace=ws)["options"],
                         (0x7F3000000000, 1024 * 8 * 4, 0))

    def test_kernel_and_stream(self):
        for i, name in enumerate(hgemm.kernels()):
            self.assertEqual(self.call(*mm_operands(), kernel=name)["kernel"], i)
        self.assertEqual(self.call(*mm_operands(stream=2))["stream"], 2)
        self.assertEqual(self.call(*mm_operands(stream=2), stream=0x42)["stream"], 0x42)

    def test_empty_product_reaches_the_library(self):
        call = self.call(*mm_operands((0, 64, 48), (48, 32), (0, 64, 32)))
        self.assertEqual(call["batch"] * call["m"], 0)


class CRangeTests(unittest.TestCase):
    """ints that do not fit the C type the library takes (ctypes would drop
    their high bits without a word), and arrays whose shape and strides
    disagree: a clear ValueError before the library is called."""

    def refused(self, regex, function, *args, **kw):
        lib = RecordingLibrary()
        with mock.patch.object(hgemm, "_load", return_value=lib), no_device_check():
            with self.assertRaisesRegex(ValueError, regex):
                function(*args, **kw)
        self.assertEqual(lib.calls, [])

    def accepted(self, function, *args, **kw):
        lib = RecordingLibrary()
        with mock.patch.object(hgemm, "_load", return_value=lib), no_device_check():
            function(*args, **kw)
        self.assertEqual(len(lib.calls), 1)
        return lib.calls[0]

    def test_kernel_id(self):
        for kernel in (2**32 + 9, 2**31, -2**31 - 1, 2**64):
            self.refused(r"kernel=%d does not fit the C type int" % kernel, hgemm.nt, *operands(), kernel=kernel)
            self.refused(r"kernel=%d does not fit" % kernel, hgemm.matmul, *mm_operands(), kernel=kernel)
        # in range, an unknown id is the library's to refuse
        self.assertEqual(self.accepted(hgemm.nt, *operands(), kernel=2**31 - 1)["kernel"], 2**31 - 1)

    def test_sm_count_target(self):
        for target in (2**32, 2**31, -2**31 - 1):
            self.refused(r"sm_count_target=%d does not fit the C type int" % target, hgemm.matmul,
                         *mm_operands(), sm_count_target=target)
        self.assertEqual(self.accepted(hgemm.matmul, *mm_operands(), sm_count_target=2**31 - 1)["options"],
                         (None, 0, 2**31 - 1))

    def test_stream(self):
        class TorchLikeStream:
            cuda_stream = 2**64

        for stream in (2**64 + 7, -1, TorchLikeStream()):
            self.refused(r"stream=.* does not fit the C type cudaStream_t", hgemm.nt, *operands(), stream=stream)
            self.refused(r"stream=.* does not fit the C type cudaStream_t", hgemm.matmul, *mm_operands(),
                         stream=stream)
        # the arrays' own stream, from the interface
        self.refused(r"stream=.* does not fit", hgemm.nt, *operands(stream=2**64 + 7))
        self.refused(r"stream=.* does not fit", hgemm.matmul, *mm_operands(stream=2**64 + 7))
        self.assertEqual(self.accepted(hgemm.nt, *operands(), stream=2**64 - 1)["stream"], 2**64 - 1)

    def test_pointers_and_sizes(self):
        a, b, out = operands()
        self.refused(r"a pointer=.* does not fit", hgemm.nt, FakeArray((64, 48), 2**64 + A_PTR), b, out)
        self.refused(r"out pointer=.* does not fit", hgemm.matmul, *mm_operands()[:2],
                     FakeArray((64, 32), -C_PTR))
        self.refused(r"a shape=.* does not fit the C type int64_t", hgemm.nt, FakeArray((2**63, 48), A_PTR), b, out)
        self.refused(r"b strides=.* does not fit", hgemm.matmul, mm_operands()[0],
                     FakeArray((48, 32), B_PTR, strides=(2**64 + 64, 2)), mm_operands()[2])
        # batch dimensions that each fit, whose product does not
        self.refused(r"batch=.* does not fit the C type int64_t", hgemm.matmul,
                     FakeArray((2**32, 2**32, 64, 48), A_PTR), FakeArray((48, 32), B_PTR),
                     FakeArray((2**32, 2**32, 64, 32), C_PTR))
        ws = FakeArray((1 << 20,), 0x7F3000000000, typestr="|u1")
        ws.__cuda_array_interface__["data"] = (2**64, False)
        self.refused(r"workspace pointer=.* does not fit", hgemm.matmul, *mm_operands(), workspace=ws)

    def test_strides_of_another_rank(self):
        a, b, out = operands()
        self.refused(r"^a: 1 strides for a 2-D array", hgemm.nt, FakeArray((64, 48), A_PTR, strides=(96,)), b, out)
        self.refused(r"^out: 3 strides for a 2-D array", hgemm.nt, a, b,
                     FakeArray((64, 32), C_PTR, strides=(64, 2, 2)))
        self.refused(r"^a: 1 strides for 2 dimensions", hgemm.matmul,
                     FakeArray((64, 48), A_PTR, strides=(96,)), *mm_operands()[1:])
        self.refused(r"^out: 0 strides for 2 dimensions", hgemm.matmul, *mm_operands()[:2],
                     FakeArray((64, 32), C_PTR, strides=()))
        ws = FakeArray((1024, 8), 0x7F3000000000, typestr="<f4", strides=(32,))
        self.refused(r"^workspace: 1 strides for 2 dimensions", hgemm.matmul, *mm_operands(), workspace=ws)

    def test_zero_dimensions(self):
        a, b, out = operands()
        self.refused(r"^a: expected a 2-D array, got 0 dimensions", hgemm.nt, FakeArray((), A_PTR), b, out)
        self.refused(r"^a: expected a 2-D array, got 0 dimensions", hgemm.nt,
                     FakeArray((), A_PTR, strides=()), b, out)
        self.refused(r"^a: expected an array of 2 or more dimensions", hgemm.matmul, FakeArray((), A_PTR),
                     *mm_operands()[1:])
        self.refused(r"^out has shape \(\)", hgemm.matmul, *mm_operands()[:2], FakeArray((), C_PTR))

    def test_malformed_interface(self):
        a, b, out = operands()
        bad = FakeArray((64, 48), A_PTR)
        bad.__cuda_array_interface__["shape"] = (64.5, 48)
        self.refused(r"^a: shape must be ints", hgemm.nt, bad, b, out)
        ws = FakeArray((16,), 0x7F3000000000, typestr="|u1")
        ws.__cuda_array_interface__["data"] = ()
        self.refused(r"^workspace: __cuda_array_interface__\['data'\] must be", hgemm.matmul, *mm_operands(),
                     workspace=ws)


class MatmulValidationTests(unittest.TestCase):
    """Python-side checks of hgemm.matmul: raised before the library is called."""

    def test_not_an_array(self):
        _, b, out = mm_operands()
        with self.assertRaisesRegex(TypeError, "a: expected a CUDA array"):
            hgemm.matmul([[1.0]], b, out)

    def test_types(self):
        a, b, out = mm_operands()
        with self.assertRaisesRegex(TypeError, r"^b: expected float16 \(typestr '<f2'\), got "
                                               r"typestr '<f4'"):
            hgemm.matmul(a, FakeArray((48, 32), B_PTR, typestr="<f4"), out)
        # bfloat16 has no typestr of its own (torch's interface says '<f2' for it).
        with self.assertRaisesRegex(TypeError, "bfloat16 comes as torch tensors"):
            hgemm.matmul(FakeArray((64, 48), A_PTR, typestr="<V2"), b, out)

    def test_shapes(self):
        a, b, out = mm_operands()
        with self.assertRaisesRegex(ValueError, "a: expected an array of 2 or more dimensions"):
            hgemm.matmul(FakeArray((48,), A_PTR), b, out)
        with self.assertRaisesRegex(ValueError, "must equal b.shape"):
            hgemm.matmul(a, FakeArray((40, 32), B_PTR), out)
        with self.assertRaisesRegex(ValueError, "out has shape"):
            hgemm.matmul(a, b, FakeArray((64, 33), C_PTR))
        with self.assertRaisesRegex(ValueError, "do not broadcast"):
            hgemm.matmul(FakeArray((2, 64, 48), A_PTR), FakeArray((3, 48, 32), B_PTR), out)

    def test_copy_needed(self):
        a, b, out = mm_operands()
        with self.assertRaisesRegex(ValueError, "^a .*neither its rows nor its columns.*copy"):
            hgemm.matmul(FakeArray((64, 24), A_PTR, strides=(192, 4)), FakeArray((24, 32), B_PTR), out)
        with self.assertRaisesRegex(ValueError, "^b .*batch dimensions do not step.*copy"):
            hgemm.matmul(FakeArray((2, 3, 64, 48), A_PTR), FakeArray((3, 48, 32), B_PTR),
                         FakeArray((2, 3, 64, 32), C_PTR))

    def test_odd_byte_strides(self):
        a, b, out = mm_operands()
        with self.assertRaisesRegex(ValueError, "not whole numbers of 2-byte elements"):
            hgemm.matmul(FakeArray((64, 48), A_PTR, strides=(97, 2)), b, out)

    def test_out(self):
        a, b, _ = mm_operands()
        with self.assertRaisesRegex(ValueError, "out is read-only"):
            hgemm.matmul(a, b, FakeArray((64, 32), C_PTR, readonly=True))
        with self.assertRaisesRegex(TypeError, "pass out= for FakeArray"):
            hgemm.matmul(a, b)
        with self.assertRaisesRegex(ValueError, "beta"):
            hgemm.matmul(a, b, beta=1.0)

    def test_arguments_of_wrong_type(self):
        a, b, out = mm_operands()
        with self.assertRaisesRegex(ValueError, "unknown kernel 'v99'"):
            hgemm.matmul(a, b, out, kernel="v99")
        with self.assertRaisesRegex(TypeError, "stream must be"):
            hgemm.matmul(a, b, out, stream="default")
        with self.assertRaisesRegex(TypeError, "sm_count_target must be an int"):
            hgemm.matmul(a, b, out, sm_count_target=1.5)
        with self.assertRaisesRegex(TypeError, "workspace: expected a CUDA array"):
            hgemm.matmul(a, b, out, workspace=bytearray(16))
        ws = FakeArray((64, 64), 0x7F3000000000, typestr="|u1", strides=(128, 1))
        with self.assertRaisesRegex(ValueError, "workspace: expected a contiguous array"):
            hgemm.matmul(a, b, out, workspace=ws)


class MatmulLibraryTests(unittest.TestCase):
    """hgemm.matmul over the real library, which checks every argument before
    its first CUDA call: its statuses come back as HgemmError."""

    def status(self, a, b, out, **kw):
        with no_device_check(), self.assertRaises(hgemm.HgemmError) as cm:
            hgemm.matmul(a, b, out, **kw)
        self.assertIn("hgemm_gemm failed", str(cm.exception))
        return cm.exception.status

    def test_valid_call_reaches_the_library(self):
        a, b, out = mm_operands(b_shape=(48, 32))
        b = FakeArray((48, 32), B_PTR, strides=byte_strides((1, 48)))  # NT: every kernel's form
        if hgemm._device_count() == 0:
            with self.assertRaises(hgemm.HgemmError) as cm:
                hgemm.matmul(a, b, out)
            self.assertEqual(cm.exception.status, hgemm.ERROR_NO_DEVICE)
            self.assertIn("no CUDA device or driver", str(cm.exception))
        else:
            with self.assertRaisesRegex(ValueError, "device memory"):
                hgemm.matmul(a, b, out)

    def test_every_form_passes_the_checks(self):
        # Valid requests in each form (NN, TN, NT, TT) and batched: AUTO serves
        # them all, so the library answers with the device it lacks. A
        # teaching kernel serves fp16 NT only: NOT_SUPPORTED, also decided
        # before any CUDA call.
        if hgemm._device_count():
            self.skipTest("a GPU is here: the device check refuses the fake pointers first")
        for sa, sb in (((48, 1), (32, 1)), ((1, 64), (32, 1)), ((48, 1), (1, 48)), ((1, 64), (1, 48))):
            a = FakeArray((64, 48), A_PTR, strides=byte_strides(sa))
            b = FakeArray((48, 32), B_PTR, strides=byte_strides(sb))
            out = FakeArray((64, 32), C_PTR)
            self.assertEqual(self.status(a, b, out), hgemm.ERROR_NO_DEVICE, (sa, sb))
            nt_form = sa == (48, 1) and sb == (1, 48)
            self.assertEqual(self.status(a, b, out, kernel="v6"),
                             hgemm.ERROR_NO_DEVICE if nt_form else hgemm.ERROR_NOT_SUPPORTED, (sa, sb))
        a, b, out = mm_operands((3, 64, 48), (3, 48, 32), (3, 64, 32))
        self.assertEqual(self.status(a, b, out), hgemm.ERROR_NO_DEVICE)

    def test_misaligned(self):
        # k = 12: a's row stride is no multiple of 8 elements.
        self.assertEqual(self.status(*mm_operands((64, 12), (12, 32))), hgemm.ERROR_MISALIGNED)
        a = FakeArray((64, 48), A_PTR + 8)
        self.assertEqual(self.status(a, *mm_operands()[1:]), hgemm.ERROR_MISALIGNED)
        # Entries of a 8 elements apart would do; 4 apart are misaligned.
        a = FakeArray((2, 1, 48), A_PTR, strides=byte_strides((4, 48, 1)))
        self.assertEqual(self.status(a, FakeArray((2, 48, 32), B_PTR), FakeArray((2, 1, 32), C_PTR)),
                         hgemm.ERROR_MISALIGNED)

    def test_overlapping_out_entries(self):
        out = FakeArray((5, 64, 32), C_PTR, strides=byte_strides((0, 32, 1)))
        self.assertEqual(self.status(FakeArray((5, 64, 48), A_PTR), FakeArray((5, 48, 32), B_PTR), out),
                         hgemm.ERROR_INVALID_VALUE)

    def test_out_overlaps_b(self):
        out = FakeArray((64, 32), B_PTR + 64)
        self.assertEqual(self.status(FakeArray((64, 48), A_PTR), FakeArray((48, 32), B_PTR), out),
                         hgemm.ERROR_INVALID_VALUE)

    def test_unknown_kernel_and_negative_sm_target(self):
        self.assertEqual(self.status(*mm_operands(), kernel=len(hgemm.kernels())),
                         hgemm.ERROR_INVALID_VALUE)
        self.assertEqual(self.status(*mm_operands(), sm_count_target=-1), hgemm.ERROR_INVALID_VALUE)

    def test_empty_product_succeeds(self):
        a, b, out = mm_operands((0, 64, 48), (48, 32), (0, 64, 32))
        self.assertIs(hgemm.matmul(a, b, out), out)

    def test_device_check(self):
        lib = RecordingLibrary()
        with mock.patch.object(hgemm, "_load", return_value=lib), \
                mock.patch.object(hgemm, "_runtime", return_value=FakeRuntime(devices={B_PTR: 1})):
            with self.assertRaisesRegex(ValueError, "different devices: a on cuda:0, b on cuda:1"):
                hgemm.matmul(*mm_operands())
        runtime = FakeRuntime(devices={A_PTR: 1, B_PTR: 1, C_PTR: 1}, current=0)
        with mock.patch.object(hgemm, "_load", return_value=lib), \
                mock.patch.object(hgemm, "_runtime", return_value=runtime):
            hgemm.matmul(*mm_operands())
        self.assertEqual(runtime.set_calls, [1, 0])
        with mock.patch.object(hgemm, "_load", return_value=lib), \
                mock.patch.object(hgemm, "_runtime", return_value=FakeRuntime(memory_type=0)):
            with self.assertRaisesRegex(ValueError, "is not device memory"):
                hgemm.matmul(*mm_operands())


# --- hgemm.matmul on torch tensors, over a stand-in torch ------------------------

class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


class FakeDevice:
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index

    def __repr__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)


def fake_torch(current_device=0):
    """Just enough of torch for hgemm.matmul's torch path: tensors with
    shape, stride(), data_ptr(), dtype and device; the current device and
    stream; empty_strided. Records device switches and allocations."""
    torch = types.ModuleType("torch")
    torch.float16, torch.bfloat16, torch.float32 = (FakeDtype("float16"), FakeDtype("bfloat16"),
                                                    FakeDtype("float32"))
    torch.strided, torch.sparse_coo = "torch.strided", "torch.sparse_coo"
    torch.switches, torch.allocations = [], []

    class Tensor:
        def __init__(self, shape, ptr, dtype=torch.float16, strides=None, device=0,
                     layout=torch.strided):
            self.shape, self._strides, self._ptr = tuple(shape), strides, ptr
            self.dtype, self.layout = dtype, layout
            self.device = FakeDevice("cpu") if device is None else FakeDevice("cuda", device)
            self.is_cuda = device is not None

        def stride(self):
            return self._strides or contiguous(self.shape)

        def data_ptr(self):
            return self._ptr

    class Stream:
        def __init__(self, device):
            self.cuda_stream = 0x5000 + device

    class DeviceContext:
        def __init__(self, device):
            self.device = device

        def __enter__(self):
            torch.switches.append(self.device)

        def __exit__(self, *exc):
            torch.switches.append("back")

    def empty_strided(shape, strides, dtype, device):
        torch.allocations.append((tuple(shape), tuple(strides), dtype, device))
        return Tensor(shape, C_PTR, dtype, tuple(strides), device.index)

    torch.Tensor = Tensor
    torch.empty_strided = empty_strided
    torch.cuda = types.SimpleNamespace(current_device=lambda: current_device, current_stream=Stream,
                                       device=DeviceContext)
    return torch


class MatmulTorchPathTests(unittest.TestCase):
    """torch tensors are read through torch (dtype, strides, device, stream),
    never through __cuda_array_interface__ or the CUDA runtime."""

    def setUp(self):
        self.torch = fake_torch()
        patches = (mock.patch.dict(sys.modules, {"torch": self.torch}),
                   mock.patch.object(hgemm, "_runtime", side_effect=AssertionError("runtime asked")))
        for p in patches:
            p.start()
            self.addCleanup(p.stop)
        self.lib = RecordingLibrary()
        p = mock.patch.object(hgemm, "_load", return_value=self.lib)
        p.start()
        self.addCleanup(p.stop)

    def tensor(self, shape, ptr, **kw):
        return self.torch.Tensor(shape, ptr, **kw)

    def test_bfloat16_transposed_batched(self):
        torch = self.torch
        a = self.tensor((3, 64, 48), A_PTR, dtype=torch.bfloat16)
        b = self.tensor((3, 48, 32), B_PTR, dtype=torch.bfloat16, strides=(48 * 32, 1, 48))  # .mT
        out = self.tensor((3, 64, 32), C_PTR, dtype=torch.bfloat16)
        self.assertIs(hgemm.matmul(a, b, out), out)
        call = self.lib.calls[0]
        self.assertEqual((call["dtype"], call["op_a"], call["op_b"], call["batch"], call["ldb"]),
                         (hgemm.DTYPE_BF16, N, T, 3, 48))
        self.assertEqual(call["stream"], 0x5000)  # torch's current stream of the tensors' device
        self.assertEqual(torch.switches, [])

    def test_out_none_pads_rows(self):
        # n = 100: rows of 104 elements, a (5, 64, 100) view of them.
        torch = self.torch
        a = self.tensor((5, 64, 48), A_PTR, dtype=torch.bfloat16)
        b = self.tensor((48, 100), B_PTR, dtype=torch.bfloat16, strides=(1, 48))
        out = hgemm.matmul(a, b)
        self.assertEqual(torch.allocations[0][:3], ((5, 64, 100), (64 * 104, 104, 1), torch.bfloat16))
        self.assertEqual(out.stride(), (64 * 104, 104, 1))
        call = self.lib.calls[0]
        self.assertEqual((call["m"], call["batch"], call["ldc"]), (320, 1, 104))

    def test_other_device_is_made_current(self):
        a, b, out = (self.tensor((64, 48), A_PTR, device=1), self.tensor((48, 32), B_PTR, device=1),
                     self.tensor((64, 32), C_PTR, device=1))
        hgemm.matmul(a, b, out)
        self.assertEqual(self.torch.switches, [1, "back"])
        self.assertEqual(self.lib.calls[0]["stream"], 0x5001)

    def test_refusals(self):
        torch = self.torch
        a, b = self.tensor((64, 48), A_PTR), self.tensor((48, 32), B_PTR)
        with self.assertRaisesRegex(TypeError, "a: expected a CUDA tensor, got a tensor on cpu"):
            hgemm.matmul(self.tensor((64, 48), A_PTR, device=None), b)
        with self.assertRaisesRegex(TypeError, "b: expected float16 or bfloat16, got torch.float32"):
            hgemm.matmul(a, self.tensor((48, 32), B_PTR, dtype=torch.float32))
        with self.assertRaisesRegex(TypeError, "a is float16 and b is bfloat16"):
            hgemm.matmul(a, self.tensor((48, 32), B_PTR, dtype=torch.bfloat16))
        with self.assertRaisesRegex(TypeError, "out is bfloat16"):
            hgemm.matmul(a, b, self.tensor((64, 32), C_PTR, dtype=torch.bfloat16))
        with self.assertRaisesRegex(TypeError, "strided"):
            hgemm.matmul(self.tensor((64, 48), A_PTR, layout=torch.sparse_coo), b)
        with self.assertRaisesRegex(ValueError, "different devices: a on cuda:0, b on cuda:1"):
            hgemm.matmul(a, self.tensor((48, 32), B_PTR, device=1))
        self.assertEqual(self.lib.calls, [])

    def test_nt_refuses_bfloat16_tensors(self):
        # torch's __cuda_array_interface__ says '<f2' for bfloat16: nt asks torch.
        a = self.tensor((64, 48), A_PTR, dtype=self.torch.bfloat16)
        with self.assertRaisesRegex(TypeError, "a: expected fp16, got torch.bfloat16"):
            hgemm.nt(a, self.tensor((32, 48), B_PTR))


class TorchOpFakeTests(unittest.TestCase):
    """The fake (meta) side of torch.ops.hgemm.matmul: what torch.compile
    sees. Runs where torch is installed; no GPU needed."""

    @classmethod
    def setUpClass(cls):
        try:
            import torch
        except ImportError:
            raise unittest.SkipTest("torch is not installed")
        if hgemm._torch.matmul_op is None:
            raise unittest.SkipTest("this torch has no torch.library.custom_op")
        cls.torch = torch

    def meta(self, *shape, dtype=None):
        return self.torch.empty(*shape, device="meta", dtype=dtype or self.torch.float16)

    def test_result_shape_and_strides(self):
        torch = self.torch
        a, w = self.meta(5, 64, 48, dtype=torch.bfloat16), self.meta(100, 48, dtype=torch.bfloat16)
        out = torch.ops.hgemm.matmul(a, w.t())
        self.assertEqual((tuple(out.shape), out.stride(), out.dtype, out.device.type),
                         ((5, 64, 100), (64 * 104, 104, 1), torch.bfloat16, "meta"))
        out = torch.ops.hgemm.matmul(self.meta(2, 1, 64, 48), self.meta(3, 48, 32), 2.0, "auto")
        self.assertEqual((tuple(out.shape), out.stride()), ((2, 3, 64, 32), contiguous((2, 3, 64, 32))))

    def test_errors_at_trace_time(self):
        torch = self.torch
        with self.assertRaisesRegex(Exception, "must equal"):
            torch.ops.hgemm.matmul(self.meta(64, 48), self.meta(40, 32))
        with self.assertRaisesRegex(Exception, "same type"):
            torch.ops.hgemm.matmul(self.meta(64, 48), self.meta(48, 32, dtype=torch.bfloat16))
        with self.assertRaisesRegex(Exception, "out has shape"):
            torch.ops.hgemm.matmul_out(self.meta(64, 48), self.meta(48, 32), self.meta(64, 33))

    def test_symbolic_trace(self):
        # make_fx with symbolic shapes: the fake op under dynamic sizes.
        torch = self.torch
        from torch.fx.experimental.proxy_tensor import make_fx

        def f(x, w):
            return torch.ops.hgemm.matmul(x, w.t()) * 2

        gm = make_fx(f, tracing_mode="symbolic")(torch.empty(3, 64, 48, dtype=torch.float16),
                                                 torch.empty(96, 48, dtype=torch.float16))
        self.assertIn("hgemm.matmul", gm.code)

    def test_no_argument_is_named_kernel(self):
        # Inductor's fallback for an op takes the op's arguments by name
        # beside its own parameter `kernel`: an argument of that name breaks it.
        for op in (self.torch.ops.hgemm.nt, self.torch.ops.hgemm.matmul,
                   self.torch.ops.hgemm.matmul_out):
            names = [arg.name for arg in op.default._schema.arguments]
            self.assertIn("kernel_name", names)
            self.assertNotIn("kernel", names)

    def test_compile_fullgraph_reaches_the_op(self):
        # torch.compile(fullgraph=True) traces through both ops (no graph
        # break), with static and dynamic shapes, through aot_eager and
        # inductor; run on CPU tensors, the compiled graph reaches the op,
        # which refuses them. The GPU tests run the same on the GPU.
        torch = self.torch

        def f(x, w, bias):
            return torch.ops.hgemm.matmul(x, w.t(), 2.0) * 0.25 + bias

        def g(x, w, out):
            torch.ops.hgemm.matmul_out(x, w.t(), out, 1.0, 1.0, "auto")
            return out.sum()

        x, w = torch.randn(2, 16, 48).half(), torch.randn(100, 48).half()
        for backend, dynamic in itertools.product(("aot_eager", "inductor"), (False, True)):
            torch._dynamo.reset()
            with self.assertRaisesRegex(TypeError, "a: expected a CUDA tensor"):
                torch.compile(f, backend=backend, fullgraph=True, dynamic=dynamic)(
                    x, w, torch.randn(100).half())
        torch._dynamo.reset()
        with self.assertRaisesRegex(TypeError, "a: expected a CUDA tensor"):
            torch.compile(g, backend="aot_eager", fullgraph=True)(x, w, torch.zeros(2, 16, 100).half())


class QuantizeFP8Tests(unittest.TestCase):
    """hgemm.functional.quantize_fp8 on CPU tensors: each block's values
    within fp8's rounding of the original, and each scale tensor in the
    layout hgemm_gemm_fp8 reads (include/hgemm.h: A's block (i, q) at
    scale_a[q * m + i], B's (p, q) at scale_b[p * kb + q]) and
    torch._scaled_mm accepts (its shapes and strides). Runs where torch is
    installed; no GPU needed."""

    @classmethod
    def setUpClass(cls):
        try:
            import torch
            import hgemm.functional
        except ImportError:
            raise unittest.SkipTest("torch is not installed")
        cls.torch, cls.HF = torch, hgemm.functional

    def dequantized(self, q, scale, block):
        torch = self.torch
        rows, cols = q.shape
        if block is None:
            s = scale.double().expand(rows, cols)
        else:
            br, bc = block
            s = scale.double().repeat_interleave(br, dim=0)[:rows].repeat_interleave(bc, dim=1)[:, :cols]
        return q.double() * s

    def test_blocks_and_layouts(self):
        torch = self.torch
        gen = torch.Generator().manual_seed(7)
        for rows, cols in ((300, 1000), (1, 4096), (129, 200)):
            x = torch.randn(rows, cols, generator=gen, dtype=torch.float64) * torch.rand(rows, 1, generator=gen,
                                                                                         dtype=torch.float64)
            x = x.to(torch.bfloat16)
            kb, rb = -(-cols // 128), -(-rows // 128)
            for block, shape, strides in ((None, (), ()), ((1, 128), (rows, kb), (1, rows)),
                                          ((128, 128), (rb, kb), (kb, 1)), ((1, cols), (rows, 1), (1, 1))):
                for dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
                    what = "%dx%d block %s %s" % (rows, cols, block, dtype)
                    q, s = self.HF.quantize_fp8(x, block, dtype)
                    self.assertEqual(q.dtype, dtype, what)
                    self.assertEqual(tuple(q.shape), (rows, cols), what)
                    self.assertEqual(s.dtype, torch.float32, what)
                    self.assertEqual(tuple(s.shape), shape, what)
                    if rows > 1 and shape:
                        self.assertEqual(tuple(s.stride()), strides, what)
                    # each block's largest magnitude lands on the type's largest value
                    top = torch.finfo(dtype).max
                    self.assertLessEqual(float(q.float().abs().max()), top, what)
                    full = block if block is not None else (rows, cols)
                    br, bc = (min(full[0], rows), full[1])
                    deq = self.dequantized(q, s, None if block is None else (br, bc))
                    # the rounding: 2^-(mantissa bits + 1) of each value, plus half the
                    # smallest subnormal step of its block's scale
                    mant = 3 if dtype == torch.float8_e4m3fn else 2
                    sub = 2.0 ** (-9 if dtype == torch.float8_e4m3fn else -16)
                    sc = s.double() if block is None else s.double().repeat_interleave(br, dim=0)[:rows]\
                        .repeat_interleave(bc, dim=1)[:, :cols]
                    bound = x.double().abs() * 2.0 ** -(mant + 1) + sc * sub
                    self.assertTrue(bool(((deq - x.double()).abs() <= bound * 1.0001).all()), what)
            # the storage orders hgemm_gemm_fp8 documents
            q, sa = self.HF.quantize_fp8(x, (1, 128))
            flat = torch.as_strided(sa, (rows * kb,), (1,))
            for i, qq in ((0, 0), (rows - 1, kb - 1), (rows // 2, kb // 2)):
                self.assertEqual(float(flat[qq * rows + i]), float(sa[i, qq]))
            q, sw = self.HF.quantize_fp8(x, (128, 128))
            flat = sw.reshape(-1)
            for p_, qq in ((0, 0), (rb - 1, kb - 1)):
                self.assertEqual(float(flat[p_ * kb + qq]), float(sw[p_, qq]))
            # what torch._scaled_mm's blockwise mode takes for B is the transposed view
            self.assertEqual(tuple(sw.t().stride()), (1, kb))


class NativeScaledMMFakeTests(unittest.TestCase):
    """torch.ops.hgemm.scaled_mm without a GPU: its meta side (what
    torch.compile sees: shape, rows padded to 8, out_dtype), its type
    errors, and host tensors refused by name, through a compiled graph too;
    grouped_scaled_mm's meta side and errors; grouped_mm's refusal of host
    tensors. Runs where torch is installed and
    hgemm's native operators are built."""

    @classmethod
    def setUpClass(cls):
        try:
            import torch
            import hgemm.functional
        except ImportError:
            raise unittest.SkipTest("torch is not installed")
        path, why = hgemm.native_ops()
        if path is None:
            raise unittest.SkipTest("hgemm's native torch operators are not built: %s" % why)
        cls.torch, cls.HF = torch, hgemm.functional

    def test_meta_and_errors(self):
        torch = self.torch
        e4 = torch.float8_e4m3fn
        a = torch.empty(300, 512, device="meta", dtype=e4)
        b = torch.empty(260, 512, device="meta", dtype=e4).t()
        one = torch.empty((), device="meta")
        out = torch.ops.hgemm.scaled_mm(a, b, one, one)
        self.assertEqual((tuple(out.shape), tuple(out.stride()), out.dtype), ((300, 260), (264, 1), torch.bfloat16))
        self.assertEqual(torch.ops.hgemm.scaled_mm(a, b, one, one, out_dtype=torch.float32).dtype, torch.float32)
        with self.assertRaisesRegex(TypeError, "a: expected float8_e4m3fn or float8_e5m2"):
            torch.ops.hgemm.scaled_mm(torch.empty(300, 512, device="meta", dtype=torch.bfloat16), b, one, one)
        with self.assertRaisesRegex(TypeError, "out_dtype"):
            torch.ops.hgemm.scaled_mm(a, b, one, one, out_dtype=e4)
        with self.assertRaisesRegex(ValueError, "expected a \\(m, k\\) and b \\(k, n\\)"):
            torch.ops.hgemm.scaled_mm(a, b.t(), one, one)
        q, s = self.HF.quantize_fp8(torch.randn(64, 256), (1, 128))
        w, sw = self.HF.quantize_fp8(torch.randn(128, 256), (128, 128))
        with self.assertRaisesRegex(TypeError, "a: expected a CUDA tensor"):
            self.HF.scaled_mm(q, w.t(), s, sw.t())
        torch._dynamo.reset()
        f = torch.compile(lambda a, b, sa, sb: torch.ops.hgemm.scaled_mm(a, b, sa, sb) * 2, backend="aot_eager",
                          fullgraph=True)
        with self.assertRaisesRegex(TypeError, "a: expected a CUDA tensor"):
            f(q, w.t(), s, sw.t())

    def test_grouped_scaled_mm_meta_and_errors(self):
        torch = self.torch
        e4 = torch.float8_e4m3fn
        a = torch.empty(300, 512, device="meta", dtype=e4)
        b = torch.empty(4, 260, 512, device="meta", dtype=e4).transpose(1, 2)
        offs = torch.empty(4, device="meta", dtype=torch.int32)
        sa, sb = torch.empty(300, device="meta"), torch.empty(4, 260, device="meta")
        out = torch.ops.hgemm.grouped_scaled_mm(a, b, sa, sb, offs)
        self.assertEqual((tuple(out.shape), tuple(out.stride()), out.dtype), ((300, 260), (264, 1), torch.bfloat16))
        out = torch.ops.hgemm.grouped_scaled_mm(a, b, sa, sb, offs, out_dtype=torch.float32)
        self.assertEqual(out.dtype, torch.float32)
        with self.assertRaisesRegex(TypeError, "expected float8_e4m3fn a and b"):
            torch.ops.hgemm.grouped_scaled_mm(a.to(torch.float8_e5m2), b, sa, sb, offs)
        with self.assertRaisesRegex(TypeError, "offs: expected int32"):
            torch.ops.hgemm.grouped_scaled_mm(a, b, sa, sb, offs.long())
        with self.assertRaisesRegex(ValueError, "offs of shape"):
            torch.ops.hgemm.grouped_scaled_mm(a, b, sa, sb, offs[:3])
        with self.assertRaisesRegex(ValueError, "expected a \\(total_rows, k\\) and b \\(groups, k, n\\)"):
            torch.ops.hgemm.grouped_scaled_mm(a, b.transpose(1, 2), sa, sb, offs)
        # host tensors: refused by name (the CPU kernel), never computed
        qa, qb = torch.zeros(10, 32, dtype=e4), torch.zeros(2, 16, 32, dtype=e4).transpose(1, 2)
        with self.assertRaisesRegex(TypeError, "grouped_scaled_mm: a: expected a CUDA tensor"):
            self.HF.grouped_scaled_mm(qa, qb, torch.ones(10), torch.ones(2, 16),
                                      offs=torch.tensor([4, 10], dtype=torch.int32))

    def test_grouped_mm_refuses_host_tensors_by_name(self):
        torch = self.torch
        a, b = torch.randn(10, 16).bfloat16(), torch.randn(2, 16, 8).bfloat16()
        offs = torch.tensor([4, 10], dtype=torch.int32)
        with self.assertRaisesRegex(TypeError, "grouped_mm: a: expected a CUDA tensor"):
            torch.ops.hgemm.grouped_mm(a, b, offs)

    def test_grouped_mm_k_meta_and_errors(self):
        torch = self.torch
        a = torch.empty(300, 264, device="meta", dtype=torch.bfloat16)
        b = torch.empty(300, 100, device="meta", dtype=torch.bfloat16)
        offs = torch.empty(5, device="meta", dtype=torch.int32)
        out = torch.ops.hgemm.grouped_mm_k(a, b, offs)
        self.assertEqual((tuple(out.shape), tuple(out.stride())), ((5, 264, 100), (264 * 104, 104, 1)))
        with self.assertRaisesRegex(ValueError, "with the same rows"):
            torch.ops.hgemm.grouped_mm_k(a, b[:299], offs)
        with self.assertRaisesRegex(TypeError, "both must be the same type"):
            torch.ops.hgemm.grouped_mm_k(a, b.half(), offs)
        with self.assertRaisesRegex(TypeError, "offs: expected int32"):
            torch.ops.hgemm.grouped_mm_k(a, b, offs.long())
        # hgemm.functional.grouped_mm's 2D x 2D form is this op over a's transpose
        import hgemm.functional as HF
        out = HF.grouped_mm(a.t(), b, offs=offs)
        self.assertEqual(tuple(out.shape), (5, 264, 100))
        with self.assertRaisesRegex(TypeError, "only the inputs' type"):
            HF.grouped_mm(a.t(), b, offs=offs, out_dtype=torch.float32)
        with self.assertRaisesRegex(TypeError, "grouped_mm_k: a: expected a CUDA tensor"):
            torch.ops.hgemm.grouped_mm_k(torch.zeros(10, 16).bfloat16(), torch.zeros(10, 8).bfloat16(),
                                         torch.tensor([4, 10], dtype=torch.int32))


class NativeWgradFakeTests(unittest.TestCase):
    """torch.ops.hgemm.wgrad_accumulate_ without a GPU: its meta side (the
    checks torch.compile runs), the errors, host tensors refused by name, and
    hgemm.nn.Linear's main_grad path wired through autograd on meta tensors
    (weight.grad left None, dX and the bias gradient of their shapes). Runs
    where torch is installed and hgemm's native operators are built."""

    @classmethod
    def setUpClass(cls):
        NativeScaledMMFakeTests.setUpClass.__func__(cls)
        import hgemm.nn
        cls.nn = hgemm.nn

    def test_meta_and_errors(self):
        torch = self.torch
        bf = torch.bfloat16
        main = torch.empty(264, 136, device="meta")
        g, x = torch.empty(3, 40, 264, device="meta", dtype=bf), torch.empty(120, 136, device="meta", dtype=bf)
        self.assertIsNone(torch.ops.hgemm.wgrad_accumulate_(main, g, x))
        with self.assertRaisesRegex(TypeError, "main_grad: expected float32"):
            torch.ops.hgemm.wgrad_accumulate_(main.to(bf), g, x)
        with self.assertRaisesRegex(TypeError, "both must be the same type"):
            torch.ops.hgemm.wgrad_accumulate_(main, g, x.half())
        with self.assertRaisesRegex(ValueError, "expected main_grad \\(grad_output.shape\\[-1\\]"):
            torch.ops.hgemm.wgrad_accumulate_(main.t(), g, x)
        with self.assertRaisesRegex(ValueError, "different numbers of tokens"):
            torch.ops.hgemm.wgrad_accumulate_(main, g, x[:119])
        with self.assertRaisesRegex(TypeError, "wgrad_accumulate_: main_grad: expected a CUDA tensor"):
            self.HF.wgrad_accumulate_(torch.zeros(8, 8), torch.zeros(2, 8, dtype=bf), torch.zeros(2, 8, dtype=bf))

    def test_linear_main_grad_path(self):
        torch = self.torch
        layer = self.nn.Linear(136, 264, device="meta", dtype=torch.bfloat16)
        layer.weight.main_grad = torch.zeros(264, 136, device="meta")
        x = torch.empty(3, 40, 136, device="meta", dtype=torch.bfloat16, requires_grad=True)
        y = layer(x)
        self.assertEqual(tuple(y.shape), (3, 40, 264))
        y.backward(torch.empty(3, 40, 264, device="meta", dtype=torch.bfloat16))
        self.assertIsNone(layer.weight.grad)
        self.assertEqual(tuple(x.grad.shape), (3, 40, 136))
        self.assertEqual(tuple(layer.bias.grad.shape), (264,))
        # an activation after the product: torch's, on the main_grad path too
        act = self.nn.Linear(136, 264, bias=False, device="meta", dtype=torch.bfloat16, activation="silu")
        act.weight.main_grad = torch.zeros(264, 136, device="meta")
        act(x).backward(torch.empty(3, 40, 264, device="meta", dtype=torch.bfloat16))
        self.assertIsNone(act.weight.grad)
        # without main_grad: the ordinary gradient
        del layer.weight.main_grad
        layer(x).backward(torch.empty(3, 40, 264, device="meta", dtype=torch.bfloat16))
        self.assertEqual(tuple(layer.weight.grad.shape), (264, 136))


if __name__ == "__main__":
    unittest.main()
