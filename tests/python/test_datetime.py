"""numpy's datetime64 and timedelta64 in kernels (numba's NPDatetime and NPTimedelta): arrays
and scalars of one unit passed to kernels, arithmetic and comparisons between units (years and
months converted by the calendar), NaT, and device arrays of dates (to_device, copy_to_host,
view). numba-cuda's test_datetime, and more: on the GPU the results are compared with numpy
and with numba-cuda running the same kernels; without one the PTX is checked by ptxas and the
packing of every argument by the test driver."""
import numpy as np
import pytest

import nbcuda as cuda

from conftest import USING_TESTDRIVER, numba_side
from test_compile import compile_checked

NAT = np.datetime64("NaT", "D")


# ------------------------------------------------------------ kernels (numba's language) --

def k_diff(start, end, delta):
    for i in range(delta.size):
        delta[i] = end[i] - start[i]


def k_scalars(dates, target, delta, matches, outdelta):
    for i in range(matches.size):
        matches[i] = dates[i] == target
        outdelta[i] = dates[i] - delta


def k_timedeltas(h, d, k, f, add, sub, mul_i, mul_f, div_i, div_f, ratio, neg, ab, count):
    for i in range(h.size):
        add[i] = h[i] + d[i]           # hours + days: hours
        sub[i] = d[i] - h[i]
        mul_i[i] = h[i] * k[i] + k[i] * h[i]
        mul_f[i] = h[i] * f[i]
        div_i[i] = h[i] / k[i]         # a zero divisor gives NaT
        div_f[i] = h[i] / f[i]
        ratio[i] = h[i] / d[i]         # float64, NaN with NaT
        neg[i] = -h[i] + (+d[i])
        ab[i] = abs(h[i])
        count[i] = int(d[i])


def k_dates(day, month, year, dd, dh, by_day, by_hour, month_days, year_days, gap, back):
    for i in range(day.size):
        by_day[i] = day[i] + dd[i]      # datetime64[D] + timedelta64[D]
        by_hour[i] = dh[i] + day[i]     # timedelta64[h] + datetime64[D]: hours
        month_days[i] = month[i] + dd[i]  # months become days by the calendar
        year_days[i] = year[i] - dd[i]
        gap[i] = day[i] - month[i]      # datetime64 - datetime64: days
        back[i] = by_hour[i] - dh[i]


def k_compare(a, b, s, t, eq, ne, lt, le, gt, ge, tlt, teq):
    for i in range(a.size):
        eq[i] = a[i] == b[i]            # days with seconds
        ne[i] = a[i] != b[i]
        lt[i] = a[i] < b[i]
        le[i] = a[i] <= b[i]
        gt[i] = a[i] > b[i]
        ge[i] = a[i] >= b[i]
        tlt[i] = s[i] < t[i]            # timedelta64[s] with timedelta64[ms]
        teq[i] = s[i] == t[i]


def k_minmax(day, later, dd, hi, lo, thi, tup, ends):
    # min/max of one unit, as Python's builtins: a NaT compares False, so the earlier value
    # is kept where one is NaT
    for i in range(day.size):
        hi[i] = max(day[i], later[i])
        lo[i] = min(later[i], day[i], day[0])
        thi[i] = max(dd[i], -dd[i])
        tup[i] = min((later[i], day[i]))
    ends[0] = max(day)
    ends[1] = min(later)


def r_max(a, b):
    return max(a, b)


def r_add(a, b):
    return a + b


def r_mul(a, b):
    return a * b


def r_lt(a, b):
    return a < b


def r_int(a, b):
    return int(a)


def r_neg(a, b):
    return -a


def r_isnat(a, b):
    return np.isnat(a)


T0 = np.datetime64("2005-03-01", "D")  # globals are frozen as numba freezes them
WEEK = np.timedelta64(7, "D")


@cuda.jit(device=True)
def span(a, b):
    if a > b:
        return a - b
    return b - a


def k_globals(a, weeks, spans, pairs):
    for i in range(a.size):
        weeks[i] = (a[i] - T0) // WEEK
        spans[i] = span(a[i], T0)
        t = (a[i], spans[i])
        pairs[i] = t[0] + t[1]


def k_isnat(day, dd, out):
    for i in range(day.size):
        out[i] = np.isnat(day[i]) or np.isnat(dd[i] - dd[0])


def k_isnat_arrays(day, out):
    np.isnat(day, out)  # numpy's ufunc with an explicit output


