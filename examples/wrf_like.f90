! wrf_like.f90: the Fortran twin of wrf_like.c, with WRF's own array layout:
! a(ims:ime, kms:kme, jms:jme) (MemoryOrder XZY) around the patch
! ips:ipe, jps:jpe, described with tsr_decomp_wrf and written in place.
! It writes the same files, value for value, as wrf_like.c.
!
!   mpiexec -n 4 wrf_like_f OUTDIR [NSTEPS]
program wrf_like
  use mpi
  use tessera
  use, intrinsic :: iso_c_binding, only: c_float, c_int64_t
  implicit none
  integer, parameter :: nx = 40, ny = 30, nz = 5, h = 1, every = 2
  integer :: ierr, model, rank, nranks, dims(2), py, px, step, nsteps, t, i, j, k
  integer :: ids, ide, jds, jde, kds, kde, ips, ipe, jps, jpe, ims, ime, jms, jme
  type(tsr_ctx_t) :: ctx
  type(tsr_decomp_t) :: d3, d2
  real(c_float), allocatable :: t3(:, :, :), t2(:, :)
  character(len=4096) :: outdir, arg
  character(len=19) :: times

  call MPI_Init(ierr)
  outdir = '.'
  nsteps = 6
  if (command_argument_count() >= 1) call get_command_argument(1, outdir)
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) nsteps
  end if

  ! Once: start Tessera; on I/O server ranks (strategy=servers) it returns
  ! at the end of the run with model = MPI_COMM_NULL.
  call check(tsr_init(MPI_COMM_WORLD, '', ctx, model), 'tsr_init')
  if (model == MPI_COMM_NULL) then
    call MPI_Finalize(ierr)
    stop
  end if

  ! WRF's bounds: domain ids:ide, kds:kde, jds:jde; patch ips:ipe, jps:jpe;
  ! memory ims:ime, jms:jme (the patch and a halo of h points).
  call MPI_Comm_rank(model, rank, ierr)
  call MPI_Comm_size(model, nranks, ierr)
  dims = 0
  call MPI_Dims_create(nranks, 2, dims, ierr)
  py = rank / dims(2)
  px = mod(rank, dims(2))
  ids = 1; ide = nx; jds = 1; jde = ny; kds = 1; kde = nz
  jps = ny * py / dims(1) + 1
  jpe = ny * (py + 1) / dims(1)
  ips = nx * px / dims(2) + 1
  ipe = nx * (px + 1) / dims(2)
  ims = ips - h; ime = ipe + h; jms = jps - h; jme = jpe + h
  allocate(t3(ims:ime, kds:kde, jms:jme), t2(ims:ime, jms:jme))

  ! Once per field shape, with the bounds as WRF declares them, per memory dimension.
  call check(tsr_decomp_wrf(ctx, 'XZY', [ids, kds, jds], [ide, kde, jde], [ips, kds, jps], &
                            [ipe, kde, jpe], [ims, kds, jms], [ime, kde, jme], d3), 'decomp 3-D')
  call check(tsr_decomp_wrf(ctx, 'XY', [ids, jds], [ide, jde], [ips, jps], [ipe, jpe], &
                            [ims, jms], [ime, jme], d2), 'decomp 2-D')

  t = 0
  do step = 0, nsteps
    ! The model's work; here the fields of output t, halos -1 (never written).
    t3 = -1.0
    t2 = -1.0
    do j = jps, jpe
      do k = kds, kde
        do i = ips, ipe
          t3(i, k, j) = pattern(0, t, k - 1, j - 1, i - 1)
        end do
      end do
      do i = ips, ipe
        t2(i, j) = pattern(1, t, 0, j - 1, i - 1)
      end do
    end do
    if (mod(step, every) /= 0) cycle
    write (times, '(a,i2.2,a,i2.2,a)') '2026-01-01_', step * 10 / 60, ':', &
      mod(step * 10, 60), ':00'
    call write_history(trim(outdir) // '/wrfout_d01_' // times, times)
    if (rank == 0) print '(a,a)', 'wrf_like: wrote ', trim(outdir) // '/wrfout_d01_' // times
    t = t + 1
  end do

  ! Once: free the decompositions, stop Tessera (waits for the servers).
  call tsr_decomp_free(d3)
  call tsr_decomp_free(d2)
  call check(tsr_finalize(ctx), 'tsr_finalize')
  call MPI_Comm_free(model, ierr)
  call MPI_Finalize(ierr)

contains

  ! One history file: define its schema, put every field once, close.
  ! Dimensions are listed fastest first and frames are 1-based.
  subroutine write_history(path, times)
    character(len=*), intent(in) :: path, times
    type(tsr_file_t) :: f
    integer :: dt, dstr, dx, dy, dz, vtimes, vt, vt2
    call check(tsr_create(ctx, path, '', f), 'tsr_create')
    call check(tsr_def_dim(f, 'Time', TSR_UNLIMITED, dt), 'def_dim')
    call check(tsr_def_dim(f, 'DateStrLen', 19_c_int64_t, dstr), 'def_dim')
    call check(tsr_def_dim(f, 'bottom_top', int(nz, c_int64_t), dz), 'def_dim')
    call check(tsr_def_dim(f, 'south_north', int(ny, c_int64_t), dy), 'def_dim')
    call check(tsr_def_dim(f, 'west_east', int(nx, c_int64_t), dx), 'def_dim')
    call check(tsr_def_var(f, 'Times', TSR_CHAR, [dstr, dt], vtimes), 'def_var Times')
    call check(tsr_def_var(f, 'T', TSR_FLOAT, [dx, dy, dz, dt], vt), 'def_var T')
    call check(tsr_def_var(f, 'T2', TSR_FLOAT, [dx, dy, dt], vt2), 'def_var T2')
    call check(tsr_put_att(f, vt, 'units', 'K'), 'put_att')
    call check(tsr_put_att(f, vt2, 'units', 'K'), 'put_att')
    call check(tsr_put_att(f, TSR_GLOBAL, 'TITLE', 'wrf_like'), 'put_att')
    call check(tsr_def_var_decomp(f, vt, d3), 'def_var_decomp')
    call check(tsr_def_var_decomp(f, vt2, d2), 'def_var_decomp')
    call check(tsr_enddef(f), 'enddef')
    call check(tsr_put_global(f, vtimes, 1, times), 'put Times')
    call check(tsr_put(f, vt, 1, d3, t3), 'put T')
    call check(tsr_put(f, vt2, 1, d2, t2), 'put T2')
    call check(tsr_close(f), 'tsr_close')
  end subroutine

  real(c_float) function pattern(v, t, k, j, i)
    integer, intent(in) :: v, t, k, j, i
    pattern = real(mod(i + 7 * j + 131 * k + 8191 * t + 524287 * v, 16777216), c_float)
  end function

  ! Every Tessera call returns 0 or the same TSR_E* code on every rank.
  subroutine check(rc, what)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: what
    integer :: ierr2
    if (rc /= TSR_OK) then
      print '(a,a,a,a,a)', what, ': ', tsr_strerror(rc), ' ', tsr_last_error()
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr2)
    end if
  end subroutine
end program
