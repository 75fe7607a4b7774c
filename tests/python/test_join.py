"""tessera join against split pieces made here with netCDF4.

make_pieces() writes what src/strategy/split.c writes (piece dimensions named on
first use, a second extent `<dim>_t1`, tessera_* attributes, empty tiles left
out, replicated variables whole in every piece), from global arrays; every test
then joins and compares with those global arrays, raw and bit for bit.
"""
import os

import netCDF4
import numpy as np

from tessera import join as tj


def joined(base):
    """Where `tessera join BASE` puts the joined file: the sibling directory."""
    return os.path.join(tj.default_out_dir(base), os.path.basename(base))

NREC = 2
# 2 x 2 ranks over a 5 x 7 (south_north x west_east) grid, deliberately uneven:
# rows [0,3) [3,5), columns [0,4) [4,7); staggered west_east_stag (8) gives the
# last column of ranks one point more, as WRF (and tessera-bench) do.
ROWS, COLS = [(0, 3), (3, 2)], [(0, 4), (4, 3)]
GRID = [(r, c) for r in ROWS for c in COLS]
DIMS = {"Time": None, "DateStrLen": 19, "bottom_top": 3, "south_north": 5,
        "west_east": 7, "west_east_stag": 8}


def tiles2d(stag=0):
    return [((r0, c0), (rn, cn + (stag if c0 + cn == 7 else 0))) for (r0, rn), (c0, cn) in GRID]


def tiles3d(nz, stag=0):
    return [((0,) + s, (nz,) + c) for s, c in tiles2d(stag)]


def is_rec(v):
    return bool(v["dims"]) and DIMS[v["dims"][0]] is None


def raw(a):
    """Bytes with the dtype: NaN payloads and -0.0 compare exactly."""
    a = np.asarray(a)
    return a.dtype.str, a.shape, a.tobytes()


def var(name, dtype, dims, tiles=None, atts=None, seed=0):
    """A variable with deterministic global data (record axis first when the
    first dimension is Time), and its tiles per rank (None: replicated)."""
    shape = tuple(NREC if DIMS[d] is None else DIMS[d] for d in dims)
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "S":
        data = rng.choice(list(b"0123456789-_:"), size=shape).astype(np.uint8).view("S1")
    elif np.dtype(dtype).kind == "f":
        data = rng.normal(size=shape).astype(dtype)
        data.flat[:2] = [np.float32("nan"), -0.0]
    else:
        data = rng.integers(-1000, 1000, size=shape).astype(dtype)
    return {"name": name, "dtype": np.dtype(dtype), "dims": dims, "tiles": tiles,
            "atts": atts or {}, "data": data}


def make_pieces(base, variables, nranks=4, fmt="NETCDF3_64BIT_OFFSET", gatts=None):
    for r in range(nranks):
        ds = netCDF4.Dataset(tj.piece_path(base, r), "w", format=fmt)
        pdims = {}
        for v in variables:
            rec = is_rec(v)
            start, count = v["tiles"][r] if v["tiles"] else (None, None)
            if count is not None and 0 in count:
                continue  # split.c leaves a variable out of a piece where its tile is empty
            names = []
            for i, d in enumerate(v["dims"]):
                size = DIMS[d] if count is None or DIMS[d] is None else count[i - rec]
                k = 0
                while True:  # split.c's piece_dim(): first extent keeps the name
                    n = d if k == 0 else f"{d}_t{k}"
                    if n not in pdims:
                        ds.createDimension(n, size)
                        pdims[n] = size
                    if pdims[n] == size:
                        break
                    k += 1
                names.append(n)
            pv = ds.createVariable(v["name"], v["dtype"], names,
                                   fill_value=v["atts"].get("_FillValue"))
            pv.set_auto_maskandscale(False)
            pv.set_auto_chartostring(False)
            pv.setncatts({a: x for a, x in v["atts"].items() if a != "_FillValue"})
            if count is None:
                data = v["data"]
            else:
                pv.tessera_global_shape = np.array([DIMS[d] for d in v["dims"][rec:]], "i4")
                pv.tessera_tile_start = np.array(start, "i4")
                sl = tuple(slice(s, s + c) for s, c in zip(start, count))
                data = v["data"][(slice(None),) * rec + sl]
            if pv.ndim == 0:
                pv.assignValue(data)
            else:
                pv[:] = data
        ds.setncatts(gatts or {"TITLE": " OUTPUT FROM A TEST", "DX": np.float32(2500.0)})
        ds.tessera_split_rank = np.int32(r)
        ds.tessera_split_nranks = np.int32(nranks)
        ds.close()