def k_numpy_only(a, b, fdiv, mod):
    # td // td and td % td: numpy's answers (numba-cuda types // as float64 and has no %)
    for i in range(a.size):
        fdiv[i] = a[i] // b[i]
        mod[i] = a[i] % b[i]


# ------------------------------------------------------------ inputs ----------------------

def _inputs():
    rng = np.random.default_rng(7)
    n = 64
    day = np.arange("1965-01-03", "2035-12-31", 400, dtype="datetime64[D]")[:n]
    day[3] = NAT
    month = (np.arange(n) * 37 - 900).astype("datetime64[M]")  # before and after 1970
    month[5] = NAT
    year = (np.arange(n) * 13 - 400).astype("datetime64[Y]")
    dd = rng.integers(-5000, 5000, n).astype("timedelta64[D]")
    dd[7] = np.timedelta64("NaT", "D")
    dh = rng.integers(-100000, 100000, n).astype("timedelta64[h]")
    k = rng.integers(-9, 9, n)
    k[0] = 0
    f = rng.uniform(-4, 4, n)
    f[1] = 0.0
    f[2] = np.nan
    sec = (day.astype("datetime64[s]") + rng.integers(-2, 2, n).astype("timedelta64[s]"))
    sec[9] = NAT
    s = rng.integers(-3, 3, n).astype("timedelta64[s]")
    t = (s.astype("timedelta64[ms]") + rng.integers(-1, 2, n).astype("timedelta64[ms]"))
    t[11] = np.timedelta64("NaT", "ms")
    return dict(day=day, month=month, year=year, dd=dd, dh=dh, k=k, f=f, sec=sec, s=s, t=t)


def run_kernels(cu):
    """Every kernel above jitted by cu (nbcuda or numba.cuda) and run on the inputs: the
    outputs by name."""
    x = _inputs()
    n = x["day"].size
    out = {}

    def empty(dtype):
        return np.zeros(n, dtype)

    delta = empty("m8[D]")
    cu.jit(k_diff)[1, 1](x["day"], x["day"] + x["dd"], delta)
    out["diff"] = delta

    matches, outdelta = empty(np.bool_), empty("M8[D]")
    cu.jit(k_scalars)[1, 1](x["day"], x["day"][5], x["dd"][0], matches, outdelta)
    out.update(matches=matches, outdelta=outdelta)

    names = ("add", "sub", "mul_i", "mul_f", "div_i", "div_f", "ratio", "neg", "ab", "count")
    tds = {m: empty("f8" if m == "ratio" else "i8" if m == "count" else "m8[h]") for m in names}
    cu.jit(k_timedeltas)[1, 1](x["dh"], x["dd"], x["k"], x["f"], *tds.values())
    out.update(tds)

    dates = {"by_day": empty("M8[D]"), "by_hour": empty("M8[h]"), "month_days": empty("M8[D]"),
             "year_days": empty("M8[D]"), "gap": empty("m8[D]"), "back": empty("M8[h]")}
    cu.jit(k_dates)[1, 1](x["day"], x["month"], x["year"], x["dd"], x["dh"], *dates.values())
    out.update(dates)

    nat = empty(np.bool_)
    cu.jit(k_isnat)[1, 1](x["day"], x["dd"], nat)
    out["nat"] = nat

    later = x["day"] + x["dd"]
    mm = {"hi": empty("M8[D]"), "lo": empty("M8[D]"), "thi": empty("m8[D]"),
          "tup": empty("M8[D]"), "ends": np.zeros(2, "M8[D]")}
    cu.jit(k_minmax)[1, 1](x["day"], later, x["dd"], *mm.values())
    out.update(mm)

    cmps = {m: empty(np.bool_) for m in ("eq", "ne", "lt", "le", "gt", "ge", "tlt", "teq")}
    cu.jit(k_compare)[1, 1](x["day"], x["sec"], x["s"], x["t"], *cmps.values())
    out.update(cmps)
    return out


