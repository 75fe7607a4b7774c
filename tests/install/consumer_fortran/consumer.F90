! A Fortran model outside the Tessera tree: writes one field through the
! installed module and library, and prints the library's version.
program consumer_fortran
  use mpi
  use tessera
  use, intrinsic :: iso_c_binding
  implicit none
  integer :: ierr, rank, nranks, model, rc, dim, var
  type(tsr_ctx_t) :: ctx
  type(tsr_decomp_t) :: d
  type(tsr_file_t) :: f
  real(c_float) :: v(4) = [1, 2, 3, 4]
  character(len=256) :: path

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, path)
  rc = tsr_init(MPI_COMM_WORLD, "strategy=serial", ctx, model)
  if (rc == TSR_OK) rc = tsr_decomp_box(ctx, [int(4 * nranks, c_int64_t)], &
                                        [int(4 * rank + 1, c_int64_t)], [4_c_int64_t], d)
  if (rc == TSR_OK) rc = tsr_create(ctx, trim(path), "", f)
  if (rc == TSR_OK) rc = tsr_def_dim(f, "x", int(4 * nranks, c_int64_t), dim)
  if (rc == TSR_OK) rc = tsr_def_var(f, "v", TSR_FLOAT, [dim], var)
  if (rc == TSR_OK) rc = tsr_enddef(f)
  if (rc == TSR_OK) rc = tsr_put(f, var, 1, d, v)
  if (rc == TSR_OK) rc = tsr_close(f)
  if (rc == TSR_OK) call tsr_decomp_free(d)
  if (rc == TSR_OK) rc = tsr_finalize(ctx)
  if (rank == 0) then
    if (rc == TSR_OK) then
      print '(a, a, a)', "consumer_fortran: ok (libtessera ", tsr_inq_libvers(), ")"
    else
      print '(a, a)', "consumer_fortran: ", tsr_strerror(rc)
    end if
  end if
  call MPI_Finalize(ierr)
  if (rc /= TSR_OK) stop 1
end program
