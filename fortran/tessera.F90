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
  integer(c_int), parameter, public :: TSR_CHAR = 2, TSR_INT = 4, TSR_FLOAT = 5, TSR_DOUBLE = 6
  integer(c_int64_t), parameter, public :: TSR_UNLIMITED = 0
  integer(c_int), parameter, public :: TSR_GLOBAL = -1


  type, public :: tsr_ctx_t
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: tsr_decomp_t
    type(c_ptr) :: p = c_null_ptr
  end type
  type, public :: tsr_file_t
    type(c_ptr) :: p = c_null_ptr
  end type

  public :: tsr_init, tsr_finalize, tsr_decomp_box, tsr_decomp_free, tsr_create, tsr_def_dim, &
            tsr_def_var, tsr_def_var_decomp, tsr_put_att, tsr_enddef, tsr_put, tsr_put_global, &
            tsr_flush, tsr_close, tsr_strerror, tsr_open, tsr_get, tsr_inq_varid, &
            tsr_inq_libvers

  !> tsr_put(f, varid, frame, d, buf): buf is real(c_float), real(c_double) or
  !> integer(c_int), rank 1 to 3, contiguous (the whole memory box of d).
  interface tsr_put
    module procedure put_f1, put_f2, put_f3, put_d1, put_d2, put_d3, put_i1, put_i2, put_i3
  end interface
  !> tsr_put_global(f, varid, frame, buf): character or real(c_float) values.
  interface tsr_put_global
    module procedure put_global_text, put_global_f1
  end interface
  !> tsr_get(f, varid, frame, d, buf): buf is real(c_float), rank 1 to 3,
  !> contiguous (the whole memory box of d); points outside the tile keep
  !> their values.
  interface tsr_get
    module procedure get_f1, get_f2, get_f3
  end interface
  !> tsr_put_att(f, varid, name, values): character, integer(c_int),
  !> real(c_float) or real(c_double) (scalar or rank 1).
  interface tsr_put_att
    module procedure att_text, att_i0, att_i1, att_f0, att_f1, att_d0, att_d1
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
  integer function tsr_init(comm, hints, ctx, model_comm)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: hints
    type(tsr_ctx_t), intent(out) :: ctx
    integer, intent(out) :: model_comm
    integer(c_int) :: m
    tsr_init = c_init(int(comm, c_int), cstr(hints), ctx%p, m)
    model_comm = m
  end function

  integer function tsr_finalize(ctx)
    type(tsr_ctx_t), intent(inout) :: ctx
    tsr_finalize = c_finalize(ctx%p)
  end function

  !> Collective. Arrays are fastest dimension first; start and mstart 1-based.
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

  subroutine tsr_decomp_free(d)
    type(tsr_decomp_t), intent(inout) :: d
    call c_decomp_free(d%p)
  end subroutine

  integer function tsr_create(ctx, path, hints, f)
    type(tsr_ctx_t), intent(in) :: ctx
    character(len=*), intent(in) :: path, hints
    type(tsr_file_t), intent(out) :: f
    tsr_create = c_create(ctx%p, cstr(path), cstr(hints), f%p)
  end function

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

  integer function tsr_def_var_decomp(f, varid, d)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid
    type(tsr_decomp_t), intent(in) :: d
    tsr_def_var_decomp = c_def_var_decomp(f%p, int(varid, c_int), d%p)
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

  integer function tsr_enddef(f)
    type(tsr_file_t), intent(in) :: f
    tsr_enddef = c_enddef(f%p)
  end function

  ! One specific per type and rank: generic resolution needs the rank, and
  ! a contiguous dummy passes the model's array to C without a copy.
  integer function put_f1(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    real(c_float), intent(in), contiguous :: buf(:)
    put_f1 = c_put_float(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function put_f2(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    real(c_float), intent(in), contiguous :: buf(:, :)
    put_f2 = c_put_float(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function put_f3(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    real(c_float), intent(in), contiguous :: buf(:, :, :)
    put_f3 = c_put_float(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function put_d1(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    real(c_double), intent(in), contiguous :: buf(:)
    put_d1 = c_put_double(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function put_d2(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    real(c_double), intent(in), contiguous :: buf(:, :)
    put_d2 = c_put_double(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function put_d3(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    real(c_double), intent(in), contiguous :: buf(:, :, :)
    put_d3 = c_put_double(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function put_i1(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    integer(c_int), intent(in), contiguous :: buf(:)
    put_i1 = c_put_int(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function put_i2(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    integer(c_int), intent(in), contiguous :: buf(:, :)
    put_i2 = c_put_int(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function put_i3(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    integer(c_int), intent(in), contiguous :: buf(:, :, :)
    put_i3 = c_put_int(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
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
  integer function tsr_open(ctx, path, hints, f)
    type(tsr_ctx_t), intent(in) :: ctx
    character(len=*), intent(in) :: path, hints
    type(tsr_file_t), intent(out) :: f
    tsr_open = c_open(ctx%p, cstr(path), cstr(hints), f%p)
  end function

  !> Not collective. TSR_ENAME when the file has no such variable.
  integer function tsr_inq_varid(f, name, varid)
    type(tsr_file_t), intent(in) :: f
    character(len=*), intent(in) :: name
    integer, intent(out) :: varid
    integer(c_int) :: id
    tsr_inq_varid = c_inq_varid(f%p, cstr(name), id)
    varid = id
  end function

  ! intent(inout): the halo around the tile is not read, so it keeps its values.
  integer function get_f1(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    real(c_float), intent(inout), contiguous :: buf(:)
    get_f1 = c_get_float(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function get_f2(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    real(c_float), intent(inout), contiguous :: buf(:, :)
    get_f2 = c_get_float(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function
  integer function get_f3(f, varid, frame, d, buf)
    type(tsr_file_t), intent(in) :: f
    integer, intent(in) :: varid, frame
    type(tsr_decomp_t), intent(in) :: d
    real(c_float), intent(inout), contiguous :: buf(:, :, :)
    get_f3 = c_get_float(f%p, int(varid, c_int), int(frame, c_int64_t), d%p, buf)
  end function

  integer function tsr_flush(f)
    type(tsr_file_t), intent(in) :: f
    tsr_flush = c_flush(f%p)
  end function

  integer function tsr_close(f)
    type(tsr_file_t), intent(inout) :: f
    tsr_close = c_close(f%p)
  end function

  !> The text of an error code.
  function tsr_strerror(err) result(msg)
    integer, intent(in) :: err
    character(len=:), allocatable :: msg
    msg = fstr(c_strerror(int(err, c_int)))
  end function

  !> The library's version, "MAJOR.MINOR.PATCH" (e.g. "0.1.0"). Not collective;
  !> may be called before MPI_Init.
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
