! Every integer and real kind through the Fortran module: tsr_put of
! integer(int8/int16/int32/int64) and real(float/double) fields a(i,j,k)
! written by slabs of j, attributes of each kind, then tsr_open, the inquiry
! calls (dimensions fastest first) and tsr_get by slabs of i into each kind;
! every value must come back exactly (reals compared as abs(a - b) > 0,
! exact, in the form -Wcompare-reals accepts).
! Usage: test_formats_fortran <path> <hints>, e.g. format=netcdf4:strategy=aggregate.
program test_formats_fortran
  use mpi
  use tessera
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: nx = 8, ny = 6, nz = 3, nt = 2, nk = 6
  integer :: ierr, rank, nranks, model, fails, passes, t, v, dims(4), vid(nk)
  integer :: j0, j1, i0, i1, xt, nd, ids(4), natts
  integer(c_int64_t) :: shape(4), len
  type(tsr_ctx_t) :: ctx
  type(tsr_decomp_t) :: dw, dr
  type(tsr_file_t) :: f
  character(len=512) :: path, hints
  character(len=TSR_MAX_NAME) :: name
  character(len=8), parameter :: names(nk) = [character(len=8) :: "i8", "i16", "i32", "i64", &
                                              "f32", "f64"]
  integer, parameter :: types(nk) = [TSR_BYTE, TSR_SHORT, TSR_INT, TSR_INT64, TSR_FLOAT, TSR_DOUBLE]
  integer(c_int8_t), allocatable :: b(:, :, :)
  integer(c_int16_t), allocatable :: s(:, :, :)
  integer(c_int), allocatable :: i4(:, :, :)
  integer(c_int64_t), allocatable :: l(:, :, :)
  real(c_float), allocatable :: r4(:, :, :)
  real(c_double), allocatable :: r8(:, :, :)
  integer(c_int8_t) :: ab
  integer(c_int16_t) :: as(2)
  integer(c_int64_t) :: al
  real(c_double) :: ad
  character(len=16) :: text

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, path)
  call get_command_argument(2, hints)
  fails = 0
  passes = 0
  call check(tsr_init(MPI_COMM_WORLD, "", ctx, model), TSR_OK, "tsr_init")
  j0 = ny * rank / nranks + 1
  j1 = ny * (rank + 1) / nranks
  i0 = nx * rank / nranks + 1
  i1 = nx * (rank + 1) / nranks
  call check(tsr_decomp_box(ctx, [int(nx, c_int64_t), int(ny, c_int64_t), int(nz, c_int64_t)], &
                            [1_c_int64_t, int(j0, c_int64_t), 1_c_int64_t], &
                            [int(nx, c_int64_t), int(j1 - j0 + 1, c_int64_t), int(nz, c_int64_t)], &
                            dw), TSR_OK, "decomp rows")
  call check(tsr_decomp_box(ctx, [int(nx, c_int64_t), int(ny, c_int64_t), int(nz, c_int64_t)], &
                            [int(i0, c_int64_t), 1_c_int64_t, 1_c_int64_t], &
                            [int(i1 - i0 + 1, c_int64_t), int(ny, c_int64_t), int(nz, c_int64_t)], &
                            dr), TSR_OK, "decomp columns")

  ! ---- write ----
  call check(tsr_create(ctx, trim(path), trim(hints), f), TSR_OK, "tsr_create")
  call check(tsr_def_dim(f, "Time", TSR_UNLIMITED, dims(4)), TSR_OK, "def Time")
  call check(tsr_def_dim(f, "z", int(nz, c_int64_t), dims(3)), TSR_OK, "def z")
  call check(tsr_def_dim(f, "y", int(ny, c_int64_t), dims(2)), TSR_OK, "def y")
  call check(tsr_def_dim(f, "x", int(nx, c_int64_t), dims(1)), TSR_OK, "def x")
  do v = 1, nk
    call check(tsr_def_var(f, trim(names(v)), types(v), [dims(1), dims(2), dims(3), dims(4)], &
                           vid(v)), TSR_OK, "def_var")
  end do
  call check(tsr_put_att(f, vid(1), "a", -7_c_int8_t), TSR_OK, "att int8")
  call check(tsr_put_att(f, vid(2), "a", [300_c_int16_t, -300_c_int16_t]), TSR_OK, "att int16")
  call check(tsr_put_att(f, vid(4), "a", 5000000000_c_int64_t), TSR_OK, "att int64")
  call check(tsr_put_att(f, vid(6), "a", 0.125_c_double), TSR_OK, "att double")
  call check(tsr_put_att(f, TSR_GLOBAL, "title", "kinds"), TSR_OK, "att text")
  call check(tsr_enddef(f), TSR_OK, "tsr_enddef")
  allocate(b(nx, j0:j1, nz), s(nx, j0:j1, nz), i4(nx, j0:j1, nz), l(nx, j0:j1, nz), &
           r4(nx, j0:j1, nz), r8(nx, j0:j1, nz))
  do t = 1, nt
    call fill(t, j0, j1)
    call check(tsr_put(f, vid(1), t, dw, b), TSR_OK, "put int8")
    call check(tsr_put(f, vid(2), t, dw, s), TSR_OK, "put int16")
    call check(tsr_put(f, vid(3), t, dw, i4), TSR_OK, "put int32")
    call check(tsr_put(f, vid(4), t, dw, l), TSR_OK, "put int64")
    call check(tsr_put(f, vid(5), t, dw, r4), TSR_OK, "put float")
    call check(tsr_put(f, vid(6), t, dw, r8), TSR_OK, "put double")
  end do
  call check(tsr_close(f), TSR_OK, "tsr_close (write)")
  deallocate(b, s, i4, l, r4, r8)

  ! ---- inquire and read back by columns ----
  call check(tsr_open(ctx, trim(path), "", f), TSR_OK, "tsr_open")
  call check(tsr_inq_dim(f, dims(4), name, len), TSR_OK, "inq_dim")
  call expect(trim(name) == "Time" .and. len == nt, "record dimension name and length")
  do v = 1, nk
    call check(tsr_inq_varid(f, trim(names(v)), vid(v)), TSR_OK, "inq_varid")
    call check(tsr_inq_var(f, vid(v), name, xt, nd, ids, shape), TSR_OK, "inq_var")
    call expect(trim(name) == trim(names(v)) .and. xt == types(v) .and. nd == 4, "inq_var type")
    call expect(all(ids == [dims(1), dims(2), dims(3), dims(4)]), "inq_var dimids fastest first")
    call expect(all(shape == [int(nx, c_int64_t), int(ny, c_int64_t), int(nz, c_int64_t), &
                              int(nt, c_int64_t)]), "inq_var shape fastest first")
  end do
  call check(tsr_inq_natts(f, vid(2), natts), TSR_OK, "inq_natts")
  call expect(natts == 1, "one attribute")
  call check(tsr_inq_attname(f, vid(2), 1, name), TSR_OK, "inq_attname")
  call expect(trim(name) == "a", "attribute name")
  call check(tsr_get_att(f, vid(1), "a", ab), TSR_OK, "get_att int8")
  call expect(ab == -7_c_int8_t, "int8 attribute")
  call check(tsr_get_att(f, vid(2), "a", as), TSR_OK, "get_att int16")
  call expect(all(as == [300_c_int16_t, -300_c_int16_t]), "int16 attribute")
  call check(tsr_get_att(f, vid(4), "a", al), TSR_OK, "get_att int64")
  call expect(al == 5000000000_c_int64_t, "int64 attribute")
  call check(tsr_get_att(f, vid(6), "a", ad), TSR_OK, "get_att double")
  call expect(abs(ad - 0.125_c_double) <= 0, "double attribute") ! exact
  call check(tsr_get_att(f, TSR_GLOBAL, "title", text), TSR_OK, "get_att text")
  call expect(text == "kinds", "text attribute")
  call check(tsr_get_att(f, vid(4), "a", ab), TSR_ETYPE, "get_att of another kind")
  call check(tsr_get_att(f, vid(2), "a", al), TSR_ETYPE, "get_att int16 into int64")
  allocate(b(i0:i1, ny, nz), s(i0:i1, ny, nz), i4(i0:i1, ny, nz), l(i0:i1, ny, nz), &
           r4(i0:i1, ny, nz), r8(i0:i1, ny, nz))
  do t = 1, nt
    b = 0
    s = 0
    i4 = 0
    l = 0
    r4 = 0
    r8 = 0
    call check(tsr_get(f, vid(1), t, dr, b), TSR_OK, "get int8")
    call check(tsr_get(f, vid(2), t, dr, s), TSR_OK, "get int16")
    call check(tsr_get(f, vid(3), t, dr, i4), TSR_OK, "get int32")
    call check(tsr_get(f, vid(4), t, dr, l), TSR_OK, "get int64")
    call check(tsr_get(f, vid(5), t, dr, r4), TSR_OK, "get float")
    call check(tsr_get(f, vid(6), t, dr, r8), TSR_OK, "get double")
    call verify(t)
  end do
  call check(tsr_close(f), TSR_OK, "tsr_close (read)")
  call tsr_decomp_free(dw)
  call tsr_decomp_free(dr)
  call check(tsr_finalize(ctx), TSR_OK, "tsr_finalize")
  call MPI_Comm_free(model, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, fails, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, passes, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, i0, a, i0, a)', "formats_fortran: ", passes, " passed, ", fails, " failed"
  call MPI_Finalize(ierr)
  if (fails > 0) stop 1

