! Writes a WRF-shaped file through the Fortran module: a 3-D field
! a(i,k,j)-free layout (i fastest), a halo'd memory array, a 2-D int field,
! Times, attributes; verify_fortran (C) then checks every value. Frames are
! given both as default integers and as integer(c_int64_t), and read back
! with an int64 frame; a tsr_create refused for a bad hint must say why in
! tsr_last_error.
program test_fortran
  use mpi
  use tessera
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: nx = 11, ny = 7, nz = 3, h = 1
  integer :: ierr, rank, nranks, model, rc, t, i, j, k, fails
  integer :: dt, dx, dy, dz, ds, vt, vm, vtimes
  integer :: j0, j1
  integer(c_int64_t) :: jl0, jn
  type(tsr_ctx_t) :: ctx
  type(tsr_decomp_t) :: d3, d2
  type(tsr_file_t) :: f
  real(c_float), allocatable :: temp(:, :, :)
  integer(c_int), allocatable :: mask(:, :), mask_in(:, :)
  real(c_float), allocatable :: temp_in(:, :, :)
  character(len=256) :: path, hints
  character(len=19) :: times

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, path)
  call get_command_argument(2, hints)
  fails = 0
  rc = tsr_init(MPI_COMM_WORLD, "", ctx, model)
  call check(rc, TSR_OK, "tsr_init")
  ! Rows of south_north per rank (1-based), i and k whole.
  j0 = ny * rank / nranks + 1
  j1 = ny * (rank + 1) / nranks
  jl0 = int(j0, c_int64_t)
  jn = int(j1 - j0 + 1, c_int64_t)
  allocate(temp(1 - h:nx + h, nz, j0 - h:j1 + h), mask(nx, j0:j1))
  rc = tsr_decomp_box(ctx, [int(nx, c_int64_t), int(nz, c_int64_t), int(ny, c_int64_t)], &
                      [1_c_int64_t, 1_c_int64_t, jl0], &
                      [int(nx, c_int64_t), int(nz, c_int64_t), jn], d3, &
                      mstart=[int(1 - h, c_int64_t), 1_c_int64_t, jl0 - h], &
                      mcount=[int(nx + 2 * h, c_int64_t), int(nz, c_int64_t), jn + 2 * h])
  call check(rc, TSR_OK, "tsr_decomp_box 3-D")
  rc = tsr_decomp_box(ctx, [int(nx, c_int64_t), int(ny, c_int64_t)], [1_c_int64_t, jl0], &
                      [int(nx, c_int64_t), jn], d2)
  call check(rc, TSR_OK, "tsr_decomp_box 2-D")
  ! A refused create leaves no handle and says why on every rank.
  rc = tsr_create(ctx, trim(path) // ".bad", "aggregators=two", f)
  call check(rc, TSR_EHINT, "tsr_create with aggregators=two")
  if (c_associated(f%p)) call fail_with("tsr_create refused but left a handle")
  if (index(tsr_last_error(), "aggregators=two") == 0) &
    call fail_with("tsr_last_error() does not name the hint: '" // tsr_last_error() // "'")
  rc = tsr_create(ctx, trim(path), trim(hints), f)
  if (rc == TSR_ENOTBUILT) then  ! the same on every rank: CTest reports a skip (77)
    if (rank == 0) print '(a,a,a)', "fortran: SKIPPED (", trim(hints), " is not built into this library)"
    call MPI_Finalize(ierr)
    stop 77
  end if
  call check(rc, TSR_OK, "tsr_create")
  call check(tsr_def_dim(f, "Time", TSR_UNLIMITED, dt), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "DateStrLen", 19_c_int64_t, ds), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "west_east", int(nx, c_int64_t), dx), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "south_north", int(ny, c_int64_t), dy), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "bottom_top", int(nz, c_int64_t), dz), TSR_OK, "def_dim")
  ! MemoryOrder XZY, as WRF arrays a(i,k,j): the file holds (Time, south_north, bottom_top, west_east).
  call check(tsr_def_var(f, "T", TSR_FLOAT, [dx, dz, dy, dt], vt), TSR_OK, "def_var T")
  call check(tsr_def_var(f, "MASK", TSR_INT, [dx, dy], vm), TSR_OK, "def_var MASK")
  call check(tsr_def_var(f, "Times", TSR_CHAR, [ds, dt], vtimes), TSR_OK, "def_var Times")
  call check(tsr_def_var_decomp(f, vt, d3), TSR_OK, "def_var_decomp")
  call check(tsr_def_var_decomp(f, vm, d2), TSR_OK, "def_var_decomp")
  ! T stays exact (verified below) whatever quantize= the hints give; MASK is no float.
  call check(tsr_def_var_quantize(f, vt, TSR_QUANTIZE_NONE, 0), TSR_OK, "def_var_quantize")
  call check(tsr_def_var_quantize(f, vm, TSR_QUANTIZE_BITROUND, 8), TSR_ETYPE, "quantize int")
  call check(tsr_put_att(f, vt, "units", "K"), TSR_OK, "att text")
  call check(tsr_put_att(f, vt, "FieldType", 104_c_int), TSR_OK, "att int")
  call check(tsr_put_att(f, TSR_GLOBAL, "DX", 3000.0_c_double), TSR_OK, "att double")
  call check(tsr_put_att(f, TSR_GLOBAL, "CEN_LAT", [1.5_c_float, 2.5_c_float]), TSR_OK, "att float")
  call check(tsr_put_att(f, vt, "_FillValue", 1_c_int), TSR_ETYPE, "fill type mismatch")
  call check(tsr_enddef(f), TSR_OK, "enddef")
  do t = 1, 2
    temp = -1.0
    do j = j0, j1
      do k = 1, nz
        do i = 1, nx  ! value of the design guide with the file's (j, k, i) as (k, j, i)
          temp(i, k, j) = real(mod((i - 1) + 7 * (k - 1) + 131 * (j - 1) + 8191 * (t - 1), 16777216), c_float)
        end do
      end do
    end do
    write(times, '(a,i1,a)') "2026-01-01_0", t - 1, ":00:00"
    if (t == 1) then  ! the frame as a default integer, then as integer(c_int64_t)
      call check(tsr_put(f, vt, t, d3, temp), TSR_OK, "put T")
      call check(tsr_put_global(f, vtimes, t, times), TSR_OK, "put Times")
    else
      call check(tsr_put(f, vt, int(t, c_int64_t), d3, temp), TSR_OK, "put T, int64 frame")
      call check(tsr_put_global(f, vtimes, int(t, c_int64_t), times), TSR_OK, &
                 "put Times, int64 frame")
    end if
  end do
  do j = j0, j1
    do i = 1, nx
      mask(i, j) = (i - 1) + 100 * (j - 1)
    end do
  end do
  call check(tsr_put(f, vm, 1_c_int64_t, d2, mask), TSR_OK, "put MASK, int64 frame")
  call check(tsr_close(f), TSR_OK, "close")
  ! Read back with int64 frames: the last frame of T (still in temp) and MASK.
  allocate(temp_in, mold=temp)
  allocate(mask_in, mold=mask)
  temp_in = -2.0
  mask_in = -2
  call check(tsr_open(ctx, trim(path), "", f), TSR_OK, "open")
  call check(tsr_inq_varid(f, "T", vt), TSR_OK, "inq_varid T")
  call check(tsr_inq_varid(f, "MASK", vm), TSR_OK, "inq_varid MASK")
  call check(tsr_get(f, vt, 2_c_int64_t, d3, temp_in), TSR_OK, "get T, int64 frame")
  call check(tsr_get(f, vm, 1_c_int64_t, d2, mask_in), TSR_OK, "get MASK, int64 frame")
  call check(tsr_close(f), TSR_OK, "close after reading")
  if (maxval(abs(temp_in(1:nx, :, j0:j1) - temp(1:nx, :, j0:j1))) > 0) call fail_with("T read back differs")
  if (any(mask_in /= mask)) call fail_with("MASK read back differs")
  call tsr_decomp_free(d3)
  call tsr_decomp_free(d2)
  call check(tsr_finalize(ctx), TSR_OK, "finalize")
  if (len(tsr_strerror(TSR_EHINT)) < 10) fails = fails + 1
  call MPI_Comm_free(model, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, fails, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a)', "fortran: ", merge(1, 0, fails == 0), " passed, ", fails, " failed"
  call MPI_Finalize(ierr)
  if (fails /= 0) error stop 1
contains
  subroutine fail_with(what)
    character(len=*), intent(in) :: what
    fails = fails + 1
    print '(a,i0,a,a)', "[rank ", rank, "] ", what
  end subroutine
  subroutine check(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want) then
      fails = fails + 1
      print '(a,i0,a,a,a,i0,a,i0,a,a)', "[rank ", rank, "] ", what, " returned ", got, &
            " expected ", want, ": ", tsr_strerror(got)
    end if
  end subroutine
end program