def expected(v, holes_fill=None):
    """The global array, with points no tile covers set to @p holes_fill."""
    if holes_fill is None:
        return v["data"]
    rec = is_rec(v)
    cover = np.zeros(v["data"].shape[rec:], bool)
    for start, count in v["tiles"]:
        cover[tuple(slice(s, s + c) for s, c in zip(start, count))] = True
    out = v["data"].copy()
    out[(slice(None),) * rec + (~cover,)] = holes_fill
    return out


def read(path):
    ds = netCDF4.Dataset(path)
    ds.set_auto_maskandscale(False)
    ds.set_auto_chartostring(False)
    return ds


def check_joined(path, variables, fmt="NETCDF3_64BIT_OFFSET", fills=None):
    fills = fills or {}
    with read(path) as ds:
        assert ds.data_model == fmt
        assert not [a for a in ds.ncattrs() if a.startswith("tessera_")]
        assert ds.TITLE == " OUTPUT FROM A TEST" and ds.DX.dtype == np.float32
        assert ds.dimensions["Time"].isunlimited() and len(ds.dimensions["Time"]) == NREC
        assert list(ds.variables) == [v["name"] for v in variables]  # file order kept
        for v in variables:
            ov = ds.variables[v["name"]]
            assert ov.dimensions == v["dims"], v["name"]
            for d in v["dims"]:
                assert DIMS[d] is None or len(ds.dimensions[d]) == DIMS[d]
            assert raw(ov[...]) == raw(expected(v, fills.get(v["name"]))), v["name"]
            got = {a: ov.getncattr(a) for a in ov.ncattrs()}
            assert not [a for a in got if a.startswith("tessera_")]
            assert set(got) == set(v["atts"]), v["name"]
            for a, x in v["atts"].items():
                assert raw(got[a]) == raw(x) if not isinstance(x, str) else got[a] == x


def wrf_like():
    return [
        var("Times", "S1", ("Time", "DateStrLen"), seed=1),
        var("ZNU", "f4", ("Time", "bottom_top"), atts={"units": "", "stagger": ""}, seed=2),
        var("T2", "f4", ("Time", "south_north", "west_east"), tiles2d(),
            {"units": "K", "MemoryOrder": "XY ", "FieldType": np.int32(104)}, seed=3),
        var("U", "f4", ("Time", "bottom_top", "south_north", "west_east_stag"),
            tiles3d(3, stag=1), {"stagger": "X"}, seed=4),
        var("HGT", "f8", ("south_north", "west_east"), tiles2d(), {"units": "m"}, seed=5),
        var("LANDMASK3", "i4", ("bottom_top", "south_north", "west_east"), tiles3d(3), seed=6),
        var("PACKED", "i2", ("Time", "south_north", "west_east"), tiles2d(),
            {"scale_factor": np.float32(0.01), "add_offset": np.float32(270.0),
             "_FillValue": np.int16(-32767)}, seed=7),
        var("NSTEP", "i4", (), seed=8),
    ]


def test_record_and_fixed_2d_3d_uneven_tiles(tmp_path):
    base = str(tmp_path / "wrfout_d01_2026-01-01_00:00:00")
    variables = wrf_like()
    make_pieces(base, variables)
    assert tj.main(["-q", base]) == 0
    check_joined(joined(base), variables)


def test_cdf5_and_piece_list(tmp_path):
    base = str(tmp_path / "out")
    variables = wrf_like() + [
        var("BIG", "i8", ("Time", "south_north", "west_east"), tiles2d(), seed=9),
        var("UB", "u1", ("south_north", "west_east"), tiles2d(), seed=10)]
    make_pieces(base, variables, fmt="NETCDF3_64BIT_DATA")
    pieces = [tj.piece_path(base, r) for r in range(4)]
    out = tmp_path / "elsewhere" / "joined.nc"
    assert tj.main(["-q", "-o", str(out)] + pieces) == 0
    check_joined(str(out), variables, fmt="NETCDF3_64BIT_DATA")


