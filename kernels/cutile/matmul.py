# Tiled single-precision matrix multiply in cuTile, C = A * B (row-major): block (i, j) computes the
# BM x BN tile of C at tile row j, tile column i, as kernels/gemm/gemm_naive.cu's grid is laid out.
# The tiles at the edges are padded with zeros. Exported by ci/cutile_export.py.
import cuda.tile as ct


@ct.kernel
def matmul_tiled(a, b, c, BM: ct.Constant[int], BN: ct.Constant[int], BK: ct.Constant[int]):
    col_tile = ct.bid(0)
    row_tile = ct.bid(1)
    acc = ct.full((BM, BN), 0, dtype=ct.float32)
    for k in range(ct.num_tiles(a, axis=1, shape=(BM, BK))):
        ta = ct.load(a, index=(row_tile, k), shape=(BM, BK), padding_mode=ct.PaddingMode.ZERO, allow_tma=False)
        tb = ct.load(b, index=(k, col_tile), shape=(BK, BN), padding_mode=ct.PaddingMode.ZERO, allow_tma=False)
        acc = ct.mma(ta, tb, acc)
    ct.store(c, index=(row_tile, col_tile), tile=acc, allow_tma=False)
