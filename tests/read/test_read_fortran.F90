! tsr_open / tsr_get through the Fortran module: a field a(i,k,j) written by
! rows of j is read back by columns of i into a halo'd memory array, with
! each backend; every tile value must match and every halo point keep its
! sentinel.
program test_read_fortran
  use mpi
  use tessera
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: nx = 11, ny = 7, nz = 3, h = 1, nt = 2
  real(c_float), parameter :: sentinel = -1.0
  integer :: ierr, rank, nranks, model, rc, t, i, j, k, b, fails, passes
  integer :: dt, dx, dy, dz, vt, vid
  integer :: j0, j1, i0, i1
  type(tsr_ctx_t) :: ctx
  type(tsr_decomp_t) :: dw, dr
  type(tsr_file_t) :: f
  real(c_float), allocatable :: wbuf(:, :, :), rbuf(:, :, :)
  character(len=256) :: path
  character(len=7), parameter :: backends(2) = ["netcdf ", "pnetcdf"]
  logical :: inside

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, path)
  fails = 0
  passes = 0
  call check(tsr_init(MPI_COMM_WORLD, "", ctx, model), TSR_OK, "tsr_init")
  ! Written by rows of j, read by columns of i (1-based, inclusive).
  j0 = ny * rank / nranks + 1
  j1 = ny * (rank + 1) / nranks
  i0 = nx * rank / nranks + 1
  i1 = nx * (rank + 1) / nranks
  allocate(wbuf(nx, nz, j0:j1), rbuf(i0 - h:i1 + h, nz, 1 - h:ny + h))
  call check(tsr_decomp_box(ctx, [int(nx, c_int64_t), int(nz, c_int64_t), int(ny, c_int64_t)], &
                            [1_c_int64_t, 1_c_int64_t, int(j0, c_int64_t)], &
                            [int(nx, c_int64_t), int(nz, c_int64_t), int(j1 - j0 + 1, c_int64_t)], &
                            dw), TSR_OK, "decomp rows")
  call check(tsr_decomp_box(ctx, [int(nx, c_int64_t), int(nz, c_int64_t), int(ny, c_int64_t)], &
                            [int(i0, c_int64_t), 1_c_int64_t, 1_c_int64_t], &
                            [int(i1 - i0 + 1, c_int64_t), int(nz, c_int64_t), int(ny, c_int64_t)], &
                            dr, mstart=[int(i0 - h, c_int64_t), 1_c_int64_t, int(1 - h, c_int64_t)], &
                            mcount=[int(i1 - i0 + 1 + 2 * h, c_int64_t), int(nz, c_int64_t), &
                                    int(ny + 2 * h, c_int64_t)]), TSR_OK, "decomp cols")

  call check(tsr_create(ctx, trim(path), "strategy=serial", f), TSR_OK, "tsr_create")
  call check(tsr_def_dim(f, "Time", TSR_UNLIMITED, dt), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "west_east", int(nx, c_int64_t), dx), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "south_north", int(ny, c_int64_t), dy), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "bottom_top", int(nz, c_int64_t), dz), TSR_OK, "def_dim")
  call check(tsr_def_var(f, "T", TSR_FLOAT, [dx, dz, dy, dt], vt), TSR_OK, "def_var T")
  call check(tsr_enddef(f), TSR_OK, "enddef")
  do t = 1, nt
    do j = j0, j1
      do k = 1, nz
        do i = 1, nx
          wbuf(i, k, j) = value(i, k, j, t)
        end do
      end do
    end do
    call check(tsr_put(f, vt, t, dw, wbuf), TSR_OK, "put T")
  end do
  call check(tsr_close(f), TSR_OK, "close")

  do b = 1, size(backends)
    rc = tsr_open(ctx, trim(path), "backend=" // trim(backends(b)), f)
    if (rc == TSR_ENOTBUILT) cycle
    call check(rc, TSR_OK, "tsr_open")
    call check(tsr_inq_varid(f, "T", vid), TSR_OK, "inq_varid")
    call check(vid, vt, "varid")
    do t = 1, nt
      rbuf = sentinel
      call check(tsr_get(f, vid, t, dr, rbuf), TSR_OK, "get T")
      do j = 1 - h, ny + h
        do k = 1, nz
          do i = i0 - h, i1 + h
            inside = i >= i0 .and. i <= i1 .and. j >= 1 .and. j <= ny
            if (inside) then
              call check_value(rbuf(i, k, j), value(i, k, j, t), i, k, j)
            else
              call check_value(rbuf(i, k, j), sentinel, i, k, j)
            end if
          end do
        end do
      end do
    end do
    call check(tsr_get(f, vid, nt + 1, dr, rbuf), TSR_ERANGE, "frame beyond the records")
    call check(tsr_put(f, vid, 1, dr, rbuf), TSR_EMODE, "put on a file opened for reading")
    call check(tsr_close(f), TSR_OK, "close read")
  end do

  call tsr_decomp_free(dw)
  call tsr_decomp_free(dr)
  call check(tsr_finalize(ctx), TSR_OK, "finalize")
  call MPI_Comm_free(model, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, fails, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, passes, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a)', "read_fortran: ", passes, " passed, ", fails, " failed"
  call MPI_Finalize(ierr)
  if (fails /= 0) error stop 1
contains
  ! The design guide's check value with the file's (j, k, i) as (k, j, i).
  real(c_float) function value(i, k, j, t)
    integer, intent(in) :: i, k, j, t
    value = real(mod((i - 1) + 7 * (k - 1) + 131 * (j - 1) + 8191 * (t - 1), 16777216), c_float)
  end function
  subroutine check(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    if (got /= want) then
      fails = fails + 1
      print '(a,i0,a,a,a,i0,a,i0,a,a)', "[rank ", rank, "] ", what, " returned ", got, &
            " expected ", want, ": ", tsr_strerror(got)
    else
      passes = passes + 1
    end if
  end subroutine
  subroutine check_value(got, want, i, k, j)
    real(c_float), intent(in) :: got, want
    integer, intent(in) :: i, k, j
    ! Bit patterns: exact, and no real equality for -Wcompare-reals to flag.
    if (transfer(got, 0_c_int32_t) /= transfer(want, 0_c_int32_t)) then
      if (fails < 5) print '(a,i0,a,3(i0,1x),a,f12.1,a,f12.1)', "[rank ", rank, "] T(i,k,j) ", &
                            i, k, j, "= ", got, " want ", want
      fails = fails + 1
    else
      passes = passes + 1
    end if
  end subroutine
end program
