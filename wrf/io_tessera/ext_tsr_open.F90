!> Opening, committing, syncing and closing files: the life of a WRF
!> DataHandle over Tessera. WRF's training pass (open_for_write_begin, then
!> every write_field and metadata call without data) is Tessera's define
!> mode; the commit leaves it, and the real pass writes.

!> Once per run, before any open.
subroutine ext_tsr_ioinit(SysDepInfo, Status)
  use ext_tsr_state
  implicit none
  character(len=*), intent(in) :: SysDepInfo
  integer, intent(inout) :: Status
  initialized = .true.
  Status = WRF_NO_ERR
end subroutine

!> Once per run, after the last close: stops every Tessera context
!> (collective over each communicator, as WRF calls it on every rank).
subroutine ext_tsr_ioexit(Status)
  use ext_tsr_state
  implicit none
  integer, intent(inout) :: Status
  integer :: i, rc, ierr
  Status = WRF_NO_ERR
  if (.not. initialized) then
    Status = WRF_IO_NOT_INITIALIZED
    return
  end if
  do i = 1, ndec
    call tsr_decomp_free(decs(i)%d)
  end do
  ndec = 0
  do i = 1, nctx
    rc = tsr_finalize(ctxs(i)%ctx)
    if (rc /= TSR_OK .and. Status == WRF_NO_ERR) Status = tessera_failed(rc, 'tsr_finalize')
    ! the servers' model communicator became WRF's own (ext_tsr_server_split)
    if (ctxs(i)%model /= MPI_COMM_NULL .and. i /= servers_ctx) &
      call MPI_Comm_free(ctxs(i)%model, ierr)
  end do
  nctx = 0
  servers_ctx = 0
  initialized = .false.
end subroutine

