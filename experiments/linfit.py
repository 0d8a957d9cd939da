"""Small statistics for the experiment scripts, standard library only: rank
correlation, least squares with R^2 and leave-one-out error, and the
slowdown models of seed 000 Fig. 11 and seed 001 Tables 5-6.

The slowdown models describe a workload's time on NVMM over its time on
DRAM, `norm`, by its NVMM request frequency `f` (requests per microsecond
of the DRAM run): every request pays some extra time `c` on NVMM, so
`norm - 1 = f * c`. The frequency-only model takes one `c` for every
workload; the full model lets `c` depend on the workload,

    c = a + b * ACT/REQ + d * (writes / requests) + e * f

(a row miss costs more than a hit, a write more than a read, and
requests that follow each other closely meet rows still inside their
stretched tRAS), which is linear in the features f, f*ACT/REQ, f*w, f^2.
"""


def spearman(xs, ys):
    """Spearman's rank correlation (ties ranked in input order; the
    figures it is used on are floats without ties)."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        for rank, i in enumerate(order):
            r[i] = rank
        return r
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx and vy else 0.0


def solve(a, b):
    """Solves the square system a x = b by Gaussian elimination with
    partial pivoting; raises ValueError when it is singular."""
    n = len(b)
    m = [list(map(float, row)) + [float(v)] for row, v in zip(a, b)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-10:
            raise ValueError("singular system: the features are linearly dependent")
        m[col], m[piv] = m[piv], m[col]
        for r in range(col + 1, n):
            k = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= k * m[col][c]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def lstsq(rows, ys):
    """Least-squares coefficients of y = sum(beta_j x_j) (no intercept
    unless a column of ones is among the features). The columns are scaled
    to unit norm first, so that features of different magnitudes do not
    make the normal equations look singular."""
    k = len(rows[0])
    scale = [sum(r[j] ** 2 for r in rows) ** 0.5 or 1.0 for j in range(k)]
    xs = [[r[j] / scale[j] for j in range(k)] for r in rows]
    ata = [[sum(r[i] * r[j] for r in xs) for j in range(k)] for i in range(k)]
    aty = [sum(r[i] * y for r, y in zip(xs, ys)) for i in range(k)]
    return [b / c for b, c in zip(solve(ata, aty), scale)]


def fit(rows, ys):
    """Fits y on the feature rows; returns a dict with the coefficients
    (`beta`), the predictions, R^2 (1 - residual / total sum of squares
    about the mean of y), the leave-one-out predictions (each point
    predicted by the fit over the others) and their root mean square
    error."""
    beta = lstsq(rows, ys)
    pred = [sum(b * x for b, x in zip(beta, r)) for r in rows]
    mean = sum(ys) / len(ys)
    ss_res = sum((y - p) ** 2 for y, p in zip(ys, pred))
    ss_tot = sum((y - mean) ** 2 for y in ys)
    loo = []
    for i in range(len(ys)):
        rest = [r for j, r in enumerate(rows) if j != i]
        yrest = [y for j, y in enumerate(ys) if j != i]
        bi = lstsq(rest, yrest)
        loo.append(sum(b * x for b, x in zip(bi, rows[i])))
    loo_rmse = (sum((y - p) ** 2 for y, p in zip(ys, loo)) / len(ys)) ** 0.5
    return {"beta": beta, "pred": pred, "r2": 1 - ss_res / ss_tot if ss_tot else 1.0,
            "loo": loo, "loo_rmse": loo_rmse}


def slowdown_models(rows, exception_below=0.75, least=0.05, explained_within=0.25):
    """Seed 000 Fig. 11's reading made quantitative. `rows`: dicts with
    name, norm (time on NVMM / DRAM), freq (NVMM requests per second of the
    DRAM run), act_per_req and rw_ratio (reads / writes, None for no writes).

    Returns the frequency-only fit (norm - 1 = k f), the full fit (see the
    module's docstring), and per workload both models' leave-one-out
    predictions. An exception slows down less than `exception_below` of
    what the frequency-only model, fitted over the other workloads,
    predicts (and it predicts at least `least`); the full model explains
    it when its own leave-one-out prediction is within `explained_within`
    of the slowdown, and the reason is the feature that lowers its
    prediction most against the typical workload."""
    us = [r["freq"] / 1e6 for r in rows]  # requests per microsecond
    ys = [r["norm"] - 1 for r in rows]
    act = [r["act_per_req"] for r in rows]
    # Writes / requests (rw_ratio None: no writes).
    wsh = [0.0 if r["rw_ratio"] is None else 1 / (1 + r["rw_ratio"]) for r in rows]
    fonly = fit([[f] for f in us], ys)
    # A feature that does not vary (ACT/REQ is 1 for every workload under
    # coarse) is the frequency term again: it is left out, coefficient 0.
    varies = [max(v) - min(v) > 1e-9 for v in (act, wsh)]
    feats = [[f] + [f * x for x, keep in zip((a, w), varies) if keep] + [f * f]
             for f, a, w in zip(us, act, wsh)]
    full = fit(feats, ys)
    beta = iter(full["beta"])
    full["beta"] = [next(beta)] + [next(beta) if keep else 0.0 for keep in varies] + [next(beta)]
    # The frequency-only slope is the mean per-request cost weighted by f^2;
    # a workload's features against those means say why it differs.
    weight = sum(f * f for f in us)
    mean = {k: sum(f * f * v for f, v in zip(us, vals)) / weight
            for k, vals in (("act", act), ("w", wsh), ("f", us))}
    _, b, d, e = full["beta"]
    out = []
    for i, r in enumerate(rows):
        f = us[i]
        pred0, pred1 = fonly["loo"][i], full["loo"][i]
        item = {"name": r["name"], "norm": r["norm"], "freq": r["freq"],
                "fonly_pred": 1 + pred0, "full_pred": 1 + pred1,
                "ratio_fonly": ys[i] / pred0 if pred0 > 0 else None,
                "ratio_full": ys[i] / pred1 if pred1 > 0 else None,
                "terms": {"ACT/REQ": f * b * (act[i] - mean["act"]),
                          "write share": f * d * (wsh[i] - mean["w"]),
                          "request rate": f * e * (f - mean["f"])}}
        item["exception"] = pred0 >= least and ys[i] < exception_below * pred0
        item["explained"] = (item["exception"] and pred1 > 0
                             and abs(ys[i] / pred1 - 1) <= explained_within)
        item["reason"] = min(item["terms"], key=item["terms"].get)
        out.append(item)
    return {"fonly": {"k_us": fonly["beta"][0], "r2": fonly["r2"], "loo_rmse": fonly["loo_rmse"]},
            "full": {"a_us": full["beta"][0], "b_us": b, "d_us": d, "e_us2": e,
                     "r2": full["r2"], "loo_rmse": full["loo_rmse"]},
            "means": mean, "workloads": out}


def hit_rate_models(rows, exception_below=0.75, least=0.05):
    """Seed 001 Tables 5-6 made quantitative. `rows`: dicts with name, norm,
    llc_hit_rate and req_per_sec (NVMM requests per second of the NVMM run).

    Fits the slowdown on the LLC hit rate h alone (norm = a + b h), on the
    access frequency alone (norm - 1 = k f, f in requests per microsecond of
    the DRAM run: requests / (NVMM run time / norm)) and on both
    (norm - 1 = f (a + b h)); exceptions by their leave-one-out residual
    under the frequency-only model, as in `slowdown_models`."""
    us = [r["req_per_sec"] * r["norm"] / 1e6 for r in rows]
    hs = [r["llc_hit_rate"] for r in rows]
    norm = [r["norm"] for r in rows]
    ys = [n - 1 for n in norm]
    fits = {
        "LLC hit rate: norm = a + b h": fit([[1.0, h] for h in hs], norm),
        "frequency: norm - 1 = k f": fit([[f] for f in us], ys),
        "both: norm - 1 = f (a + b h)": fit([[f, f * h] for f, h in zip(us, hs)], ys),
    }
    fonly = fits["frequency: norm - 1 = k f"]
    out = []
    for i, r in enumerate(rows):
        pred = fonly["loo"][i]
        out.append({"name": r["name"], "norm": r["norm"], "freq_dram_us": us[i],
                    "fonly_pred": 1 + pred,
                    "exception": pred >= least and ys[i] < exception_below * pred})
    return {"fits": {k: {"beta": v["beta"], "r2": v["r2"], "loo_rmse": v["loo_rmse"]}
                     for k, v in fits.items()},
            "workloads": out}
