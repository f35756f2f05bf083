"""hgemm from Python: ctypes over the shared library libhgemm.so.

    out = hgemm.matmul(a, b)                  # a (..., m, k) @ b (..., k, n) -> (..., m, n)
    hgemm.matmul(a, w.T, out=c, alpha=2.0, beta=1.0)
    out = hgemm.nt(a, b)                      # a (m, k), b (n, k) -> a @ b.T, (m, n)
    hgemm.nt(a, b, out=c, alpha=2.0, beta=1.0, kernel="v6")

matmul is numpy.matmul over hgemm_gemm, for fp16 and bf16: each matrix is
read as it is stored, its layout taken from its strides (a transposed view
is op T, not a copy), and the leading dimensions are a batch (broadcast,
with one stride per operand). nt is hgemm_nt: 2-D fp16 only, rows
contiguous. The arrays live in GPU memory and come as torch tensors (read
through torch) or as any object with `__cuda_array_interface__` (cupy
arrays, numba device arrays). A row stride is the leading dimension the
library takes, so a slice of a wider array works. The library's own rules
apply (include/hgemm.h): 16-byte aligned matrices, leading dimensions and
batch strides multiples of 8 elements. When torch is importable,
`torch.ops.hgemm.nt`, `torch.ops.hgemm.matmul` and
`torch.ops.hgemm.matmul_out` are registered too, and hgemm.linear(x, w)
computes x @ w.T from eager PyTorch without the dispatcher's custom-op path
(see _torch.py).

Where the library lives: $HGEMM_LIBRARY, else libhgemm.so next to this file
(where `pip install .` puts it), else build/libhgemm.so of the repository this
package sits in, else wherever ctypes.util.find_library("hgemm") finds it.
"""
import ctypes
import ctypes.util
import functools
import os
import sys
import threading

from . import _layout

__all__ = ["matmul", "nt", "linear", "workspace", "native_ops", "kernels", "library_path", "HgemmError", "__version__",
           "SUCCESS", "ERROR_INVALID_VALUE", "ERROR_MISALIGNED", "ERROR_NOT_SUPPORTED",
           "ERROR_NO_DEVICE", "ERROR_ARCH_MISMATCH", "ERROR_CUDA", "DTYPE_F16", "DTYPE_BF16",
           "WORKSPACE_BYTES"]

try:  # the installed distribution's version (pyproject.toml takes CMakeLists.txt's)
    from importlib.metadata import PackageNotFoundError, version as _dist_version
    try:
        __version__ = _dist_version("hgemm")
    except PackageNotFoundError:  # run from the source tree
        __version__ = "unknown"
except ImportError:  # Python < 3.8
    __version__ = "unknown"

# enum hgemm_status of include/hgemm.h. The values are ABI (never renumbered);
# the messages come from the library, hgemm_status_string.
SUCCESS = 0
ERROR_INVALID_VALUE = 1
ERROR_MISALIGNED = 2
ERROR_NOT_SUPPORTED = 3
ERROR_NO_DEVICE = 4
ERROR_ARCH_MISMATCH = 5
ERROR_CUDA = 6

# HGEMM_WORKSPACE_BYTES of include/hgemm.h: a workspace of this many bytes lets
# every call split its work over all SMs (split-K, stream-K, the tail split).
WORKSPACE_BYTES = 32 << 20


# enum hgemm_dtype of include/hgemm.h (ABI values).
DTYPE_F16 = 0
DTYPE_BF16 = 1