!> Start the training pass of a new file (collective over Comm). The file
!> is created under a temporary name; Tessera renames it when it is whole.
subroutine ext_tsr_open_for_write_begin(FileName, Comm, IOComm, SysDepInfo, DataHandle, Status)
  use ext_tsr_state
  implicit none
  character(len=*), intent(in) :: FileName
  integer, intent(in) :: Comm, IOComm
  character(len=*), intent(in) :: SysDepInfo
  integer, intent(out) :: DataHandle, Status
  type(handle_t), pointer :: h
  integer :: rc, dimtime, dimstr
  dimtime = -1
  dimstr = -1
  call open_handle(FileName, Comm, DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  h%r4_output = index(SysDepInfo, 'REAL_OUTPUT_SIZE=4') > 0
  rc = tsr_create(ctxs(h%ctx)%ctx, trim(FileName), '', h%f)
  if (rc /= TSR_OK) then
    Status = tessera_failed(rc, 'creating '//trim(FileName))
    call free_handle(DataHandle)
    DataHandle = -1
    return
  end if
  h%state = WRF_FILE_OPENED_NOT_COMMITTED
  h%defining = .true.
  ! WRF's packages begin every file with Time, DateStrLen and Times.
  rc = tsr_def_dim(h%f, 'Time', TSR_UNLIMITED, dimtime)
  if (rc == TSR_OK) rc = tsr_def_dim(h%f, 'DateStrLen', int(DATE_STR_LEN, c_int64_t), dimstr)
  if (rc == TSR_OK) rc = tsr_def_var(h%f, 'Times', TSR_CHAR, [dimstr, dimtime], h%times_varid)
  if (rc /= TSR_OK) then
    Status = tessera_failed(rc, 'defining Times in '//trim(FileName), h%f)
    return
  end if
  h%time_dimid = dimtime
  h%ndims = 1
  h%dimname(1) = 'DateStrLen'
  h%dimlen(1) = DATE_STR_LEN
  h%dimid(1) = dimstr
end subroutine

!> End of the training pass. Tessera stays in define mode until the first
!> data (see handle_t%defining), so the domain metadata WRF puts now lands
!> in the header.
subroutine ext_tsr_open_for_write_commit(DataHandle, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  call get_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  if (h%state /= WRF_FILE_OPENED_NOT_COMMITTED) then
    Status = WRF_ERR_FATAL_BAD_FILE_STATUS
    return
  end if
  h%state = WRF_FILE_OPENED_FOR_WRITE
end subroutine

!> Open an existing file for reading (collective over Comm). A file Tessera
!> cannot read collectively (NetCDF-4 from io_form 2) is read by every rank
!> with NetCDF-C instead.
subroutine ext_tsr_open_for_read_begin(FileName, Comm, IOComm, SysDepInfo, DataHandle, Status)
  use ext_tsr_state
  use ext_tsr_patch, only: read_catalogue
  implicit none
  character(len=*), intent(in) :: FileName
  integer, intent(in) :: Comm, IOComm
  character(len=*), intent(in) :: SysDepInfo
  integer, intent(out) :: DataHandle, Status
  type(handle_t), pointer :: h
  integer :: rc
  logical :: pieces, whole
  call open_handle(FileName, Comm, DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  ! pieces of strategy=split (WRF's io_form 102 files) are read as the one file
  inquire(file=trim(FileName)//'.0000', exist=pieces)
  inquire(file=trim(FileName), exist=whole)
  if (pieces .and. .not. whole) then
    rc = tsr_open(ctxs(h%ctx)%ctx, trim(FileName), 'strategy=split', h%f)
  else
    rc = tsr_open(ctxs(h%ctx)%ctx, trim(FileName), '', h%f)
    if (rc == TSR_EFORMAT) rc = tsr_open(ctxs(h%ctx)%ctx, trim(FileName), 'backend=netcdf', h%f)
  end if
  if (rc /= TSR_OK) then
    Status = tessera_failed(rc, 'opening '//trim(FileName))
    if (rc == TSR_EACCES) Status = WRF_WARN_FILE_NF
    call free_handle(DataHandle)
    DataHandle = -1
    return
  end if
  call read_catalogue(h, Status)
  if (Status /= WRF_NO_ERR) then
    rc = tsr_close(h%f)
    call free_handle(DataHandle)
    DataHandle = -1
    return
  end if
  h%state = WRF_FILE_OPENED_NOT_COMMITTED
end subroutine

subroutine ext_tsr_open_for_read_commit(DataHandle, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  call get_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  h%state = WRF_FILE_OPENED_FOR_READ
end subroutine

!> The one-call open for reading: begin and commit (WRF opens its input so).
subroutine ext_tsr_open_for_read(DatasetName, Comm1, Comm2, SysDepInfo, DataHandle, Status)
  use ext_tsr_state
  implicit none
  character(len=*), intent(in) :: DatasetName, SysDepInfo
  integer, intent(in) :: Comm1, Comm2
  integer, intent(out) :: DataHandle, Status
  call ext_tsr_open_for_read_begin(DatasetName, Comm1, Comm2, SysDepInfo, DataHandle, Status)
  if (Status == WRF_NO_ERR) call ext_tsr_open_for_read_commit(DataHandle, Status)
end subroutine

!> A one-call open for writing has no training pass: WRF's NetCDF packages
!> leave it a no-op, and so does this one.
subroutine ext_tsr_open_for_write(DatasetName, Comm1, Comm2, SysDepInfo, DataHandle, Status)
  use ext_tsr_state
  implicit none
  character(len=*), intent(in) :: DatasetName, SysDepInfo
  integer, intent(in) :: Comm1, Comm2
  integer, intent(out) :: DataHandle, Status
  DataHandle = 0
  Status = WRF_WARN_NOOP
end subroutine

!> Tessera writes new files only; updating one in place is not offered.
subroutine ext_tsr_open_for_update(FileName, Comm, IOComm, SysDepInfo, DataHandle, Status)
  use ext_tsr_state
  implicit none
  character(len=*), intent(in) :: FileName, SysDepInfo
  integer, intent(in) :: Comm, IOComm
  integer, intent(out) :: DataHandle, Status
  DataHandle = -1
  call say('open_for_update of '//trim(FileName)//': Tessera does not update files in place')
  Status = WRF_WARN_NOTSUPPORTED
end subroutine

!> Every byte put so far reaches the file (collective).
subroutine ext_tsr_iosync(DataHandle, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  integer :: rc
  call get_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  if (h%state /= WRF_FILE_OPENED_FOR_WRITE) return
  Status = end_define(h)
  if (Status /= WRF_NO_ERR) return
  rc = tsr_flush(h%f)
  if (rc /= TSR_OK) Status = tessera_failed(rc, 'flushing '//trim(h%path), h%f)
end subroutine

!> Close (collective). A file that was written appears under its name now,
!> complete, or not at all.
subroutine ext_tsr_ioclose(DataHandle, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  integer :: rc, st
  call get_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  if (h%state == WRF_FILE_OPENED_NOT_COMMITTED .and. h%defining) Status = WRF_WARN_DRYRUN_CLOSE
  st = end_define(h)
  rc = tsr_close(h%f)
  if (rc /= TSR_OK) then
    Status = tessera_failed(rc, 'closing '//trim(h%path))
  else if (st /= WRF_NO_ERR) then
    Status = st
  end if
  call free_handle(DataHandle)
end subroutine

!> Leaving and re-entering define mode are the commit's business here.
subroutine ext_tsr_redef(DataHandle, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  call get_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  if (.not. h%defining) Status = WRF_WARN_NOTSUPPORTED
end subroutine

subroutine ext_tsr_enddef(DataHandle, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  call get_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  if (h%state == WRF_FILE_OPENED_FOR_WRITE) Status = end_define(h)
end subroutine

!> Which name the handle has, and in which state.
subroutine ext_tsr_inquire_filename(DataHandle, FileName, FileStatus, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(out) :: FileName
  integer, intent(out) :: FileStatus, Status
  type(handle_t), pointer :: h
  FileName = ''
  FileStatus = WRF_FILE_NOT_OPENED
  call get_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  FileName = h%path
  FileStatus = h%state
end subroutine

!> Whether the handle has this file open, and in which state.
subroutine ext_tsr_inquire_opened(DataHandle, FileName, FileStatus, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: FileName
  integer, intent(out) :: FileStatus, Status
  type(handle_t), pointer :: h
  FileStatus = WRF_FILE_NOT_OPENED
  call get_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) then
    Status = WRF_NO_ERR
    return
  end if
  if (trim(FileName) == trim(h%path)) FileStatus = h%state
end subroutine

!> What the package can do, in the words of WRF's I/O API.
subroutine ext_tsr_inquiry(Inquiry, Result, Status)
  use ext_tsr_state
  implicit none
  character(len=*), intent(in) :: Inquiry
  character(len=*), intent(out) :: Result
  integer, intent(inout) :: Status
  select case (Inquiry)
  case ('RANDOM_WRITE', 'RANDOM_READ', 'SEQUENTIAL_WRITE', 'SEQUENTIAL_READ')
    Result = 'ALLOW'
  case ('OPEN_READ', 'OPEN_COMMIT_WRITE')
    Result = 'REQUIRE'
  case ('OPEN_WRITE', 'OPEN_COMMIT_READ')
    Result = 'NO'
  case ('PARALLEL_IO', 'SELF_DESCRIBING', 'SUPPORT_METADATA', 'SUPPORT_3D_FIELDS')
    Result = 'YES'
  case ('MEDIUM')
    Result = 'FILE'
  case default
    Result = 'No Result for that inquiry!'
  end select
  Status = WRF_NO_ERR
end subroutine
