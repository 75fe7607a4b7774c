!> Tessera's Fortran 2008 module (iso_c_binding).
!>
!> Conventions, as in NetCDF-Fortran: dimensions are listed fastest first
!> (a WRF array a(i,k,j) in file order (Time, bottom_top, south_north,
!> west_east) is declared with dimids (/west_east, south_north, bottom_top,
!> Time/)), tile starts and frames are 1-based. Handles are opaque derived
!> types holding a type(c_ptr); the module never copies C struct layouts.
!> Every function returns 0 or a negative TSR_E* code (tsr_strerror explains).
module tessera
  use, intrinsic :: iso_c_binding
  implicit none
  private

#include "tessera_errors.inc"
  !> Element types (tessera.h's tsr_type; NetCDF's numbers).
  !> @{
  integer(c_int), parameter, public :: TSR_CHAR = 2, TSR_INT = 4, TSR_FLOAT = 5, TSR_DOUBLE = 6
  !> @}
  !> The other element types (tessera.h; NetCDF's numbers). Unsigned and
  !> 64-bit types need format=cdf5 or format=netcdf4.
  !> @{
  integer(c_int), parameter, public :: TSR_BYTE = 1, TSR_SHORT = 3, TSR_UBYTE = 7, &
                                       TSR_USHORT = 8, TSR_UINT = 9, TSR_INT64 = 10, TSR_UINT64 = 11
  !> @}
  !> Longest name the inquiry calls return.
  integer, parameter, public :: TSR_MAX_NAME = 256
  !> Length of the record dimension in tsr_def_dim.
  integer(c_int64_t), parameter, public :: TSR_UNLIMITED = 0
  !> Variable id for global attributes.
  integer(c_int), parameter, public :: TSR_GLOBAL = -1
  !> Modes of tsr_def_var_quantize (NetCDF's NC_QUANTIZE_*).
  !> @{
  integer(c_int), parameter, public :: TSR_QUANTIZE_NONE = 0, TSR_QUANTIZE_BITGROOM = 1, &
                                       TSR_QUANTIZE_GRANULARBR = 2, TSR_QUANTIZE_BITROUND = 3
  !> @}


  !> A library context (C: tsr_ctx), from tsr_init.
  type, public :: tsr_ctx_t
    type(c_ptr) :: p = c_null_ptr !< the C handle
  end type
  !> A decomposition (C: tsr_decomp), from tsr_decomp_box and its siblings.
  type, public :: tsr_decomp_t
    type(c_ptr) :: p = c_null_ptr !< the C handle
  end type
  !> An open file (C: tsr_file), from tsr_create or tsr_open.
  type, public :: tsr_file_t
    type(c_ptr) :: p = c_null_ptr !< the C handle
  end type

  public :: tsr_init, tsr_finalize, tsr_decomp_box, tsr_decomp_free, tsr_create, tsr_def_dim, &
            tsr_def_var, tsr_def_var_decomp, tsr_def_var_quantize, tsr_put_att, tsr_enddef, tsr_put, tsr_put_global, &
            tsr_flush, tsr_close, tsr_strerror, tsr_open, tsr_get, tsr_inq_varid, &
            tsr_inq, tsr_inq_dim, tsr_inq_dimid, tsr_inq_var, tsr_inq_natts, tsr_inq_attname, &
            tsr_inq_att, tsr_get_att, &
            tsr_inq_libvers
  public :: tsr_decomp_map, tsr_decomp_boxes, tsr_decomp_wrf, tsr_decomp_ordered
  public :: tsr_last_error, tsr_put_ptr, tsr_get_ptr, tsr_put_global_ptr

  !> tsr_decomp_map(ctx, gsize, compdof, d): PIO's compdof (1-based global
  !> indices, fastest dimension first; 0 = this buffer position is not
  !> written), integer(c_int64_t) or default integer.
  interface tsr_decomp_map
    module procedure decomp_map_i8, decomp_map_i4
  end interface

  !> tsr_put(f, varid, frame, d, buf): buf is real(c_float), real(c_double),
  !> integer(c_int8_t|c_int16_t|c_int|c_int64_t) (int8, int16, int32, int64:
  !> TSR_BYTE, TSR_SHORT, TSR_INT, TSR_INT64), rank 1 to 3, contiguous (the
  !> whole memory box of d). The frame of tsr_put, tsr_get and tsr_put_global
  !> is a default integer or integer(c_int64_t) (`1_c_int64_t`; the *_t8
  !> specifics, tessera_frame64_body.inc).
  interface tsr_put
    module procedure put_f1, put_f2, put_f3, put_d1, put_d2, put_d3, put_i1, put_i2, put_i3, &
                     put_b1, put_b2, put_b3, put_s1, put_s2, put_s3, put_l1, put_l2, put_l3
    module procedure put_f1_t8, put_f2_t8, put_f3_t8, put_d1_t8, put_d2_t8, put_d3_t8, &
                     put_i1_t8, put_i2_t8, put_i3_t8, put_b1_t8, put_b2_t8, put_b3_t8, &
                     put_s1_t8, put_s2_t8, put_s3_t8, put_l1_t8, put_l2_t8, put_l3_t8
  end interface
  !> tsr_put_global(f, varid, frame, buf): character or real(c_float) values.
  interface tsr_put_global
    module procedure put_global_text, put_global_f1, put_global_text_t8, put_global_f1_t8
  end interface
  !> tsr_get(f, varid, frame, d, buf): buf is any kind tsr_put takes, rank 1
  !> to 3, contiguous (the whole memory box of d); points outside the tile
  !> keep their values. Values come in the variable's own type.
  interface tsr_get
    module procedure get_f1, get_f2, get_f3, get_d1, get_d2, get_d3, get_i1, get_i2, get_i3, &
                     get_b1, get_b2, get_b3, get_s1, get_s2, get_s3, get_l1, get_l2, get_l3
    module procedure get_f1_t8, get_f2_t8, get_f3_t8, get_d1_t8, get_d2_t8, get_d3_t8, &
                     get_i1_t8, get_i2_t8, get_i3_t8, get_b1_t8, get_b2_t8, get_b3_t8, &
                     get_s1_t8, get_s2_t8, get_s3_t8, get_l1_t8, get_l2_t8, get_l3_t8
  end interface
  !> tsr_put_att(f, varid, name, values): character, integer(c_int8_t|
  !> c_int16_t|c_int|c_int64_t), real(c_float) or real(c_double) (scalar or rank 1).
  interface tsr_put_att
    module procedure att_text, att_i0, att_i1, att_f0, att_f1, att_d0, att_d1, att_b0, att_b1, &
                     att_s0, att_s1, att_l0, att_l1
  end interface
  !> tsr_get_att(f, varid, name, values): the kinds of tsr_put_att; the
  !> attribute must have the argument's type (TSR_ETYPE) and fit (TSR_EINVAL;
  !> a scalar takes one value, a character variable is blank-padded).
  interface tsr_get_att
    module procedure gatt_text, gatt_b0, gatt_b1, gatt_s0, gatt_s1, gatt_i0, gatt_i1, gatt_l0, &
                     gatt_l1, gatt_f0, gatt_f1, gatt_d0, gatt_d1
  end interface

  interface
    integer(c_int) function c_init(comm, hints, ctx, model) bind(C, name="tsr_f_init")
      import :: c_int, c_char, c_ptr
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: hints(*)
      type(c_ptr), intent(out) :: ctx
      integer(c_int), intent(out) :: model
    end function
    integer(c_int) function c_finalize(ctx) bind(C, name="tsr_finalize")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: ctx
    end function
    integer(c_int) function c_decomp_box(ctx, nd, g, s, c, ms, mc, have, d) &
        bind(C, name="tsr_f_decomp_box")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: nd, have
      integer(c_int64_t), intent(in) :: g(*), s(*), c(*), ms(*), mc(*)
      type(c_ptr), intent(out) :: d
    end function
    integer(c_int) function c_decomp_map(ctx, nd, g, n, compdof, d) bind(C, name="tsr_f_decomp_map")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: nd
      integer(c_int64_t), value :: n
      integer(c_int64_t), intent(in) :: g(*), compdof(*)
      type(c_ptr), intent(out) :: d
    end function
    integer(c_int) function c_decomp_boxes(ctx, nd, g, nb, s, c, d) bind(C, name="tsr_f_decomp_boxes")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: nd, nb
      integer(c_int64_t), intent(in) :: g(*), s(*), c(*)
      type(c_ptr), intent(out) :: d
    end function
    integer(c_int) function c_decomp_ordered(ctx, nd, g, s, c, ms, mc, order, d) &
        bind(C, name="tsr_f_decomp_box_ordered")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: ctx
      integer(c_int), value :: nd
      integer(c_int64_t), intent(in) :: g(*), s(*), c(*), ms(*), mc(*)
      integer(c_int), intent(in) :: order(*)
      type(c_ptr), intent(out) :: d
    end function
    subroutine c_decomp_free(d) bind(C, name="tsr_decomp_free")
      import :: c_ptr
      type(c_ptr), intent(inout) :: d
    end subroutine
    integer(c_int) function c_create(ctx, path, hints, f) bind(C, name="tsr_create")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: path(*), hints(*)
      type(c_ptr), intent(out) :: f
    end function
    integer(c_int) function c_def_dim(f, name, len, id) bind(C, name="tsr_def_dim")
      import :: c_int, c_ptr, c_char, c_int64_t
      type(c_ptr), value :: f
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), value :: len
      integer(c_int), intent(out) :: id
    end function
    integer(c_int) function c_def_var(f, name, t, nd, ids, id) bind(C, name="tsr_f_def_var")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: f
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: t, nd
      integer(c_int), intent(in) :: ids(*)
      integer(c_int), intent(out) :: id
    end function
    integer(c_int) function c_def_var_decomp(f, v, d) bind(C, name="tsr_def_var_decomp")
      import :: c_int, c_ptr
      type(c_ptr), value :: f, d
      integer(c_int), value :: v
    end function
    integer(c_int) function c_def_var_quantize(f, v, mode, nsd) bind(C, name="tsr_def_var_quantize")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int), value :: v, mode, nsd
    end function
    integer(c_int) function c_put_att(f, v, name, t, n, vals) bind(C, name="tsr_f_put_att")
      import :: c_int, c_ptr, c_char, c_int64_t
      type(c_ptr), value :: f, vals
      integer(c_int), value :: v, t
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), value :: n
    end function
    integer(c_int) function c_enddef(f) bind(C, name="tsr_enddef")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
    end function
    integer(c_int) function c_put_float(f, v, t, d, b) bind(C, name="tsr_f_put_float")
      import :: c_int, c_ptr, c_int64_t, c_float
      type(c_ptr), value :: f, d
      integer(c_int), value :: v
      integer(c_int64_t), value :: t
      real(c_float), intent(in) :: b(*)
    end function
    integer(c_int) function c_put_double(f, v, t, d, b) bind(C, name="tsr_f_put_double")
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: f, d
      integer(c_int), value :: v
      integer(c_int64_t), value :: t
      real(c_double), intent(in) :: b(*)
    end function
    integer(c_int) function c_put_int(f, v, t, d, b) bind(C, name="tsr_f_put_int")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: f, d
      integer(c_int), value :: v
      integer(c_int64_t), value :: t
      integer(c_int), intent(in) :: b(*)
    end function
    integer(c_int) function c_put_global_text(f, v, t, b) bind(C, name="tsr_f_put_global_text")
      import :: c_int, c_ptr, c_int64_t, c_char
      type(c_ptr), value :: f
      integer(c_int), value :: v
      integer(c_int64_t), value :: t
      character(kind=c_char), intent(in) :: b(*)
    end function
    integer(c_int) function c_put_global_float(f, v, t, b) bind(C, name="tsr_f_put_global_float")
      import :: c_int, c_ptr, c_int64_t, c_float
      type(c_ptr), value :: f
      integer(c_int), value :: v
      integer(c_int64_t), value :: t
      real(c_float), intent(in) :: b(*)
    end function
    integer(c_int) function c_open(ctx, path, hints, f) bind(C, name="tsr_open")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: path(*), hints(*)
      type(c_ptr), intent(out) :: f
    end function
    integer(c_int) function c_get_float(f, v, t, d, b) bind(C, name="tsr_f_get_float")
      import :: c_int, c_ptr, c_int64_t, c_float
      type(c_ptr), value :: f, d
      integer(c_int), value :: v
      integer(c_int64_t), value :: t
      real(c_float), intent(inout) :: b(*)
    end function
    integer(c_int) function c_inq_varid(f, name, id) bind(C, name="tsr_inq_varid")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: f
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: id
    end function