contains

  ! The check value of point (i, j, k) at frame t, spread so that int64
  ! needs more than 32 bits and int8 keeps its sign.
  integer(c_int64_t) function val(i, j, k, t)
    integer, intent(in) :: i, j, k, t
    val = int(i + 10 * j + 100 * k + 1000 * t, c_int64_t)
  end function

  subroutine fill(tt, ja, jb)
    integer, intent(in) :: tt, ja, jb
    integer :: i, j, k
    do k = 1, nz
      do j = ja, jb
        do i = 1, nx
          b(i, j, k) = int(mod(val(i, j, k, tt), 200_c_int64_t) - 100, c_int8_t)
          s(i, j, k) = int(val(i, j, k, tt) - 20000, c_int16_t)
          i4(i, j, k) = int(val(i, j, k, tt) * 1000, c_int)
          l(i, j, k) = val(i, j, k, tt) * 10000000000_c_int64_t
          r4(i, j, k) = real(val(i, j, k, tt), c_float) * 0.5
          r8(i, j, k) = real(val(i, j, k, tt), c_double) + 0.25d0
        end do
      end do
    end do
  end subroutine

  subroutine verify(tt)
    integer, intent(in) :: tt
    integer :: i, j, k, bad
    bad = 0
    do k = 1, nz
      do j = 1, ny
        do i = i0, i1
          if (b(i, j, k) /= int(mod(val(i, j, k, tt), 200_c_int64_t) - 100, c_int8_t)) bad = bad + 1
          if (s(i, j, k) /= int(val(i, j, k, tt) - 20000, c_int16_t)) bad = bad + 1
          if (i4(i, j, k) /= int(val(i, j, k, tt) * 1000, c_int)) bad = bad + 1
          if (l(i, j, k) /= val(i, j, k, tt) * 10000000000_c_int64_t) bad = bad + 1
          if (abs(r4(i, j, k) - real(val(i, j, k, tt), c_float) * 0.5) > 0) bad = bad + 1
          if (abs(r8(i, j, k) - (real(val(i, j, k, tt), c_double) + 0.25d0)) > 0) bad = bad + 1
        end do
      end do
    end do
    call expect(bad == 0, "every value of every kind read back")
  end subroutine

  subroutine check(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got == want) then
      passes = passes + 1
    else
      fails = fails + 1
      print '(a, i0, 4a, i0, a, i0)', "[rank ", rank, "] ", what, ": ", "got ", got, " want ", want
    end if
  end subroutine

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      passes = passes + 1
    else
      fails = fails + 1
      print '(a, i0, 2a)', "[rank ", rank, "] FAIL ", what
    end if
  end subroutine
end program
