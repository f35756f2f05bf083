"""How hgemm.matmul reads strided arrays: pure functions of shapes and strides.

Everything here works on plain integers (shapes, and strides in elements),
with no GPU, no library and no array package, so that every decision
hgemm.matmul takes is testable anywhere (python/tests/test_cpu.py).

hgemm_gemm (include/hgemm.h) multiplies row-major matrices, each operand
either as stored (op N) or transposed (op T), over a batch whose entries are
one stride apart. An array view maps onto that without a copy when:

  - each matrix (the last two dimensions) has contiguous rows (op N: the row
    stride is the leading dimension) or contiguous columns (op T: a
    transposed view, whose column stride is the leading dimension);
  - the leading dimensions (batch dimensions) step through the batch by one
    stride per operand, in the C order of the broadcast batch shape: a
    broadcast operand steps by 0, and several batch dimensions count as one
    when their strides compose (stride[i] == stride[i+1] * size[i+1]).

Anything else needs a copy, which is the caller's decision: plan() raises a
ValueError that says so instead of making one.
"""
from collections import namedtuple

# enum hgemm_op of include/hgemm.h (ABI values).
OP_N, OP_T = 0, 1

# include/hgemm.h: leading dimensions and batch strides are multiples of 8
# elements (16 bytes), and m, n or k above 2^31 - 257 is NOT_SUPPORTED.
ALIGN = 8
MAX_DIM = 2 ** 31 - 257

# One call of hgemm_gemm, and whether a and b trade places (swap: the product
# is computed as out^T = b^T a^T, for an out whose columns are contiguous).
# m, n, k, batch and the leading dimensions and strides are hgemm_gemm's
# arguments of the same names, in elements.
Plan = namedtuple("Plan", "swap m n k batch op_a lda stride_a op_b ldb stride_b ldc stride_c")


