! Issue 13 through the Fortran module: a WRF a(i,k,j) field written through
! a PIO-style compdof (1-based, 0 = not written) and the same field through
! tsr_decomp_wrf with WRF's bounds and MemoryOrder 'XZY'; both read back
! exactly through their own decompositions and through a plain box.
! Usage: test_decomp_fortran <path> <hints>
program test_decomp_fortran
  use mpi
  use tessera
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: nx = 6, ny = 5, nz = 3, h = 1
  integer :: ierr, rank, nranks, model, i, j, k, n, fails, jps, jpe, vt, vu, dt, dx, dy, dz
  integer(c_int64_t), allocatable :: compdof(:)
  real(c_float), allocatable :: a(:, :, :), packed(:), back(:), u(:, :, :), tb(:, :, :), ub(:, :, :)
  type(tsr_ctx_t) :: ctx
  type(tsr_decomp_t) :: dmap, dwrf, dbox
  type(tsr_file_t) :: f
  character(len=256) :: path, hints

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, path)
  call get_command_argument(2, hints)
  fails = 0
  call check(tsr_init(MPI_COMM_WORLD, "", ctx, model), TSR_OK, "tsr_init")
  jps = ny * rank / nranks + 1
  jpe = ny * (rank + 1) / nranks
  ! The patch as WRF holds it, a(ims:ime, kms:kme, jms:jme), with a halo.
  allocate(a(1 - h:nx + h, 1:nz, jps - h:jpe + h), u(1 - h:nx + h, 1:nz, jps - h:jpe + h))
  a = -1.0
  do j = jps, jpe
    do k = 1, nz
      do i = 1, nx
        a(i, k, j) = val(i, j, k)
      end do
    end do
  end do
  ! compdof as WRF's PIO integration builds it: memory order (i, k, j) of
  ! the patch, global index over the file's (west_east, south_north,
  ! bottom_top); one extra buffer position that is not written (0).
  n = nx * nz * (jpe - jps + 1) + 1
  allocate(compdof(n), packed(n), back(n))
  n = 0
  do j = jps, jpe
    do k = 1, nz
      do i = 1, nx
        n = n + 1
        compdof(n) = int(i + nx * ((j - 1) + ny * (k - 1)), c_int64_t)
        packed(n) = val(i, j, k)
      end do
    end do
  end do
  compdof(n + 1) = 0
  packed(n + 1) = -2.0
  call check(tsr_decomp_map(ctx, [int(nx, c_int64_t), int(ny, c_int64_t), int(nz, c_int64_t)], &
                            compdof, dmap), TSR_OK, "tsr_decomp_map")
  call check(tsr_decomp_wrf(ctx, 'XZY', [1, 1, 1], [nx, nz, ny], [1, 1, jps], [nx, nz, jpe], &
                            [1 - h, 1, jps - h], [nx + h, nz, jpe + h], dwrf), TSR_OK, "tsr_decomp_wrf")
  call check(tsr_decomp_box(ctx, [int(nx, c_int64_t), int(ny, c_int64_t), int(nz, c_int64_t)], &
                            [1_c_int64_t, int(jps, c_int64_t), 1_c_int64_t], &
                            [int(nx, c_int64_t), int(jpe - jps + 1, c_int64_t), int(nz, c_int64_t)], &
                            dbox), TSR_OK, "tsr_decomp_box")
  call check(tsr_create(ctx, trim(path), trim(hints), f), TSR_OK, "tsr_create")
  call check(tsr_def_dim(f, "Time", TSR_UNLIMITED, dt), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "west_east", int(nx, c_int64_t), dx), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "south_north", int(ny, c_int64_t), dy), TSR_OK, "def_dim")
  call check(tsr_def_dim(f, "bottom_top", int(nz, c_int64_t), dz), TSR_OK, "def_dim")
  call check(tsr_def_var(f, "T", TSR_FLOAT, [dx, dy, dz, dt], vt), TSR_OK, "def_var T")
  call check(tsr_def_var(f, "U", TSR_FLOAT, [dx, dy, dz, dt], vu), TSR_OK, "def_var U")
  call check(tsr_enddef(f), TSR_OK, "enddef")
  call check(tsr_put(f, vt, 1, dmap, packed), TSR_OK, "put T (compdof)")
  call check(tsr_put(f, vu, 1, dwrf, a), TSR_OK, "put U (XZY)")
  call check(tsr_close(f), TSR_OK, "close")

  call check(tsr_open(ctx, trim(path), "", f), TSR_OK, "tsr_open")
  back = -3.0
  call check(tsr_get(f, vt, 1, dmap, back), TSR_OK, "get T (compdof)")
  do i = 1, n
    if (ne(back(i), packed(i))) fails = fails + 1
  end do
  if (ne(back(n + 1), -3.0_c_float)) fails = fails + 1 ! position 0 of compdof is left alone
  u = -4.0
  call check(tsr_get(f, vu, 1, dwrf, u), TSR_OK, "get U (XZY)")
  do j = jps - h, jpe + h
    do k = 1, nz
      do i = 1 - h, nx + h
        if (i >= 1 .and. i <= nx .and. j >= jps .and. j <= jpe) then
          if (ne(u(i, k, j), val(i, j, k))) fails = fails + 1
        else if (ne(u(i, k, j), -4.0_c_float)) then
          fails = fails + 1 ! the halo is not touched
        end if
      end do
    end do
  end do
  allocate(tb(nx, jps:jpe, nz), ub(nx, jps:jpe, nz))
  call check(tsr_get(f, vt, 1, dbox, tb), TSR_OK, "get T (box)")
  call check(tsr_get(f, vu, 1, dbox, ub), TSR_OK, "get U (box)")
  do k = 1, nz
    do j = jps, jpe
      do i = 1, nx
        if (ne(tb(i, j, k), val(i, j, k)) .or. ne(ub(i, j, k), val(i, j, k))) fails = fails + 1
      end do
    end do
  end do
  call check(tsr_close(f), TSR_OK, "close (read)")
  call tsr_decomp_free(dmap)
  call tsr_decomp_free(dwrf)
  call tsr_decomp_free(dbox)
  call check(tsr_finalize(ctx), TSR_OK, "finalize")
  call MPI_Comm_free(model, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, fails, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a)', "decomp_fortran: ", merge(1, 0, fails == 0), " passed, ", &
                       fails, " failed"
  call MPI_Finalize(ierr)
  if (fails /= 0) error stop 1
contains
  ! Exact comparison (the values are small integers), bit for bit.
  logical function ne(x, y)
    real(c_float), intent(in) :: x, y
    ne = transfer(x, 0_c_int32_t) /= transfer(y, 0_c_int32_t)
  end function
  real(c_float) function val(i, j, k)
    integer, intent(in) :: i, j, k
    val = real(i + 100 * j + 10000 * k, c_float)
  end function
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