#include "tessera_kinds_spec.inc"
    integer(c_int) function c_inq(f, nd, nv, ng, unlim) bind(C, name="tsr_inq")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int), intent(out) :: nd, nv, ng, unlim
    end function
    integer(c_int) function c_inq_dim(f, id, name, len) bind(C, name="tsr_inq_dim")
      import :: c_int, c_ptr, c_char, c_int64_t
      type(c_ptr), value :: f
      integer(c_int), value :: id
      character(kind=c_char), intent(out) :: name(*)
      integer(c_int64_t), intent(out) :: len
    end function
    integer(c_int) function c_inq_dimid(f, name, id) bind(C, name="tsr_inq_dimid")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: f
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: id
    end function
    integer(c_int) function c_inq_var(f, v, name, t, nd, ids, shape) bind(C, name="tsr_f_inq_var")
      import :: c_int, c_ptr, c_char, c_int64_t
      type(c_ptr), value :: f
      integer(c_int), value :: v
      character(kind=c_char), intent(out) :: name(*)
      integer(c_int), intent(out) :: t, nd, ids(*)
      integer(c_int64_t), intent(out) :: shape(*)
    end function
    integer(c_int) function c_inq_natts(f, v, n) bind(C, name="tsr_inq_natts")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
      integer(c_int), value :: v
      integer(c_int), intent(out) :: n
    end function
    integer(c_int) function c_inq_attname(f, v, a, name) bind(C, name="tsr_inq_attname")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: f
      integer(c_int), value :: v, a
      character(kind=c_char), intent(out) :: name(*)
    end function
    integer(c_int) function c_inq_att(f, v, name, t, n) bind(C, name="tsr_f_inq_att")
      import :: c_int, c_ptr, c_char, c_int64_t
      type(c_ptr), value :: f
      integer(c_int), value :: v
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), intent(out) :: t
      integer(c_int64_t), intent(out) :: n
    end function
    integer(c_int) function c_get_att(f, v, name, vals) bind(C, name="tsr_get_att")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: f, vals
      integer(c_int), value :: v
      character(kind=c_char), intent(in) :: name(*)
    end function
    integer(c_int) function c_put_typed(f, v, t, d, mt, b) bind(C, name="tsr_put_typed")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: f, d, b
      integer(c_int), value :: v, mt
      integer(c_int64_t), value :: t
    end function
    integer(c_int) function c_get_raw(f, v, t, d, b) bind(C, name="tsr_get")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: f, d, b
      integer(c_int), value :: v
      integer(c_int64_t), value :: t
    end function
    integer(c_int) function c_put_global_raw(f, v, t, b) bind(C, name="tsr_put_global")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: f, b
      integer(c_int), value :: v
      integer(c_int64_t), value :: t
    end function
    type(c_ptr) function c_last_error() bind(C, name="tsr_last_error")
      import :: c_ptr
    end function
    integer(c_int) function c_flush(f) bind(C, name="tsr_flush")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
    end function
    integer(c_int) function c_close(f) bind(C, name="tsr_close")
      import :: c_int, c_ptr
      type(c_ptr), intent(inout) :: f
    end function
    type(c_ptr) function c_strerror(e) bind(C, name="tsr_strerror")
      import :: c_int, c_ptr
      integer(c_int), value :: e
    end function
    type(c_ptr) function c_inq_libvers() bind(C, name="tsr_inq_libvers")
      import :: c_ptr
    end function
    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function
  end interface