def numpy_expected():
    """What numpy computes for the same operations (years and months converted to days with
    astype, which numpy needs spelled out)."""
    x = _inputs()
    day, month, year, dd, dh = x["day"], x["month"], x["year"], x["dd"], x["dh"]
    later = day + dd
    with np.errstate(all="ignore"):
        by_hour = dh + day
        return {
            "hi": np.array([max(a, b) for a, b in zip(day, later)]),  # Python's builtins
            "lo": np.array([min(b, a, day[0]) for a, b in zip(day, later)]),
            "thi": np.array([max(t, -t) for t in dd]),
            "tup": np.array([min((b, a)) for a, b in zip(day, later)]),
            "ends": np.array([max(day), min(later)]),
            "diff": (day + dd) - day,
            "matches": day == day[5], "outdelta": day - dd[0],
            "add": dh + dd, "sub": dd - dh, "neg": -dh + dd, "ab": abs(dh),
            "ratio": dh / dd, "count": dd.astype(np.int64),
            "mul_i": dh * x["k"] * 2, "mul_f": dh * x["f"], "div_i": dh / x["k"],
            "div_f": dh / x["f"],
            "by_day": day + dd, "by_hour": by_hour,
            "month_days": month.astype("M8[D]") + dd, "year_days": year.astype("M8[D]") - dd,
            "gap": day - month.astype("M8[D]"), "back": by_hour - dh,
            "eq": day == x["sec"], "ne": day != x["sec"], "lt": day < x["sec"],
            "le": day <= x["sec"], "gt": day > x["sec"], "ge": day >= x["sec"],
            "tlt": x["s"] < x["t"], "teq": x["s"] == x["t"],
            "nat": np.isnat(day) | np.isnat(dd - dd[0]),
        }


# ------------------------------------------------------------ tests -----------------------

def test_types_and_signatures():
    d = cuda.from_dtype(np.dtype("datetime64[D]"))
    t = cuda.from_dtype(np.dtype("m8[ns]"))
    assert str(d) == "datetime64[D]" and str(t) == "timedelta64[ns]"
    assert str(t[:]) == "array(timedelta64[ns], 1d, A)"
    assert str(cuda.from_dtype(np.dtype("M8"))) == "datetime64[]"
    # numba's spellings of the same signature, in text
    for sig in ("void(NPDatetime('D')[:], NPTimedelta('D'))",
                "void(datetime64[D][:], timedelta64[D])",
                "void(array(datetime64[D], 1d, A), NPTimedelta(\"D\"))"):
        k = cuda.jit(sig)(lambda a, b: None)
        assert [str(x) for x in k.signatures[0]] == ["array(datetime64[D], 1d, A)",
                                                     "timedelta64[D]"]
    with pytest.raises(Exception, match="unknown datetime unit"):
        cuda.jit("void(datetime64[Q])")(lambda a: None)


def test_every_kernel_compiles_to_ptx_ptxas_accepts(tmp_path):
    sigs = {
        k_diff: "void(datetime64[D][::1], datetime64[D][::1], timedelta64[D][::1])",
        k_scalars: "void(datetime64[D][::1], datetime64[D], timedelta64[D], boolean[::1], "
                   "datetime64[D][::1])",
        k_timedeltas: "void(timedelta64[h][::1], timedelta64[D][::1], int64[::1], "
                      "float64[::1], " + ", ".join(["timedelta64[h][::1]"] * 6) +
                      ", float64[::1], timedelta64[h][::1], timedelta64[h][::1], int64[::1])",
        k_dates: "void(datetime64[D][::1], datetime64[M][::1], datetime64[Y][::1], "
                 "timedelta64[D][::1], timedelta64[h][::1], datetime64[D][::1], "
                 "datetime64[h][::1], datetime64[D][::1], datetime64[D][::1], "
                 "timedelta64[D][::1], datetime64[h][::1])",
        k_compare: "void(datetime64[D][::1], datetime64[s][::1], timedelta64[s][::1], "
                   "timedelta64[ms][::1], " + ", ".join(["boolean[::1]"] * 8) + ")",
        k_isnat: "void(datetime64[D][::1], timedelta64[D][::1], boolean[::1])",
        k_isnat_arrays: "void(datetime64[D][:, :], boolean[:, ::1])",
        k_minmax: "void(datetime64[D][::1], datetime64[D][::1], timedelta64[D][::1], "
                  "datetime64[D][::1], datetime64[D][::1], timedelta64[D][::1], "
                  "datetime64[D][::1], datetime64[D][::1])",
        k_numpy_only: "void(timedelta64[s][::1], timedelta64[ms][::1], int64[::1], "
                      "timedelta64[ms][::1])",
    }
    for fn, sig in sigs.items():
        compile_checked(fn, sig, tmp_path)


