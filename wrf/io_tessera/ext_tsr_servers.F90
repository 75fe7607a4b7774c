!> Tessera's own I/O servers inside WRF. WRF decomposes its domains over
!> the communicator it holds after MPI_Init, so servers must be taken from
!> the job before that: `tessera wrf install` adds one call of
!> ext_tsr_server_split to WRF's split_communicator, right after MPI_Init.
!> When TESSERA_HINTS asks for strategy=servers, the last io_groups x
!> io_tasks ranks become Tessera's servers there and never return to WRF
!> (they serve until WRF's ext_tsr_ioexit, then leave the job); WRF's own
!> ranks go on with the model communicator in place of MPI_COMM_WORLD.
!> Without servers in the hints the call does nothing.
subroutine ext_tsr_server_split(comm)
  use mpi
  use tessera
  use ext_tsr_state
  implicit none
  integer, intent(inout) :: comm
  integer :: rc, model, ierr
  if (.not. hints_ask_for_servers()) return
  initialized = .true.
  if (.not. allocated(ctxs)) allocate(ctxs(4))
  nctx = 1
  rc = tsr_init(comm, '', ctxs(1)%ctx, model)
  if (model == MPI_COMM_NULL) then
    ! a server: tsr_init served until the model ranks finalized
    if (rc /= TSR_OK) rc = tessera_failed(rc, 'Tessera I/O server')
    call MPI_Finalize(ierr)
    stop
  end if
  if (rc /= TSR_OK) then
    rc = tessera_failed(rc, 'tsr_init with I/O servers')
    call MPI_Abort(comm, 1, ierr)
  end if
  ctxs(1)%comm = model
  ctxs(1)%model = model
  servers_ctx = 1
  comm = model
end subroutine
