# A planted fault for the Triton softmax: the same result, but each program walks its row in a
# permuted order (column 33 * i mod BLOCK), so neighbouring threads load words 132 bytes apart and
# every load touches a sector of its own instead of sharing them.
import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = (tl.arange(0, BLOCK) * 33) % BLOCK
    mask = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)