def min_ld(cols):
    """The smallest leading dimension hgemm takes for rows of `cols` elements
    (a multiple of 8, at least 1): the one to pass for a matrix that never
    steps to a second row."""
    return -(-max(cols, 1) // ALIGN) * ALIGN


def padded_strides(shape):
    """Strides (elements) of a fresh C-ordered array of `shape` whose rows are
    padded to a multiple of 8 elements, so that its leading dimension and
    batch stride are ones hgemm takes whatever the last dimension is."""
    strides, step = [], 1
    for i, size in enumerate(reversed(shape)):
        strides.append(step)
        step *= min_ld(size) if i == 0 else size
    return tuple(reversed(strides))


def matrix_layout(rows, cols, row_stride, col_stride, prefer=OP_N):
    """How hgemm_gemm reads a rows x cols matrix whose element (i, j) lies
    i * row_stride + j * col_stride elements from its first: (op, ld), or
    None when it cannot without a copy.

    op N stores it as it is (rows contiguous, ld the row stride); op T
    stores its transpose, cols x rows (columns contiguous, ld the column
    stride). A stored matrix of one row never steps by its ld, so it gets
    min_ld; an empty one reads nothing and gets `prefer` with min_ld. When
    both ops fit (a single row or column, or a 1 x 1 matrix), the first with
    a leading dimension hgemm takes (>= the stored row length, a multiple of
    8) wins, `prefer` first; with neither aligned, `prefer` if it fits, and
    the library reports the misalignment."""
    other = OP_T if prefer == OP_N else OP_N
    if rows == 0 or cols == 0:
        return prefer, min_ld(cols if prefer == OP_N else rows)
    fits = []
    for op in (prefer, other):
        if op == OP_N:
            stored_rows, stored_cols, ld, step = rows, cols, row_stride, col_stride
        else:
            stored_rows, stored_cols, ld, step = cols, rows, col_stride, row_stride
        if stored_cols > 1 and step != 1:
            continue  # the stored rows are not contiguous
        if stored_rows <= 1:
            ld = min_ld(stored_cols)
        elif ld < stored_cols:
            continue  # rows that overlap (a 0 or negative stride included): not a matrix hgemm reads
        fits.append((op, ld, ld % ALIGN == 0))
    if not fits:
        return None
    for op, ld, aligned in fits:
        if aligned:
            return op, ld
    return fits[0][:2]


def batch_stride(batch_shape, shape, strides):
    """The one stride (elements) that steps an operand of `shape` (whose
    last two dimensions are the matrix) from entry to entry of a batch of
    `batch_shape`, entries numbered in C order; None when its batch
    dimensions do not compose into one stride. A dimension the operand lacks,
    or has of size 1 where the batch's is larger, is broadcast: stride 0.
    Dimensions of size 1 in the batch never step."""
    own = len(shape) - 2
    lead = len(batch_shape) - own
    dims = []  # (size, stride) of each batch dimension that steps, outermost first
    for i, size in enumerate(batch_shape):
        if size == 1:
            continue
        j = i - lead
        stride = strides[j] if j >= 0 and shape[j] != 1 else 0
        dims.append((size, stride))
    if not dims:
        return 0
    inner_size, inner_stride = dims[-1]
    if inner_stride < 0:
        return None
    for size, stride in reversed(dims[:-1]):
        if stride != inner_stride * inner_size:
            return None
        inner_size, inner_stride = size, stride
    return dims[-1][1]


def matmul_shapes(a_shape, b_shape):
    """numpy.matmul's shapes for a (..., m, k) and b (..., k, n): the
    broadcast batch shape, m, n, k. ValueError when they do not fit."""
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    for name, shape, what in (("a", a_shape, "(..., m, k)"), ("b", b_shape, "(..., k, n)")):
        if len(shape) < 2:
            raise ValueError("%s: expected an array of 2 or more dimensions %s, got shape %s "
                             "(a vector is a matrix of one row or column: add the dimension, "
                             "e.g. x[None, :] or x[:, None])" % (name, what, shape))
    (m, k), (k_b, n) = a_shape[-2:], b_shape[-2:]
    if k != k_b:
        raise ValueError("a has shape %s and b %s: a.shape[-1] (%s) must equal b.shape[-2] (%s)"
                         % (a_shape, b_shape, k, k_b))
    a_batch, b_batch = a_shape[:-2], b_shape[:-2]
    width = max(len(a_batch), len(b_batch))
    a_full = (1,) * (width - len(a_batch)) + a_batch
    b_full = (1,) * (width - len(b_batch)) + b_batch
    batch = []
    for x, y in zip(a_full, b_full):
        if x != y and x != 1 and y != 1:
            raise ValueError("the batch dimensions of a %s and b %s do not broadcast"
                             % (a_batch, b_batch))
        batch.append(y if x == 1 else x)
    return tuple(batch), m, n, k


def _describe(name, shape, strides):
    return "%s (shape %s, strides %s in elements)" % (name, tuple(shape), tuple(strides))


def _layout_or_raise(name, view, prefer):
    shape, strides = view
    layout = matrix_layout(shape[-2], shape[-1], strides[-2], strides[-1], prefer)
    if layout is None:
        raise ValueError("%s: neither its rows nor its columns are contiguous, so hgemm cannot "
                         "read it as stored or transposed; pass a copy (e.g. .contiguous())"
                         % _describe(name, shape, strides))
    return layout


def _batch_stride_or_raise(name, view, batch_shape):
    stride = batch_stride(batch_shape, *view)
    if stride is None:
        raise ValueError("%s: its batch dimensions do not step through the batch %s by one "
                         "stride (dimensions flatten when stride[i] == stride[i+1] * "
                         "size[i+1]); pass a copy (e.g. .contiguous())"
                         % (_describe(name, *view), batch_shape))
    return stride


def plan(a, b, out):
    """The hgemm_gemm call for out = a @ b (numpy.matmul's shapes), each of
    a, b and out given as (shape, strides in elements). Returns a Plan;
    raises ValueError when the shapes do not fit or a layout needs a copy.

    out's rows must be contiguous, or its columns: then the product is
    computed transposed (out^T = b^T a^T: Plan.swap, a and b trade places).
    a prefers op N and b op T where either would do (the form every kernel
    serves). A batch whose b is broadcast (stride 0) and whose a and out
    entries follow one another row after row is one product of batch * m
    rows instead (a (B, S, K) @ W: one GEMM, not B)."""
    a = (tuple(a[0]), tuple(a[1]))
    b = (tuple(b[0]), tuple(b[1]))
    out = (tuple(out[0]), tuple(out[1]))
    for name, (shape, strides) in (("a", a), ("b", b), ("out", out)):
        if len(strides) != len(shape):
            raise ValueError("%s: %d strides for %d dimensions" % (name, len(strides), len(shape)))
    batch_shape, m, n, k = matmul_shapes(a[0], b[0])
    if out[0] != batch_shape + (m, n):
        raise ValueError("out has shape %s; a @ b has shape %s" % (out[0], batch_shape + (m, n)))
    batch = 1
    for size in batch_shape:
        batch *= size

    if batch == 0 or m == 0 or n == 0:  # nothing is read or written
        return Plan(False, m, n, k, batch, OP_N, min_ld(k), 0, OP_T, min_ld(k), 0, min_ld(n), 0)

    # out's layout decides whether the product runs transposed: out^T = b^T a^T
    # has out's columns for rows, and a and b trade places with their ops
    # flipped (op N of b^T is op T of b, with the same leading dimension).
    op_c, ldc = _layout_or_raise("out", out, OP_N)
    swap = op_c == OP_T
    if k == 0:  # out = beta * out: A and B are never read, any layout will do
        op_a, lda, stride_a, op_b, ldb, stride_b = OP_N, min_ld(0), 0, OP_T, min_ld(0), 0
    else:
        op_a, lda = _layout_or_raise("a", a, OP_N)
        op_b, ldb = _layout_or_raise("b", b, OP_T)
        stride_a, stride_b = _batch_stride_or_raise("a", a, batch_shape), \
            _batch_stride_or_raise("b", b, batch_shape)
    stride_c = _batch_stride_or_raise("out", out, batch_shape)
    if swap:
        m, n = n, m
        op_a, lda, stride_a, op_b, ldb, stride_b = (
            1 - op_b, ldb, stride_b, 1 - op_a, lda, stride_a)

    # One B for every entry, and entries of A and C that continue one another
    # row after row: the batch is one matrix of batch * m rows.
    if batch > 1 and k > 0 and stride_b == 0 and op_a == OP_N and batch * m <= MAX_DIM:
        rows_a = stride_a if m == 1 else lda   # m == 1: the entry stride is the row stride
        rows_c = stride_c if m == 1 else ldc
        if (stride_a == m * rows_a and stride_c == m * rows_c and rows_a >= k and rows_c >= n
                and rows_a % ALIGN == 0 and rows_c % ALIGN == 0):
            return Plan(swap, batch * m, n, k, 1, op_a, rows_a, 0, op_b, ldb, 0, rows_c, 0)
    return Plan(swap, m, n, k, batch, op_a, lda, stride_a, op_b, ldb, stride_b, ldc, stride_c)
