# Row-wise softmax in cuTile: one block per row, the whole row as one tile (TILE >= the row's
# length, the tail padded with -inf so that it adds nothing). Exported to kernels/cutile/exported/
# by ci/cutile_export.py (kernels/cutile/export.json).
import cuda.tile as ct


@ct.kernel
def softmax_rows(out, x, TILE: ct.Constant[int]):
    row = ct.bid(0)
    t = ct.load(x, index=(row, 0), shape=(1, TILE), padding_mode=ct.PaddingMode.NEG_INF, allow_tma=False)
    e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
    ct.store(out, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True), allow_tma=False)