def test_empty_tile_and_holes_filled(tmp_path):
    """Rank 3's tile is empty (the variable is absent from its piece) and no
    one covers rows 3-4 x columns 4-6: those points get _FillValue, or the
    type's default fill without one."""
    holey = tiles2d()[:3] + [((3, 4), (0, 3))]
    variables = wrf_like() + [
        var("HOLEY", "f4", ("Time", "south_north", "west_east"), holey,
            {"_FillValue": np.float32(-999.0)}, seed=11),
        var("HOLEY_I", "i4", ("south_north", "west_east"), holey, seed=12)]
    base = str(tmp_path / "holes")
    make_pieces(base, variables)
    with read(tj.piece_path(base, 3)) as ds:
        assert "HOLEY" not in ds.variables and "T2" in ds.variables
    assert tj.main(["-q", base]) == 0
    check_joined(joined(base), variables, fills={"HOLEY": np.float32(-999.0),
                                         "HOLEY_I": netCDF4.default_fillvals["i4"]})


def test_variable_absent_from_piece_zero_keeps_order(tmp_path):
    tiles = [((0, 0), (0, 4))] + tiles2d()[1:]
    tiles[2] = ((0, 0), (5, 4))  # rank 2 covers what rank 0 would have
    variables = wrf_like()
    variables.insert(3, var("ONLY13", "f4", ("Time", "south_north", "west_east"), tiles, seed=13))
    base = str(tmp_path / "order")
    make_pieces(base, variables)
    assert tj.main(["-q", base]) == 0
    check_joined(joined(base), variables)


def test_renamed_tile_dimension(tmp_path):
    """A replicated variable takes west_east whole (7) first, so the T2 tile
    (4 or 3 wide) gets west_east_t1; a second decomposition of the same
    dimension with another extent gets west_east_t2."""
    other = [((r0, 0), (rn, 7 - 2)) if c0 == 0 else ((r0, 5), (rn, 2))
             for (r0, rn), (c0, _) in GRID]
    variables = [var("XLONG_1D", "f4", ("west_east",), seed=14)] + wrf_like() + [
        var("OTHER", "f4", ("Time", "south_north", "west_east"), other, seed=15)]
    base = str(tmp_path / "renamed")
    make_pieces(base, variables)
    with read(tj.piece_path(base, 0)) as ds:
        assert ds.variables["T2"].dimensions == ("Time", "south_north", "west_east_t1")
        assert ds.variables["OTHER"].dimensions == ("Time", "south_north", "west_east_t2")
        assert len(ds.dimensions["west_east"]) == 7
    assert tj.main(["-q", base]) == 0
    check_joined(joined(base), variables)
    with read(joined(base)) as ds:
        assert set(ds.dimensions) == set(DIMS)  # no west_east_t<k> left


def test_replicated_from_piece_zero(tmp_path):
    variables = wrf_like()
    base = str(tmp_path / "rep")
    make_pieces(base, variables)
    with netCDF4.Dataset(tj.piece_path(base, 2), "a") as ds:
        ds.variables["Times"].set_auto_chartostring(False)
        ds.variables["Times"][0] = np.full(19, b"X", "S1")
    assert tj.main(["-q", base]) == 0
    check_joined(joined(base), variables)  # Times as piece 0 has them


def test_overwrite_needs_force(tmp_path, capsys):
    variables = wrf_like()
    base = str(tmp_path / "ow")
    make_pieces(base, variables)
    os.makedirs(tj.default_out_dir(base))
    open(joined(base), "w").write("not yet")
    assert tj.main([base]) == 1
    assert f"{joined(base)}: exists" in capsys.readouterr().err
    assert open(joined(base)).read() == "not yet"
    assert tj.main(["--force", base]) == 0
    assert "joined 4 pieces" in capsys.readouterr().out
    check_joined(joined(base), variables)