class HgemmError(RuntimeError):
    """The library returned a status other than HGEMM_SUCCESS; `.status` holds it."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


# --- the library ----------------------------------------------------------------

class _Options(ctypes.Structure):
    # struct hgemm_nt_options of include/hgemm.h, every field (the library
    # reads them all; c_in stays NULL here: C itself).
    _fields_ = [("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t),
                ("sm_count_target", ctypes.c_int), ("c_in", ctypes.c_void_p),
                ("ldc_in", ctypes.c_int64)]


_lock = threading.Lock()
_lib = None
_lib_path = None
_kernel_ids = None  # {"auto": 0, "v0": 1, ...}, read from the library


def _candidates():
    """Where to look for libhgemm.so, in order; the first that loads wins."""
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))  # python/hgemm -> the repository
    paths = [os.path.join(here, "libhgemm.so"), os.path.join(repo, "build", "libhgemm.so")]
    found = ctypes.util.find_library("hgemm")
    if found:
        paths.append(found)
    return paths


def _load():
    """Load libhgemm.so once and declare the three functions we call."""
    global _lib, _lib_path
    with _lock:
        if _lib is not None:
            return _lib
        explicit = os.environ.get("HGEMM_LIBRARY")
        if explicit:
            # The user named it: a failure here is an error, not a reason to look elsewhere.
            lib, path = ctypes.CDLL(explicit), explicit
        else:
            lib, path, tried = None, None, []
            for path in _candidates():
                if os.sep in path and not os.path.exists(path):
                    tried.append(path + " (missing)")
                    continue
                try:
                    lib = ctypes.CDLL(path)
                    break
                except OSError as e:
                    tried.append("%s (%s)" % (path, e))
            if lib is None:
                raise OSError("hgemm: cannot find libhgemm.so; install the package with "
                              "`pip install .` from the repository, or build it (make) and set "
                              "HGEMM_LIBRARY to its path. Tried: " + "; ".join(tried or ["nothing"]))
        lib.hgemm_nt.restype = ctypes.c_int
        lib.hgemm_nt.argtypes = [
            ctypes.c_int,                                   # kernel
            ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,  # m, n, k
            ctypes.c_float,                                 # alpha
            ctypes.c_void_p, ctypes.c_int64,                # A, lda
            ctypes.c_void_p, ctypes.c_int64,                # B, ldb
            ctypes.c_float,                                 # beta
            ctypes.c_void_p, ctypes.c_int64,                # C, ldc
            ctypes.c_void_p]                                # stream
        lib.hgemm_nt_ws.restype = ctypes.c_int
        lib.hgemm_nt_ws.argtypes = lib.hgemm_nt.argtypes[:-1] + [
            ctypes.c_void_p, ctypes.c_size_t,               # workspace, workspace_bytes
            ctypes.c_void_p]                                # stream
        lib.hgemm_gemm.restype = ctypes.c_int
        lib.hgemm_gemm.argtypes = [
            ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,  # kernel, dtype, op_a, op_b
            ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,  # m, n, k
            ctypes.c_float,                                 # alpha
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,  # A, lda, stride_a
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,  # B, ldb, stride_b
            ctypes.c_float,                                 # beta
            ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,  # C, ldc, stride_c
            ctypes.c_int64,                                 # batch
            ctypes.POINTER(_Options),                       # options (NULL: none)
            ctypes.c_void_p]                                # stream
        lib.hgemm_status_string.restype = ctypes.c_char_p
        lib.hgemm_status_string.argtypes = [ctypes.c_int]
        lib.hgemm_kernel_name.restype = ctypes.c_char_p
        lib.hgemm_kernel_name.argtypes = [ctypes.c_int]
        _lib, _lib_path = lib, path
        return lib


def library_path():
    """The path libhgemm.so was loaded from (loading it if needed)."""
    _load()
    return _lib_path


def _kernel_table():
    """Kernel names to enum values, read from the library: ids 0, 1, ... until
    hgemm_kernel_name says NULL. The library's table is the only list."""
    global _kernel_ids
    if _kernel_ids is None:
        lib, ids, i = _load(), {}, 0
        while True:
            name = lib.hgemm_kernel_name(i)
            if name is None:
                break
            ids[name.decode()] = i
            i += 1
        _kernel_ids = ids
    return _kernel_ids


def kernels():
    """The kernel names hgemm.nt and hgemm.matmul accept: ["auto", "v0", ...]."""
    return list(_kernel_table())


def _status_error(status, function="hgemm_nt"):
    text = _load().hgemm_status_string(status).decode()
    return HgemmError(status, "%s failed: %s (status %d)" % (function, text, status))


# --- the CUDA runtime, for the device check only -------------------------------

# cudaError_t values that mean "no usable device or driver here" (the same list
# src/api.c maps to HGEMM_ERROR_NO_DEVICE): then the check is skipped and the
# library reports the problem itself.
_NO_DEVICE_ERRORS = {3, 34, 35, 46, 100}  # initialization, stub library,
                                          # insufficient driver, devices unavailable, no device
_MEMORY_DEVICE, _MEMORY_MANAGED = 2, 3    # enum cudaMemoryType