@pytest.mark.parametrize("fn, types, message", [
    (r_add, "(datetime64[D], datetime64[D])", "Invalid use of \\+"),
    (r_add, "(timedelta64[M], timedelta64[D])", "Invalid use of \\+"),
    (r_add, "(datetime64[D], timedelta64[M])", "Invalid use of \\+"),
    (r_mul, "(timedelta64[D], timedelta64[D])", "Invalid use of \\*"),
    (r_lt, "(timedelta64[Y], timedelta64[s])", "Invalid use of <"),
    (r_int, "(datetime64[D], int64)",
     "int\\(\\) of a datetime64 is not supported but for datetime64\\[ns\\]"),
    (r_neg, "(datetime64[D], int64)", "Invalid use of -"),
    (r_isnat, "(float64, int64)", "numpy.isnat: it takes a datetime64 or timedelta64"),
    (r_max, "(datetime64[D], datetime64[s])", "Invalid use of max"),  # numba: one unit only
    (r_max, "(timedelta64[D], int64)", "Invalid use of max"),
])
def test_operations_numba_refuses(fn, types, message):
    with pytest.raises(cuda.TypingError, match=message):
        cuda.compile_ptx(fn, types, device=True, cc=(9, 0))


def test_device_arrays_of_dates(tdrv):
    arr = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    d = cuda.to_device(arr)
    assert d.dtype == arr.dtype and d.shape == arr.shape
    assert d.__cuda_array_interface__["typestr"] == "<M8[D]"
    got = d.copy_to_host()
    assert got.dtype == arr.dtype and (got == arr).all()
    viewed = d.view(np.int64)  # numba's test_datetime_view_as_int64
    assert viewed.dtype == np.int64 and viewed.gpu_data == d.gpu_data
    np.testing.assert_array_equal(viewed.copy_to_host(), arr.view(np.int64))
    back = viewed.view("m8[s]")
    assert back.dtype == np.dtype("m8[s]") and back.__cuda_array_interface__["typestr"] == "<m8[s]"
    assert cuda.device_array(3, cuda.from_dtype(np.dtype("m8[us]"))).dtype == np.dtype("m8[us]")
    e = cuda.device_array((2, 3), dtype="timedelta64[ms]")
    assert e.dtype == np.dtype("m8[ms]") and e.copy_to_host().dtype == np.dtype("m8[ms]")
    wrapped = cuda.from_cuda_array_interface(d.__cuda_array_interface__, owner=d)
    assert wrapped.dtype == arr.dtype
    # copies both ways into existing arrays, and assignments (a date of another unit is
    # converted to the array's, as numpy converts it)
    host = np.zeros_like(arr)
    d.copy_to_host(host)
    np.testing.assert_array_equal(host, arr)
    d.copy_to_device(arr[::-1].copy())
    d[0] = np.datetime64("2001-01-01", "D")
    d[1:3] = np.array(["2010-01-01", "2010-01-02"], dtype="M8[D]")
    d[5] = np.datetime64("2011-01-01T12", "h")
    want = arr[::-1].copy()
    want[0], want[1:3], want[5] = "2001-01-01", ["2010-01-01", "2010-01-02"], "2011-01-01"
    np.testing.assert_array_equal(d.copy_to_host(), want)
    assert d[2] == want[2] and d[1:4].copy_to_host().dtype == arr.dtype


def test_launches_type_and_check_units(tdrv):
    x = _inputs()
    k = cuda.jit(k_diff)
    out = np.zeros(x["day"].size, "m8[D]")
    k[1, 1](x["day"], x["day"], out)                   # host arrays
    k[1, 1](cuda.to_device(x["day"]), x["day"], cuda.to_device(out))  # device arrays
    k[1, 1](x["sec"], x["sec"], np.zeros(x["sec"].size, "m8[s]"))     # another unit
    assert [str(t) for t in k.signatures[0]] == ["array(datetime64[D], 1d, C)"] * 2 + [
        "array(timedelta64[D], 1d, C)"]
    assert len(k.signatures) == 2
    s = cuda.jit(k_scalars)
    s[1, 1](x["day"], x["day"][5], x["dd"][0], np.zeros(x["day"].size, np.bool_),
            np.zeros(x["day"].size, "M8[D]"))
    assert [str(t) for t in s.signatures[0]][1:3] == ["datetime64[D]", "timedelta64[D]"]
    eager = cuda.jit("void(datetime64[D][:], timedelta64[D])")(lambda a, b: None)
    with pytest.raises(TypeError, match="argument 1: expected array\\(datetime64\\[D\\], 1d, A"
                                        "\\), got an array of datetime64\\[s\\]"):
        eager[1, 1](x["sec"], x["dd"][0])
    with pytest.raises(TypeError, match="argument 1: .* got an array of datetime64\\[s\\]"):
        eager[1, 1](cuda.to_device(x["sec"]), x["dd"][0])
    with pytest.raises(TypeError, match="argument 2: expected timedelta64\\[D\\] \\(a numpy "
                                        "scalar of that unit\\)"):
        eager[1, 1](x["day"], x["s"][0])
    with pytest.raises(TypeError, match="argument 2"):
        eager[1, 1](x["day"], 3)
    eager[1, 1](x["day"], x["dd"][0])