def test_out_dir_and_never_beside_the_pieces(tmp_path, capsys):
    variables = wrf_like()
    pieces_dir = tmp_path / "run"
    pieces_dir.mkdir()
    base = str(pieces_dir / "wrfout_d01_2026-01-01_00:00:00")
    make_pieces(base, variables)
    # The default: a sibling directory, so `ncrcat run/wrfout_d01_*` sees pieces only.
    assert tj.default_out_dir(base) == str(tmp_path / "run-joined")
    assert tj.main(["-q", base]) == 0
    check_joined(str(tmp_path / "run-joined" / os.path.basename(base)), variables)
    assert sorted(os.listdir(pieces_dir)) == [os.path.basename(tj.piece_path(base, r))
                                              for r in range(4)]
    # --out DIR, created when missing.
    assert tj.main(["-q", "--out", str(tmp_path / "a" / "b"), tj.piece_path(base, 2)]) == 0
    check_joined(str(tmp_path / "a" / "b" / os.path.basename(base)), variables)
    # Beside the pieces: refused, with the reason and the default named.
    for argv in (["--out", str(pieces_dir)], ["-o", str(pieces_dir / "joined.nc")],
                 ["-o", base]):
        code, err = error_of(capsys, argv + [base])
        target = str(pieces_dir / "joined.nc") if argv[-1].endswith("joined.nc") else base
        assert code == 1, argv
        assert (f"tessera join: {target}: is beside the pieces in {pieces_dir}, where a glob "
                f"such as `ncrcat {pieces_dir}/*` would read pieces and joined files together; "
                f"join into another directory (default: {tmp_path / 'run-joined'})") in err, err
    assert sorted(os.listdir(pieces_dir)) == [os.path.basename(tj.piece_path(base, r))
                                              for r in range(4)]
    code, err = error_of(capsys, ["--out", "x", "-o", "y", base])
    assert code == 2 and "not allowed with argument" in err


def error_of(capsys, argv):
    code = tj.main(argv)
    return code, capsys.readouterr().err


def test_missing_piece(tmp_path, capsys):
    base = str(tmp_path / "miss")
    make_pieces(base, wrf_like())
    os.unlink(tj.piece_path(base, 2))
    code, err = error_of(capsys, [base])
    assert code == 1 and f"{base}.0002: missing piece 2 of 4" in err
    os.unlink(tj.piece_path(base, 0))
    code, err = error_of(capsys, [tj.piece_path(base, 1)])
    assert code == 1 and f"{base}.0000: missing piece 0" in err
    assert not os.path.exists(base) and not os.path.exists(joined(base))


def test_inconsistent_nranks(tmp_path, capsys):
    base = str(tmp_path / "mixed")
    make_pieces(base, wrf_like())
    with netCDF4.Dataset(tj.piece_path(base, 3), "a") as ds:
        ds.tessera_split_nranks = np.int32(6)
    code, err = error_of(capsys, [base])
    assert code == 1 and f"{base}.0003: tessera_split_nranks = 6, but {base}.0000 says 4" in err
    assert not [p for p in os.listdir(tmp_path) if "join-tmp" in p or p == "mixed"]
    out_dir = tj.default_out_dir(base)
    assert not os.path.isdir(out_dir) or not os.listdir(out_dir)


def test_not_a_split_piece(tmp_path, capsys):
    plain = str(tmp_path / "plain.nc")
    with netCDF4.Dataset(plain + ".0000", "w", format="NETCDF3_64BIT_OFFSET") as ds:
        ds.createDimension("x", 3)
    code, err = error_of(capsys, [plain])
    assert code == 1 and f"{plain}.0000: not a Tessera split piece" in err
    text = tmp_path / "text.0000"
    text.write_text("hello\n")
    code, err = error_of(capsys, [str(text)])
    assert code == 1 and f"{text}: cannot open as NetCDF" in err


def test_usage_errors(tmp_path, capsys):
    assert tj.main([]) == 2
    code, err = error_of(capsys, ["-o", "x", str(tmp_path / "a"), str(tmp_path / "b")])
    assert code == 2 and "-o names one output" in err