class _PointerAttributes(ctypes.Structure):
    # struct cudaPointerAttributes of driver_types.h (CUDA 11 and later).
    _fields_ = [("type", ctypes.c_int), ("device", ctypes.c_int),
                ("devicePointer", ctypes.c_void_p), ("hostPointer", ctypes.c_void_p),
                ("reserved", ctypes.c_long * 8)]


_cudart = None
_cudart_tried = False


def _cudart_path():
    """The libcudart that libhgemm.so itself loaded (so both see the same
    runtime state), found in /proc/self/maps; else whatever the loader finds."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libcudart.so"):
                    return path
    except OSError:
        pass
    return ctypes.util.find_library("cudart") or "libcudart.so"


def _runtime():
    """libcudart through ctypes, loaded on first use; None if it cannot be."""
    global _cudart, _cudart_tried
    with _lock:
        if not _cudart_tried:
            _cudart_tried = True
            try:
                rt = ctypes.CDLL(_cudart_path())
                rt.cudaPointerGetAttributes.argtypes = [ctypes.POINTER(_PointerAttributes),
                                                        ctypes.c_void_p]
                rt.cudaGetDevice.argtypes = [ctypes.POINTER(ctypes.c_int)]
                rt.cudaSetDevice.argtypes = [ctypes.c_int]
                rt.cudaGetDeviceCount.argtypes = [ctypes.POINTER(ctypes.c_int)]
                rt.cudaGetErrorString.restype = ctypes.c_char_p
                rt.cudaGetErrorString.argtypes = [ctypes.c_int]
                _cudart = rt
            except (OSError, AttributeError):
                _cudart = None
        return _cudart


def _device_count():
    """How many CUDA devices the runtime sees; 0 without a runtime or driver."""
    rt = _runtime()
    if rt is None:
        return 0
    count = ctypes.c_int(0)
    err = rt.cudaGetDeviceCount(ctypes.byref(count))
    rt.cudaGetLastError()  # "no device" is not sticky: leave no trace
    return count.value if err == 0 else 0


def _device_of(name, ptr):
    """The device holding ptr; None when there is no runtime or device to ask
    (then hgemm_nt will say so). Host memory is refused here, before it could
    reach a kernel."""
    rt = _runtime()
    if rt is None:
        return None
    attrs = _PointerAttributes()
    err = rt.cudaPointerGetAttributes(ctypes.byref(attrs), ctypes.c_void_p(ptr))
    rt.cudaGetLastError()  # a failed query must not surface in the next CUDA call
    if err in _NO_DEVICE_ERRORS:
        return None
    if err != 0:
        raise ValueError("%s: cudaPointerGetAttributes(0x%x) failed: %s; hgemm needs device memory"
                         % (name, ptr, rt.cudaGetErrorString(err).decode()))
    if attrs.type not in (_MEMORY_DEVICE, _MEMORY_MANAGED):
        raise ValueError("%s: 0x%x is not device memory (cudaMemoryType %d); hgemm needs "
                         "arrays that live on the GPU" % (name, ptr, attrs.type))
    return attrs.device


# --- what fits the C types ---------------------------------------------------------

# ctypes converts a Python int to a C integer by dropping the bits that do not
# fit, without a word: each int the library receives is checked here first.
_C_INT = (-(1 << 31), (1 << 31) - 1)        # int: hgemm_kernel, sm_count_target
_INT64 = (-(1 << 63), (1 << 63) - 1)        # int64_t: sizes, leading dimensions, strides
_UINT64 = (0, (1 << 64) - 1)                # a pointer, cudaStream_t, size_t (64-bit)


def _fits(name, value, c_range, c_type):
    """value, when it lies in c_range; ValueError naming the C type otherwise."""
    low, high = c_range
    if not low <= value <= high:
        raise ValueError("%s=%d does not fit the C type %s (%d .. %d)" % (name, value, c_type, low, high))
    return value


def _int_fields(name, what, values, c_range=_INT64, c_type="int64_t"):
    """A tuple of ints from an array's shape or strides (ValueError for
    anything else, or for an int that does not fit c_range)."""
    try:
        values = tuple(values)
    except TypeError:
        raise ValueError("%s: %s must be a tuple of ints, got %r" % (name, what, values)) from None
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            try:
                v = int(v.__index__())
            except (AttributeError, TypeError):
                raise ValueError("%s: %s must be ints, got %r" % (name, what, values)) from None
        out.append(_fits("%s %s" % (name, what), v, c_range, c_type))
    return tuple(out)


def _data_pointer(name, data):
    """The device pointer of __cuda_array_interface__'s 'data': (pointer, read_only)."""
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise ValueError("%s: __cuda_array_interface__['data'] must be (pointer, read_only), "
                         "got %r" % (name, data))
    ptr = data[0] or 0
    if isinstance(ptr, bool) or not isinstance(ptr, int):
        raise ValueError("%s: the data pointer must be an int, got %r" % (name, ptr))
    return _fits("%s pointer" % name, ptr, _UINT64, "a 64-bit pointer"), bool(data[1])