@pytest.mark.skipif(USING_TESTDRIVER, reason="kernels run on a GPU only")
def test_results_match_numpy_and_numba_cuda(tmp_path):
    mine = run_kernels(cuda)
    expected = numpy_expected()
    for key, want in expected.items():
        np.testing.assert_array_equal(mine[key], want, err_msg=key)
    theirs = numba_side("test_datetime", "t.run_kernels(cuda)", tmp_path / "numba.npz")
    for key in mine:
        np.testing.assert_array_equal(mine[key], theirs[key], err_msg=key)


@pytest.mark.skipif(USING_TESTDRIVER, reason="kernels run on a GPU only")
def test_floor_division_and_modulo_match_numpy():
    x = _inputs()
    a, b = x["s"], x["t"]
    fdiv, mod = np.zeros(a.size, np.int64), np.zeros(a.size, "m8[ms]")
    cuda.jit(k_numpy_only)[1, 1](a, b, fdiv, mod)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(fdiv, a // b)
        np.testing.assert_array_equal(mod, a % b)
    day = x["day"].reshape(8, 8)
    nat = np.zeros(day.shape, np.bool_)
    cuda.jit(k_isnat_arrays)[1, 1](day, nat)
    np.testing.assert_array_equal(nat, np.isnat(day))


def test_globals_device_functions_and_ufuncs(tdrv):
    a = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    weeks, spans, pairs = np.zeros(a.size, np.int64), np.zeros(a.size, "m8[D]"), \
        np.zeros(a.size, "M8[D]")
    k = cuda.jit(k_globals)
    k[1, 1](a, weeks, spans, pairs)
    b = a + np.arange(a.size).astype("m8[D]")

    @cuda.vectorize([(cuda.from_dtype(a.dtype), cuda.from_dtype(a.dtype))])
    def timediff(start, end):  # numba's test_ufunc
        return end - start

    @cuda.guvectorize([(cuda.from_dtype(a.dtype), cuda.from_dtype(a.dtype),
                        cuda.from_dtype(np.dtype("m8[D]"))[:])], "(),()->()")
    def timediff_g(start, end, out):  # numba's test_gufunc
        out[0] = end - start

    delta, delta_g = timediff(a, b), timediff_g(a, b)
    assert delta.dtype == delta_g.dtype == np.dtype("m8[D]")
    if not USING_TESTDRIVER:
        np.testing.assert_array_equal(weeks, (a - T0) // WEEK)
        np.testing.assert_array_equal(spans, abs(a - T0))
        np.testing.assert_array_equal(pairs, a + abs(a - T0))
        np.testing.assert_array_equal(delta, b - a)
        np.testing.assert_array_equal(delta_g, b - a)


def k_records(a, out):
    for i in range(a.size):
        a[i].t = a[i].t + a[i].d
        a[i].t += a[i].d
        out[i] = a[i].t - a[0].t
        a[i]["v"] = out[i] / a[i].d


def test_records_with_date_fields(tdrv):
    rec = np.dtype([("t", "M8[ns]"), ("v", "f8"), ("d", "m8[s]")], align=True)
    assert str(cuda.from_dtype(rec)) == ("Record(t[type=datetime64[ns];offset=0],v[type=float64;"
                                         "offset=8],d[type=timedelta64[s];offset=16];24;True)")
    a = np.zeros(6, rec)
    a["t"] = (np.arange(6) * 1000).astype("M8[s]")
    a["d"] = np.arange(1, 7).astype("m8[s]")
    a["d"][3] = np.timedelta64("NaT", "s")
    want = a.copy()
    want["t"] = want["t"] + 2 * want["d"]
    out_want = want["t"] - want["t"][0]
    with np.errstate(all="ignore"):
        want["v"] = out_want / want["d"]
    out = np.zeros(6, "m8[ns]")
    k = cuda.jit(k_records)
    k[1, 1](a, out)
    d = cuda.to_device(a)
    assert d.dtype == rec and d.copy_to_host().dtype == rec
    assert [str(t) for t in k.signatures[0]][1] == "array(timedelta64[ns], 1d, C)"
    if not USING_TESTDRIVER:
        np.testing.assert_array_equal(out, out_want)
        np.testing.assert_array_equal(a["t"], want["t"])
        np.testing.assert_array_equal(a["v"], want["v"])