contains

  pure function cstr(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s)//c_null_char
  end function

  !> Collective. comm is a Fortran MPI communicator (e.g. MPI_COMM_WORLD);
  !> model_comm receives the model ranks' communicator (MPI_COMM_NULL on I/O servers).
  !! @param comm a Fortran MPI communicator (e.g. MPI_COMM_WORLD)
  !! @param hints hint string ('' for none)
  !! @param ctx receives the context
  !! @param model_comm receives the model ranks' communicator (MPI_COMM_NULL on I/O servers)
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_init(comm, hints, ctx, model_comm)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: hints
    type(tsr_ctx_t), intent(out) :: ctx
    integer, intent(out) :: model_comm
    integer(c_int) :: m
    tsr_init = c_init(int(comm, c_int), cstr(hints), ctx%p, m)
    model_comm = m
  end function

  !> Stop Tessera; waits for the servers (C: tsr_finalize). Collective.
  !! @param ctx the context; nulled
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_finalize(ctx)
    type(tsr_ctx_t), intent(inout) :: ctx
    tsr_finalize = c_finalize(ctx%p)
  end function

  !> Collective. Arrays are fastest dimension first; start and mstart 1-based.
  !! @param ctx the context
  !! @param gsize global shape, fastest first
  !! @param start first index of the tile, 1-based
  !! @param count tile extent (0: nothing)
  !! @param d receives the decomposition
  !! @param mstart optional: first index of the memory array (halos), 1-based
  !! @param mcount optional: extent of the memory array
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_decomp_box(ctx, gsize, start, count, d, mstart, mcount)
    type(tsr_ctx_t), intent(in) :: ctx
    integer(c_int64_t), intent(in) :: gsize(:), start(:), count(:)
    type(tsr_decomp_t), intent(out) :: d
    integer(c_int64_t), intent(in), optional :: mstart(:), mcount(:)
    integer(c_int) :: have
    have = 0
    if (present(mstart) .and. present(mcount)) then
      have = 1
      tsr_decomp_box = c_decomp_box(ctx%p, size(gsize, kind=c_int), gsize, start, count, &
                                    mstart, mcount, have, d%p)
    else
      tsr_decomp_box = c_decomp_box(ctx%p, size(gsize, kind=c_int), gsize, start, count, &
                                    start, count, have, d%p)
    end if
  end function

  !> Collective. An index map as PIO's compdof; buffer position k of tsr_put
  !> and tsr_get holds global element compdof(k).
  integer function decomp_map_i8(ctx, gsize, compdof, d)
    type(tsr_ctx_t), intent(in) :: ctx
    integer(c_int64_t), intent(in) :: gsize(:), compdof(:)
    type(tsr_decomp_t), intent(out) :: d
    decomp_map_i8 = c_decomp_map(ctx%p, size(gsize, kind=c_int), gsize, &
                                 size(compdof, kind=c_int64_t), compdof, d%p)
  end function
  integer function decomp_map_i4(ctx, gsize, compdof, d)
    type(tsr_ctx_t), intent(in) :: ctx
    integer(c_int64_t), intent(in) :: gsize(:)
    integer, intent(in) :: compdof(:)
    type(tsr_decomp_t), intent(out) :: d
    decomp_map_i4 = decomp_map_i8(ctx, gsize, int(compdof, c_int64_t), d)
  end function

  !> Collective. Several boxes: start(:, b) and count(:, b) of box b, fastest
  !> dimension first, 1-based; in the buffer the boxes follow one another.
  !! @param ctx the context
  !! @param gsize global shape, fastest first
  !! @param start start(:, b): first index of box b, 1-based
  !! @param count count(:, b): extent of box b
  !! @param d receives the decomposition
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_decomp_boxes(ctx, gsize, start, count, d)
    type(tsr_ctx_t), intent(in) :: ctx
    integer(c_int64_t), intent(in) :: gsize(:), start(:, :), count(:, :)
    type(tsr_decomp_t), intent(out) :: d
    tsr_decomp_boxes = c_decomp_boxes(ctx%p, size(gsize, kind=c_int), gsize, &
                                      size(start, 2, kind=c_int), start, count, d%p)
  end function

  !> Collective. A WRF patch held in WRF's memory order, written in place.
  !> memorder is WRF's MemoryOrder ('XZY', 'XYZ', 'XY', ...): the file
  !> dimension of each memory dimension, fastest first, where X, Y, Z are the
  !> file's dimensions fastest first (west_east, south_north, bottom_top).
  !> The bounds are given per memory dimension, as WRF declares them: for
  !> a(ims:ime, kms:kme, jms:jme), ds = (/ids, kds, jds/), de = (/ide, kde, jde/),
  !> ps/pe the patch (ips:ipe ...), ms/me the memory (ims:ime ...).
  !! @param ctx the context
  !! @param memorder WRF's MemoryOrder, e.g. 'XZY'
  !! @param ds domain start per memory dimension (ids, kds, jds)
  !! @param de domain end per memory dimension
  !! @param ps patch start per memory dimension
  !! @param pe patch end per memory dimension
  !! @param ms memory start per memory dimension
  !! @param me memory end per memory dimension
  !! @param d receives the decomposition
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_decomp_wrf(ctx, memorder, ds, de, ps, pe, ms, me, d)
    type(tsr_ctx_t), intent(in) :: ctx
    character(len=*), intent(in) :: memorder
    integer, intent(in) :: ds(:), de(:), ps(:), pe(:), ms(:), me(:)
    type(tsr_decomp_t), intent(out) :: d
    integer(c_int64_t) :: g(8), s(8), c(8), mst(8), mc(8)
    integer(c_int) :: order(8)
    integer :: m, f, nd
    nd = len_trim(memorder)
    g = 1; s = 1; c = 0; mst = 1; mc = 0; order = 0
    do m = 1, min(nd, size(ds), 8)
      f = index('XYZ', memorder(m:m))
      if (f == 0) f = index('xyz', memorder(m:m))
      if (f < 1 .or. f > nd) then
        order(m) = 0 ! not a dimension: the C side answers TSR_EINVAL
        cycle
      end if
      order(m) = f
      g(f) = de(m) - ds(m) + 1
      s(f) = ps(m) - ds(m) + 1
      c(f) = pe(m) - ps(m) + 1
      mst(f) = ms(m) - ds(m) + 1
      mc(f) = me(m) - ms(m) + 1
    end do
    tsr_decomp_wrf = c_decomp_ordered(ctx%p, int(nd, c_int), g, s, c, mst, mc, order, d%p)
  end function

  !> Collective. A box held in another memory order: gsize, start, count,
  !> mstart, mcount in file order, fastest first, 1-based (as tsr_decomp_box);
  !> forder(m) is the file dimension (fastest first) of memory dimension m
  !> (fastest first). tsr_decomp_wrf is this for WRF's X/Y/Z letters.
  !! @param ctx the context
  !! @param gsize global shape, file order, fastest first
  !! @param start first index of the tile, 1-based
  !! @param count tile extent
  !! @param mstart first index of the memory box, 1-based
  !! @param mcount extent of the memory box
  !! @param forder file dimension (fastest first) of each memory dimension
  !! @param d receives the decomposition
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_decomp_ordered(ctx, gsize, start, count, mstart, mcount, forder, d)
    type(tsr_ctx_t), intent(in) :: ctx
    integer(c_int64_t), intent(in) :: gsize(:), start(:), count(:), mstart(:), mcount(:)
    integer(c_int), intent(in) :: forder(:)
    type(tsr_decomp_t), intent(out) :: d
    tsr_decomp_ordered = c_decomp_ordered(ctx%p, size(gsize, kind=c_int), gsize, start, count, &
                                          mstart, mcount, forder, d%p)
  end function

  !> Free a decomposition (C: tsr_decomp_free). Not collective.
  !! @param d the decomposition; nulled
  subroutine tsr_decomp_free(d)
    type(tsr_decomp_t), intent(inout) :: d
    call c_decomp_free(d%p)
  end subroutine

  !> Create a file and enter define mode (C: tsr_create). Collective.
  !! @param ctx the context
  !! @param path the file's final path
  !! @param hints hint string for this file ('' for none)
  !! @param f receives the file
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_create(ctx, path, hints, f)
    type(tsr_ctx_t), intent(in) :: ctx
    character(len=*), intent(in) :: path, hints
    type(tsr_file_t), intent(out) :: f
    tsr_create = c_create(ctx%p, cstr(path), cstr(hints), f%p)
  end function

  !> Define a dimension (C: tsr_def_dim). Collective.
  !! @param f a file in define mode
  !! @param name dimension name
  !! @param len length, integer(c_int64_t); TSR_UNLIMITED for the record dimension
  !! @param dimid receives its id
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_def_dim(f, name, len, dimid)
    type(tsr_file_t), intent(in) :: f
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: len
    integer, intent(out) :: dimid
    integer(c_int) :: id
    tsr_def_dim = c_def_dim(f%p, cstr(name), len, id)
    dimid = id
  end function

  !> dimids fastest first, the record dimension (if any) last.
  !! @param f a file in define mode
  !! @param name variable name
  !! @param xtype element type, TSR_FLOAT ...
  !! @param dimids dimension ids, fastest first, the record dimension last
  !! @param varid receives its id
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_def_var(f, name, xtype, dimids, varid)
    type(tsr_file_t), intent(in) :: f
    character(len=*), intent(in) :: name
    integer, intent(in) :: xtype, dimids(:)
    integer, intent(out) :: varid
    integer(c_int) :: id
    tsr_def_var = c_def_var(f%p, cstr(name), int(xtype, c_int), size(dimids, kind=c_int), &
                            int(dimids, c_int), id)
    varid = id
  end function

  !> A variable's default decomposition (C: tsr_def_var_decomp). Collective.
  !! @param f a file in define mode
  !! @param varid the variable
  !! @param d its decomposition; must outlive the file
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_def_var_decomp(f, varid, d)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    type(tsr_decomp_t), intent(in) :: d
    tsr_def_var_decomp = c_def_var_decomp(f%p, int(varid, c_int), d%p)
  end function

  !> Per-variable quantization (tsr_def_var_quantize in tessera.h): mode
  !> TSR_QUANTIZE_*, nsd significant bits (BITROUND) or decimal digits.
  !! @param f a file in define mode
  !! @param varid a float or double variable
  !! @param mode TSR_QUANTIZE_*
  !! @param nsd significant bits or decimal digits
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_def_var_quantize(f, varid, mode, nsd)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, mode, nsd
    tsr_def_var_quantize = c_def_var_quantize(f%p, int(varid, c_int), int(mode, c_int), &
                                              int(nsd, c_int))
  end function

  integer function att_text(f, varid, name, text)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    character(len=*), intent(in), target :: text
    att_text = c_put_att(f%p, int(varid, c_int), cstr(name), TSR_CHAR, &
                         int(len(text), c_int64_t), c_loc(text))
  end function
  integer function att_i0(f, varid, name, v)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    integer(c_int), intent(in), target :: v
    att_i0 = c_put_att(f%p, int(varid, c_int), cstr(name), TSR_INT, 1_c_int64_t, c_loc(v))
  end function
  integer function att_i1(f, varid, name, v)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    integer(c_int), intent(in), target, contiguous :: v(:)
    att_i1 = c_put_att(f%p, int(varid, c_int), cstr(name), TSR_INT, size(v, kind=c_int64_t), c_loc(v))
  end function
  integer function att_f0(f, varid, name, v)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    real(c_float), intent(in), target :: v
    att_f0 = c_put_att(f%p, int(varid, c_int), cstr(name), TSR_FLOAT, 1_c_int64_t, c_loc(v))
  end function
  integer function att_f1(f, varid, name, v)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    real(c_float), intent(in), target, contiguous :: v(:)
    att_f1 = c_put_att(f%p, int(varid, c_int), cstr(name), TSR_FLOAT, size(v, kind=c_int64_t), c_loc(v))
  end function
  integer function att_d0(f, varid, name, v)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    real(c_double), intent(in), target :: v
    att_d0 = c_put_att(f%p, int(varid, c_int), cstr(name), TSR_DOUBLE, 1_c_int64_t, c_loc(v))
  end function
  integer function att_d1(f, varid, name, v)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    real(c_double), intent(in), target, contiguous :: v(:)
    att_d1 = c_put_att(f%p, int(varid, c_int), cstr(name), TSR_DOUBLE, size(v, kind=c_int64_t), c_loc(v))
  end function

  !> Leave define mode (C: tsr_enddef). Collective.
  !! @param f a file in define mode
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_enddef(f)
    type(tsr_file_t), intent(in) :: f
    tsr_enddef = c_enddef(f%p)
  end function

  integer function put_global_text(f, varid, frame, text)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    character(len=*), intent(in) :: text
    put_global_text = c_put_global_text(f%p, int(varid, c_int), int(frame, c_int64_t), text)
  end function
  integer function put_global_f1(f, varid, frame, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    real(c_float), intent(in), contiguous :: buf(:)
    put_global_f1 = c_put_global_float(f%p, int(varid, c_int), int(frame, c_int64_t), buf)
  end function

  !> Collective. Opens an existing file read-only (tsr_get, tsr_inq_varid, tsr_close).
  !! @param ctx the context
  !! @param path the file
  !! @param hints hint string ('' for none)
  !! @param f receives the file
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_open(ctx, path, hints, f)
    type(tsr_ctx_t), intent(in) :: ctx
    character(len=*), intent(in) :: path, hints
    type(tsr_file_t), intent(out) :: f
    tsr_open = c_open(ctx%p, cstr(path), cstr(hints), f%p)
  end function

  !> Not collective. TSR_ENAME when the file has no such variable.
  !! @param f a file
  !! @param name variable name
  !! @param varid receives its id
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_inq_varid(f, name, varid)
    type(tsr_file_t), intent(in) :: f
    character(len=*), intent(in) :: name
    integer, intent(out) :: varid
    integer(c_int) :: id
    tsr_inq_varid = c_inq_varid(f%p, cstr(name), id)
    varid = id
  end function

#include "tessera_kinds_body.inc"
#include "tessera_frame64_body.inc"

  ! ---- inquiry (tessera.h "Inquiry"; not collective) ----

  !> A NUL-terminated C name as a Fortran string.
  pure function from_c(buf) result(s)
    character(kind=c_char), intent(in) :: buf(:)
    character(len=:), allocatable :: s
    integer :: n, i
    n = 0
    do while (n < size(buf))
      if (buf(n + 1) == c_null_char) exit
      n = n + 1
    end do
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = buf(i)
    end do
  end function

  !> Counts of dimensions, variables, global attributes; the record dimension's id (-1: none).
  !! @param f a file
  !! @param ndims number of dimensions
  !! @param nvars number of variables
  !! @param ngatts number of global attributes
  !! @param unlimdimid the record dimension's id, -1 when none
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_inq(f, ndims, nvars, ngatts, unlimdimid)
    type(tsr_file_t), intent(in) :: f
    integer, intent(out) :: ndims, nvars, ngatts, unlimdimid
    integer(c_int) :: a, b, c, d
    tsr_inq = c_inq(f%p, a, b, c, d)
    ndims = a
    nvars = b
    ngatts = c
    unlimdimid = d
  end function

  !> Name and length of a dimension (the record dimension: its records).
  !! @param f a file
  !! @param dimid the dimension
  !! @param name receives its name
  !! @param len receives its length
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_inq_dim(f, dimid, name, len)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: dimid
    character(len=*), intent(out) :: name
    integer(c_int64_t), intent(out) :: len
    character(kind=c_char) :: buf(TSR_MAX_NAME)
    buf = c_null_char
    tsr_inq_dim = c_inq_dim(f%p, int(dimid, c_int), buf, len)
    name = from_c(buf)
  end function

  !> A dimension's id (C: tsr_inq_dimid). Not collective.
  !! @param f a file
  !! @param name dimension name
  !! @param dimid receives its id
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_inq_dimid(f, name, dimid)
    type(tsr_file_t), intent(in) :: f
    character(len=*), intent(in) :: name
    integer, intent(out) :: dimid
    integer(c_int) :: id
    tsr_inq_dimid = c_inq_dimid(f%p, cstr(name), id)
    dimid = id
  end function

  !> Name, type, dimensions and their lengths, fastest first (the record
  !> dimension last), as tsr_def_var takes them; dimids and shape need room
  !> for ndims entries (TSR_EINVAL otherwise).
  !! @param f a file
  !! @param varid the variable
  !! @param name receives its name
  !! @param xtype receives its type
  !! @param ndims receives its number of dimensions
  !! @param dimids receives its dimension ids, fastest first
  !! @param shape receives its dimension lengths, fastest first
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_inq_var(f, varid, name, xtype, ndims, dimids, shape)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(out) :: name
    integer, intent(out) :: xtype, ndims
    integer, intent(out) :: dimids(:)
    integer(c_int64_t), intent(out) :: shape(:)
    character(kind=c_char) :: buf(TSR_MAX_NAME)
    integer(c_int) :: t, n, ids(8)
    integer(c_int64_t) :: sh(8)
    buf = c_null_char
    name = ''
    xtype = 0
    ndims = 0
    tsr_inq_var = c_inq_var(f%p, int(varid, c_int), buf, t, n, ids, sh)
    if (tsr_inq_var /= TSR_OK) return
    name = from_c(buf)
    xtype = t
    ndims = n
    if (size(dimids) < n .or. size(shape) < n) then
      tsr_inq_var = TSR_EINVAL
      return
    end if
    dimids(1:n) = ids(1:n)
    shape(1:n) = sh(1:n)
  end function

  !> Number of attributes (C: tsr_inq_natts). Not collective.
  !! @param f a file
  !! @param varid the variable, or TSR_GLOBAL
  !! @param natts receives the count
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_inq_natts(f, varid, natts)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    integer, intent(out) :: natts
    integer(c_int) :: n
    tsr_inq_natts = c_inq_natts(f%p, int(varid, c_int), n)
    natts = n
  end function

  !> Name of attribute attnum (1-based, as in NetCDF-Fortran).
  !! @param f a file
  !! @param varid the variable, or TSR_GLOBAL
  !! @param attnum attribute number, 1-based
  !! @param name receives its name
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_inq_attname(f, varid, attnum, name)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, attnum
    character(len=*), intent(out) :: name
    character(kind=c_char) :: buf(TSR_MAX_NAME)
    buf = c_null_char
    tsr_inq_attname = c_inq_attname(f%p, int(varid, c_int), int(attnum - 1, c_int), buf)
    name = from_c(buf)
  end function

  !> An attribute's type and length (C: tsr_inq_att). Not collective.
  !! @param f a file
  !! @param varid the variable, or TSR_GLOBAL
  !! @param name attribute name
  !! @param xtype receives its type
  !! @param len receives its number of values
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_inq_att(f, varid, name, xtype, len)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    integer, intent(out) :: xtype, len
    integer(c_int) :: t
    integer(c_int64_t) :: n
    tsr_inq_att = c_inq_att(f%p, int(varid, c_int), cstr(name), t, n)
    xtype = t
    len = int(n)
  end function

  ! The attribute exists, has type want and at most cap values: then copy.
  integer function get_att_checked(f, varid, name, want, cap, p)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: want
    integer(c_int64_t), intent(in) :: cap
    type(c_ptr), intent(in) :: p
    integer(c_int) :: t
    integer(c_int64_t) :: n
    get_att_checked = c_inq_att(f%p, int(varid, c_int), cstr(name), t, n)
    if (get_att_checked /= TSR_OK) return
    if (t /= want) then
      get_att_checked = TSR_ETYPE
    else if (n > cap) then
      get_att_checked = TSR_EINVAL
    else
      get_att_checked = c_get_att(f%p, int(varid, c_int), cstr(name), p)
    end if
  end function

  integer function gatt_text(f, varid, name, text)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    character(len=*), intent(in) :: name
    character(len=*), intent(out) :: text
    character(kind=c_char), allocatable, target :: buf(:)
    integer(c_int) :: t
    integer(c_int64_t) :: n
    integer :: i
    text = ''
    gatt_text = c_inq_att(f%p, int(varid, c_int), cstr(name), t, n)
    if (gatt_text /= TSR_OK) return
    if (t /= TSR_CHAR) then
      gatt_text = TSR_ETYPE
      return
    end if
    if (n > len(text)) then
      gatt_text = TSR_EINVAL
      return
    end if
    allocate(buf(max(n, 1_c_int64_t)))
    gatt_text = c_get_att(f%p, int(varid, c_int), cstr(name), c_loc(buf))
    do i = 1, int(n)
      text(i:i) = buf(i)
    end do
  end function

  !> Untyped put, get and replicated put, for callers that hold their data
  !> behind an address (WRF's Field(*) of any type): buf is c_loc of the
  !> first element, laid out as tsr_put / tsr_get / tsr_put_global read it;
  !> memtype is the memory's element type (tsr_put_typed: equal to the
  !> variable's, or TSR_DOUBLE into a TSR_FLOAT variable). d may be a null
  !> decomposition in tsr_get_ptr: the whole variable on every rank.
  !> Frames are 1-based.
  !! @param f a file in data mode
  !! @param varid the variable
  !! @param frame record, 1-based
  !! @param d the decomposition
  !! @param memtype element type of the memory
  !! @param buf c_loc of the first element
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_put_ptr(f, varid, frame, d, memtype, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame, memtype
    type(tsr_decomp_t), intent(in) :: d
    type(c_ptr), intent(in) :: buf
    tsr_put_ptr = c_put_typed(f%p, int(varid, c_int), int(frame - 1, c_int64_t), d%p, &
                              int(memtype, c_int), buf)
  end function
  !> Untyped get (C: tsr_get). Collective.
  !! @param f a file opened with tsr_open
  !! @param varid the variable
  !! @param frame record, 1-based
  !! @param d the decomposition, or a null one for the whole variable
  !! @param buf c_loc of the first element
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_get_ptr(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    type(c_ptr), intent(in) :: buf
    tsr_get_ptr = c_get_raw(f%p, int(varid, c_int), int(frame - 1, c_int64_t), d%p, buf)
  end function
  !> Untyped replicated put (C: tsr_put_global). Collective.
  !! @param f a file in data mode
  !! @param varid the variable
  !! @param frame record, 1-based
  !! @param buf c_loc of the first element
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_put_global_ptr(f, varid, frame, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(c_ptr), intent(in) :: buf
    tsr_put_global_ptr = c_put_global_raw(f%p, int(varid, c_int), int(frame - 1, c_int64_t), buf)
  end function

  !> Why the last tsr_init, tsr_create or tsr_open failed (empty if none did).
  !! @return the message, or '' when there is none.
  function tsr_last_error() result(msg)
    character(len=:), allocatable :: msg
    type(c_ptr) :: p
    p = c_last_error()
    if (c_associated(p)) then
      msg = fstr(p)
    else
      msg = ''
    end if
  end function

  !> Make every byte put so far reach the file (C: tsr_flush). Collective.
  !! @param f a file in data mode
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_flush(f)
    type(tsr_file_t), intent(in) :: f
    tsr_flush = c_flush(f%p)
  end function

  !> Flush and close (C: tsr_close). Collective.
  !! @param f the file; nulled, also on error
  !! @return 0 or a negative TSR_E* code (as the C function: tessera.h).
  integer function tsr_close(f)
    type(tsr_file_t), intent(inout) :: f
    tsr_close = c_close(f%p)
  end function

  !> The text of an error code.
  !! @param err a TSR_E* code
  !! @return the text.
  function tsr_strerror(err) result(msg)
    integer, intent(in) :: err
    character(len=:), allocatable :: msg
    msg = fstr(c_strerror(int(err, c_int)))
  end function

  !> The library's version, "MAJOR.MINOR.PATCH" (e.g. "0.1.0"). Not collective;
  !> may be called before MPI_Init.
  !! @return "MAJOR.MINOR.PATCH".
  function tsr_inq_libvers() result(version)
    character(len=:), allocatable :: version
    version = fstr(c_inq_libvers())
  end function

  !> A Fortran copy of a NUL-terminated C string the library owns.
  function fstr(p) result(msg)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: msg
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: msg)
    do i = 1, n
      msg(i:i) = chars(i)
    end do
  end function
end module tessera