# --- __cuda_array_interface__ ----------------------------------------------------

class _Matrix:
    """What hgemm_nt needs of one operand: pointer, rows, cols, leading dimension."""

    def __init__(self, name, obj):
        if _torch_tensor(obj) and obj.is_cuda and obj.dtype != sys.modules["torch"].float16:
            # Asked before the interface: torch exports bfloat16 as '<f2' too
            # (older versions fail there with a KeyError).
            raise TypeError("%s: expected fp16, got %s" % (name, obj.dtype))
        try:
            cai = obj.__cuda_array_interface__
        except AttributeError:
            what = type(obj).__name__
            if _torch_tensor(obj):
                what = "a torch tensor on %s" % obj.device
            raise TypeError("%s: expected a 2-D fp16 CUDA array (an object with "
                            "__cuda_array_interface__, e.g. a torch CUDA tensor or a cupy "
                            "array), got %s" % (name, what)) from None
        self.name = name
        typestr = cai.get("typestr")
        if typestr != "<f2":
            raise TypeError("%s: expected fp16 (typestr '<f2'), got typestr %r" % (name, typestr))
        shape = _int_fields(name, "shape", cai.get("shape", ()))
        if len(shape) != 2:
            raise ValueError("%s: expected a 2-D array, got %d dimensions (shape %s)"
                             % (name, len(shape), shape))
        if cai.get("mask") is not None:
            raise ValueError("%s: masked arrays are not supported" % name)
        self.rows, self.cols = shape
        self.ptr, self.readonly = _data_pointer(name, cai.get("data"))
        self.stream = cai.get("stream")  # None, 1, 2 or a cudaStream_t, per version 3

        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            ld = self.cols
        else:
            strides = _int_fields(name, "strides", strides)
            if len(strides) != 2:
                raise ValueError("%s: %d strides for a 2-D array (strides %s, shape %s)"
                                 % (name, len(strides), strides, shape))
            row_bytes, col_bytes = strides
            # A stride along a dimension of extent 1 is never used, so any value is fine.
            if self.cols > 1 and col_bytes != 2:
                raise ValueError("%s: rows must be contiguous (an element stride of 2 bytes), "
                                 "got strides %s in bytes; copy it, e.g. .contiguous()"
                                 % (name, tuple(strides)))
            if row_bytes % 2:
                raise ValueError("%s: the row stride (%d bytes) is not a whole number of fp16 "
                                 "elements" % (name, row_bytes))
            ld = row_bytes // 2
        # A matrix of one row, of none, or of empty rows has no row stride to
        # speak of: pass the smallest one the library takes (no row past the
        # first is ever read or written), so that a (1, k) row vector or an
        # empty array works whatever strides its library gave it.
        if self.rows <= 1 or self.cols == 0:
            ld = -(-max(self.cols, 1) // 8) * 8
        self.ld = ld

    @property
    def empty(self):
        return self.rows == 0 or self.cols == 0


def _kernel_id(kernel):
    if isinstance(kernel, str):
        table = _kernel_table()
        if kernel not in table:
            raise ValueError("unknown kernel %r; known kernels: %s"
                             % (kernel, ", ".join(table)))
        return table[kernel]
    if isinstance(kernel, int) and not isinstance(kernel, bool):
        # an hgemm_kernel value (a C int); the library rejects unknown ones
        return _fits("kernel", kernel, _C_INT, "int (hgemm_kernel)")
    raise TypeError("kernel must be a name such as 'auto' or 'v6', or an int, got %s"
                    % type(kernel).__name__)


def _stream_handle(stream):
    """A cudaStream_t as an int from what the caller gave (a pointer: 0 ..
    2^64 - 1; ValueError outside)."""
    if isinstance(stream, int) and not isinstance(stream, bool):
        handle = stream
    elif hasattr(stream, "cuda_stream"):   # torch.cuda.Stream
        handle = int(stream.cuda_stream)
    elif hasattr(stream, "ptr"):           # cupy.cuda.Stream
        handle = int(stream.ptr)
    elif hasattr(stream, "_as_parameter_"):
        value = stream._as_parameter_
        handle = int(getattr(value, "value", value) or 0)
    else:
        raise TypeError("stream must be an int cudaStream_t or an object with .cuda_stream or .ptr, "
                        "got %s" % type(stream).__name__)
    return _fits("stream", handle, _UINT64, "cudaStream_t (a 64-bit pointer)")


def _torch_tensor(x):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _cupy_array(x):
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(x, cupy.ndarray)


def _default_stream(a, operands):
    """The stream to run on when the caller names none: the one the arrays'
    interface asks for ('stream', version 3: 1 is the legacy default stream and
    2 the per-thread one, which are also the values of cudaStreamLegacy and
    cudaStreamPerThread, so every value passes through as it is); for torch
    tensors, which export no stream, torch's current stream; else stream 0."""
    for m in operands:
        if m.stream is not None:
            return _stream_handle(int(m.stream))
    if _torch_tensor(a):
        import torch
        return torch.cuda.current_stream(a.device).cuda_stream
    return 0


def _allocate_like(a, m, n):
    """out for out=None: same library and device as a."""
    if _torch_tensor(a):
        import torch
        return torch.empty((m, n), dtype=torch.float16, device=a.device)
    if _cupy_array(a):
        import cupy
        with a.device:
            return cupy.empty((m, n), dtype=cupy.float16)
    raise TypeError("out=None is supported for torch tensors and cupy arrays only; "
                    "pass out= for %s" % type(a).__name__)


# --- the call ---------------------------------------------------------------------

def nt(a, b, out=None, *, alpha=1.0, beta=0.0, kernel="auto", stream=None):
    """out = alpha * a @ b.T + beta * out, with hgemm_nt.

    a (m, k), b (n, k) and out (m, n) are fp16 CUDA arrays with contiguous rows.
    out=None allocates a new (m, n) array like a (torch or cupy); beta must then
    be 0. kernel is "auto", "v0".."v7" (see kernels()) or an hgemm_kernel int.
    stream is a cudaStream_t int or a stream object; by default the arrays'
    own. The call is asynchronous on that stream. Returns out.

    Raises TypeError / ValueError for arrays hgemm cannot take (the message
    says why), HgemmError for a status from the library (misaligned data,
    no device, ...).
    """
    A, B = _Matrix("a", a), _Matrix("b", b)
    if A.cols != B.cols:
        raise ValueError("a is %dx%d and b is %dx%d: the inner dimensions differ (a.shape[1] "
                         "must equal b.shape[1]; b holds the rows of the right factor's "
                         "transpose)" % (A.rows, A.cols, B.rows, B.cols))
    m, n, k = A.rows, B.rows, A.cols
    kernel_id = _kernel_id(kernel)
    handle = None if stream is None else _stream_handle(stream)
    if out is None:  # only once everything else is known to be right
        if beta != 0:
            raise ValueError("beta=%r needs out= to scale: with out=None there is no C" % (beta,))
        out = _allocate_like(a, m, n)
    C = _Matrix("out", out)
    if (C.rows, C.cols) != (m, n):
        raise ValueError("out has shape (%d, %d); a @ b.T has shape (%d, %d)"
                         % (C.rows, C.cols, m, n))
    if C.readonly:
        raise ValueError("out is read-only")
    if handle is None:
        handle = _default_stream(a, (C, A, B))

    # Loaded before the runtime is asked anything, so that _runtime() finds
    # the libcudart that libhgemm.so loaded.
    lib = _load()

    # All three on one device, and that device current for the call (hgemm_nt
    # runs on the current device). An empty product touches no memory, so its
    # pointers need no check.
    device = None
    if m and n:
        device = _one_device({mat.name: _device_of(mat.name, mat.ptr) for mat in (A, B, C) if not mat.empty})

    previous = _switch_device(device)
    try:
        status = lib.hgemm_nt(kernel_id, m, n, k, float(alpha), A.ptr, A.ld, B.ptr, B.ld,
                              float(beta), C.ptr, C.ld, handle)
    finally:
        if previous is not None:
            _runtime().cudaSetDevice(previous)
    if status != SUCCESS:
        raise _status_error(status)
    return out


def _one_device(devices):
    """The device of every array, from {name: device index or None (unknown)};
    None when none is known. Arrays on different devices: ValueError."""
    known = {name: d for name, d in devices.items() if d is not None}
    if len(set(known.values())) > 1:
        raise ValueError("the arrays are on different devices: " + ", ".join(
            "%s on cuda:%d" % item for item in sorted(known.items())))
    return next(iter(known.values())) if known else None


def _switch_device(device):
    """Make `device` current; return the one to restore, or None."""
    if device is None:
        return None
    rt = _runtime()
    current = ctypes.c_int(0)
    if rt.cudaGetDevice(ctypes.byref(current)) != 0 or current.value == device:
        return None
    err = rt.cudaSetDevice(device)
    if err != 0:
        raise HgemmError(ERROR_CUDA, "cudaSetDevice(%d) failed: %s"
                         % (device, rt.cudaGetErrorString(err).decode()))
    return current.value


# --- matmul ---------------------------------------------------------------------

class _Array:
    """What hgemm_gemm needs of one array: pointer, element type, shape and
    strides in elements, and the device when the array says (torch tensors:
    read through torch, which knows them all and whose bfloat16 the array
    interface cannot name; other arrays: through __cuda_array_interface__)."""

    def __init__(self, name, obj):
        self.name = name
        if _torch_tensor(obj):
            self._from_torch(obj)
        else:
            self._from_interface(obj)
        size = 1
        for extent in self.shape:
            size *= extent
        self.empty = size == 0

    def _from_torch(self, t):
        torch = sys.modules["torch"]
        if not t.is_cuda:
            raise TypeError("%s: expected a CUDA tensor, got a tensor on %s" % (self.name, t.device))
        if t.layout != torch.strided:
            raise TypeError("%s: expected a strided (dense) tensor, got layout %s"
                            % (self.name, t.layout))
        dtype = {torch.float16: DTYPE_F16, torch.bfloat16: DTYPE_BF16}.get(t.dtype)
        if dtype is None:
            raise TypeError("%s: expected float16 or bfloat16, got %s" % (self.name, t.dtype))
        self.dtype, self.ptr, self.readonly, self.stream = dtype, t.data_ptr(), False, None
        self.shape, self.strides = tuple(t.shape), tuple(t.stride())
        self.device, self.torch = t.device.index, True

    def _from_interface(self, obj):
        name = self.name
        try:
            cai = obj.__cuda_array_interface__
        except AttributeError:
            raise TypeError("%s: expected a CUDA array (a torch CUDA tensor, or an object with "
                            "__cuda_array_interface__ such as a cupy array), got %s"
                            % (name, type(obj).__name__)) from None
        typestr = cai.get("typestr")
        if typestr != "<f2":
            raise TypeError("%s: expected float16 (typestr '<f2'), got typestr %r; bfloat16 comes "
                            "as torch tensors (the array interface has no bfloat16 type)"
                            % (name, typestr))
        if cai.get("mask") is not None:
            raise ValueError("%s: masked arrays are not supported" % name)
        ptr, readonly = _data_pointer(name, cai.get("data"))
        shape = _int_fields(name, "shape", cai.get("shape", ()))
        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            strides, step = [], 1
            for extent in reversed(shape):
                strides.append(step)
                step *= extent
            strides = tuple(reversed(strides))
        else:
            strides = _int_fields(name, "strides", strides)
            if len(strides) != len(shape):
                raise ValueError("%s: %d strides for %d dimensions (strides %s, shape %s)"
                                 % (name, len(strides), len(shape), strides, shape))
            if any(x % 2 for x in strides):
                raise ValueError("%s: strides %s (bytes) are not whole numbers of 2-byte elements"
                                 % (name, strides))
            strides = tuple(x // 2 for x in strides)
        self.dtype, self.ptr, self.readonly = DTYPE_F16, ptr, readonly
        self.shape, self.strides = shape, strides
        self.stream = cai.get("stream")  # None, 1, 2 or a cudaStream_t, per version 3
        self.device, self.torch = None, False


_DTYPE_NAMES = {DTYPE_F16: "float16", DTYPE_BF16: "bfloat16"}

# The plan depends on shapes and strides only; a model calls matmul with the
# same few over and over, so each is worked out once.
_plan = functools.lru_cache(maxsize=1024)(_layout.plan)


def _allocate(like, dtype, shape):
    """out for out=None: a new array of `shape` from the library of `like`,
    on its device, rows padded to a multiple of 8 elements
    (_layout.padded_strides) so that any n gives a leading dimension hgemm
    takes; the padding is never written."""
    strides = _layout.padded_strides(shape)
    if _torch_tensor(like):
        torch = sys.modules["torch"]
        return torch.empty_strided(shape, strides, device=like.device,
                                   dtype=torch.float16 if dtype == DTYPE_F16 else torch.bfloat16)
    if _cupy_array(like):
        import cupy
        with like.device:
            wide = cupy.empty(shape[:-1] + (_layout.min_ld(shape[-1]),), dtype=cupy.float16)
        return wide[..., :shape[-1]]
    raise TypeError("out=None is supported for torch tensors and cupy arrays only; pass out= "
                    "for %s" % type(like).__name__)


def _workspace_options(workspace, sm_count_target):
    """hgemm_nt_options from matmul's arguments; None when all are defaults."""
    if isinstance(sm_count_target, bool) or not isinstance(sm_count_target, int):
        raise TypeError("sm_count_target must be an int, got %s" % type(sm_count_target).__name__)
    _fits("sm_count_target", sm_count_target, _C_INT, "int")
    if workspace is None:
        return _Options(None, 0, sm_count_target) if sm_count_target else None
    if _torch_tensor(workspace):
        if not workspace.is_cuda or not workspace.is_contiguous():
            raise ValueError("workspace: expected a contiguous CUDA tensor")
        ptr, nbytes = workspace.data_ptr(), workspace.numel() * workspace.element_size()
    else:
        try:
            cai = workspace.__cuda_array_interface__
        except AttributeError:
            raise TypeError("workspace: expected a CUDA array (torch tensor or an object with "
                            "__cuda_array_interface__), got %s" % type(workspace).__name__) from None
        typestr = cai.get("typestr")
        if not isinstance(typestr, str) or not typestr[2:].isdigit():
            raise ValueError("workspace: __cuda_array_interface__['typestr'] must name an element "
                             "size, got %r" % (typestr,))
        itemsize = int(typestr[2:])
        shape = _int_fields("workspace", "shape", cai.get("shape", ()))
        nbytes = itemsize
        for extent in shape:
            nbytes *= extent
        strides = cai.get("strides")
        if strides is not None:
            strides = _int_fields("workspace", "strides", strides)
            if len(strides) != len(shape):
                raise ValueError("workspace: %d strides for %d dimensions (strides %s, shape %s)"
                                 % (len(strides), len(shape), strides, shape))
        if strides is not None and nbytes:
            expected, step = [], itemsize
            for extent in reversed(shape):
                expected.append(step)
                step *= extent
            if any(extent > 1 and int(s) != e
                   for extent, s, e in zip(shape, strides, reversed(expected))):
                raise ValueError("workspace: expected a contiguous array, got strides %s"
                                 % (tuple(strides),))
        ptr, _ = _data_pointer("workspace", cai.get("data"))
    _fits("workspace bytes", nbytes, _UINT64, "size_t")
    return _Options(ptr, nbytes, sm_count_target)


def matmul(a, b, out=None, *, alpha=1.0, beta=0.0, kernel="auto", stream=None, workspace=None,
           sm_count_target=0):
    """out = alpha * (a @ b) + beta * out, with hgemm_gemm; numpy.matmul's shapes.

    a (..., m, k), b (..., k, n) and out (..., m, n) are float16 or bfloat16
    CUDA arrays (all one type): torch tensors, or arrays with
    __cuda_array_interface__ for float16. Each matrix is read in place, as
    stored when its rows are contiguous (the row stride is its leading
    dimension, so a slice of a wider array works) or transposed when its
    columns are (a.T, b.transpose(-1, -2)): no copy is made. The leading
    dimensions broadcast as in numpy and form one batch, each operand
    stepping through it by one stride (0 for a broadcast operand). An array
    that does not fit this (neither rows nor columns contiguous; batch
    dimensions whose strides do not compose) raises ValueError saying that a
    copy is needed: making one is the caller's choice. A b shared by the
    whole batch, with a and out laid out row after row (x (B, S, K) @ W),
    runs as one product of B * S rows.

    out=None allocates out like a (torch or cupy; beta must be 0), with rows
    padded to a multiple of 8 elements when n is not one (a view of a wider
    buffer), so that any n works. kernel is "auto" or a name of kernels(),
    or an hgemm_kernel int; stream a cudaStream_t int or a stream object, by
    default the arrays' own (torch: its current stream). workspace (a
    contiguous CUDA array, zero-filled once before its first use) and
    sm_count_target are hgemm_nt_options' (include/hgemm.h). The call is
    asynchronous on the stream. Returns out.

    Raises TypeError / ValueError for arrays hgemm cannot take (the message
    says why), HgemmError for a status from the library (misaligned data,
    a form the kernel does not serve, no device, ...).
    """
    A, B = _Array("a", a), _Array("b", b)
    if A.dtype != B.dtype:
        raise TypeError("a is %s and b is %s: both must be the same type"
                        % (_DTYPE_NAMES[A.dtype], _DTYPE_NAMES[B.dtype]))
    batch_shape, m, n, _ = _layout.matmul_shapes(A.shape, B.shape)
    kernel_id = _kernel_id(kernel)
    handle = None if stream is None else _stream_handle(stream)
    options = _workspace_options(workspace, sm_count_target)
    if out is None:  # only once everything else is known to be right
        if beta != 0:
            raise ValueError("beta=%r needs out= to scale: with out=None there is no C" % (beta,))
        like = a if (_torch_tensor(a) or _cupy_array(a)) else b
        out = _allocate(like, A.dtype, batch_shape + (m, n))
    C = _Array("out", out)
    if C.dtype != A.dtype:
        raise TypeError("out is %s and a, b %s: all three must be the same type"
                        % (_DTYPE_NAMES[C.dtype], _DTYPE_NAMES[A.dtype]))
    if C.readonly:
        raise ValueError("out is read-only")
    plan = _plan((A.shape, A.strides), (B.shape, B.strides), (C.shape, C.strides))
    for field in ("m", "n", "k", "batch", "lda", "stride_a", "ldb", "stride_b", "ldc", "stride_c"):
        _fits(field, getattr(plan, field), _INT64, "int64_t")  # products of the batch dimensions, say
    if plan.swap:  # out^T = b^T a^T: b is the library's A
        A, B = B, A
    arrays = (C, A, B)
    if handle is None:
        handle = next((_stream_handle(int(x.stream)) for x in arrays if x.stream is not None), None)
    if handle is None:
        tensor = next((x for x in arrays if x.torch), None)
        torch = sys.modules.get("torch")
        handle = torch.cuda.current_stream(tensor.device).cuda_stream if tensor else 0

    lib = _load()  # before the runtime is asked anything (see nt)
    # One device for all, current for the call. An empty product touches no
    # memory, so its pointers need no check; torch says where its tensors are.
    device, by_torch = None, False
    if plan.batch and plan.m and plan.n:
        device = _one_device({x.name: x.device if x.torch else _device_of(x.name, x.ptr)
                              for x in arrays if not x.empty})
        by_torch = device is not None and all(x.torch for x in arrays)

    def call():
        status = lib.hgemm_gemm(
            kernel_id, A.dtype, plan.op_a, plan.op_b, plan.m, plan.n, plan.k, float(alpha),
            A.ptr, plan.lda, plan.stride_a, B.ptr, plan.ldb, plan.stride_b, float(beta),
            C.ptr, plan.ldc, plan.stride_c, plan.batch,
            None if options is None else ctypes.byref(options), handle)
        if status != SUCCESS:
            raise _status_error(status, "hgemm_gemm")

    if by_torch:  # torch's own device switch, which its caching allocator expects
        torch = sys.modules["torch"]
        if torch.cuda.current_device() != device:
            with torch.cuda.device(device):
                call()
        else:
            call()
        return out
    previous = _switch_device(device)
    try:
        call()
    finally:
        if previous is not None:
            _runtime().cudaSetDevice(previous)
    return out


# torch.ops.hgemm.nt, when torch is there (never a reason for this import to fail),
# and hgemm.linear, eager PyTorch's x @ W.T without the dispatcher.
from . import _torch  # noqa: E402,F401
from ._torch import linear, workspace  # noqa: E402,F401


def native_ops():
    """(path, None) when torch.ops.hgemm are the native C++ operators
    (libhgemm_torch.so, loaded from path); (None, why) when they are not, and
    torch.ops.hgemm.nt/.matmul/.matmul_out run over ctypes instead."""
    return _torch.native_path, _torch.native_missing
