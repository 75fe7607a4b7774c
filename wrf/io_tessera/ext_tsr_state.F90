!> What ext_tsr_* remembers between calls: one Tessera context per
!> communicator, the open files (WRF's DataHandles) with their dimensions,
!> variables and times, and the decompositions shared by the files.
module ext_tsr_state
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use mpi
  use tessera
  use ext_tsr_codes
  implicit none
  public

  integer, parameter :: MAX_HANDLES = 100
  integer, parameter :: NAME_LEN = 256
  !> The dimension slot of a length that no dimension has yet.
  integer, parameter :: NO_DIM = -1

  !> A variable of an open file: its Tessera id, its shape in file order
  !> (fastest first, Time not counted) and how a patch reaches it.
  type var_t
    character(len=NAME_LEN) :: name = ''
    integer :: varid = -1
    integer :: ndim = 0
    integer :: flen(3) = 1
    integer :: xtype = 0         ! TSR_FLOAT, TSR_DOUBLE, TSR_INT, TSR_CHAR
    logical :: replicated = .false. ! every rank holds all of it: written once
    logical :: meta = .false.    ! a time-dependent metadata variable (md___*)
  end type

  type handle_t
    logical :: used = .false.
    integer :: state = WRF_FILE_NOT_OPENED
    !> Committed, but Tessera is still in define mode: WRF puts domain
    !> metadata after the commit and before the first field, which Tessera
    !> takes only in define mode, so tsr_enddef waits for the first data.
    logical :: defining = .false.
    logical :: r4_output = .false.
    character(len=1024) :: path = ''
    integer :: comm = MPI_COMM_NULL
    integer :: ctx = 0
    type(tsr_file_t) :: f
    integer :: times_varid = -1, time_dimid = -1
    ! dimension slots, as WRF's packages number them (DIM0001, ...)
    integer :: ndims = 0
    character(len=NAME_LEN), allocatable :: dimname(:)
    integer, allocatable :: dimlen(:), dimid(:)
    integer :: nvars = 0
    type(var_t), allocatable :: vars(:)
    integer :: ntimes = 0
    character(len=DATE_STR_LEN), allocatable :: times(:)
    integer :: current_time = 0, current_var = 0
  end type

  type ctx_entry_t
    integer :: comm = MPI_COMM_NULL
    integer :: model = MPI_COMM_NULL
    type(tsr_ctx_t) :: ctx
  end type

  !> A decomposition made once for a field shape and reused by every file.
  type dec_entry_t
    integer :: ctx = 0
    integer :: key(20) = 0
    type(tsr_decomp_t) :: d
  end type

  logical :: initialized = .false.
  type(handle_t), target :: handles(MAX_HANDLES)
  type(ctx_entry_t), allocatable :: ctxs(:)
  integer :: nctx = 0
  type(dec_entry_t), allocatable :: decs(:)
  integer :: ndec = 0
  !> The context whose servers ext_tsr_server_split started (0: none): every
  !> communicator WRF makes from the model ranks uses it.
  integer :: servers_ctx = 0
  !> The last message said, for ext_tsr_error_str.
  character(len=2048) :: last_message = ''

contains

  !> Print a message on this rank (WRF's rsl.error.NNNN) and keep it.
  subroutine say(msg)
    character(len=*), intent(in) :: msg
    last_message = msg
    write(error_unit, '(a)') 'ext_tsr: '//trim(msg)
    flush(error_unit)
  end subroutine

  !> A Tessera error as a WRF status, said with Tessera's words.
  integer function tessera_failed(rc, what, f) result(status)
    integer, intent(in) :: rc
    character(len=*), intent(in) :: what
    type(tsr_file_t), intent(in), optional :: f
    character(len=:), allocatable :: why
    ! tsr_last_error speaks for calls that return no handle; a call on an
    ! open file is said by its code.
    why = ''
    if (.not. present(f)) why = tsr_last_error()
    if (len(why) == 0) why = tsr_strerror(rc)
    call say(what//': '//why)
    select case (rc)
    case (TSR_ENAME)
      status = WRF_WARN_VAR_NF
    case (TSR_ERANGE)
      status = WRF_WARN_TIME_NF
    case default
      status = WRF_WARN_TESSERA
    end select
  end function

  !> The handle of DataHandle, or a status saying why there is none.
  subroutine get_handle(DataHandle, h, status)
    integer, intent(in) :: DataHandle
    type(handle_t), pointer, intent(out) :: h
    integer, intent(out) :: status
    h => null()
    if (.not. initialized) then
      status = WRF_IO_NOT_INITIALIZED
    else if (DataHandle < 1 .or. DataHandle > MAX_HANDLES) then
      status = WRF_WARN_BAD_DATA_HANDLE
    else if (.not. handles(DataHandle)%used) then
      status = WRF_WARN_BAD_DATA_HANDLE
    else
      h => handles(DataHandle)
      status = WRF_NO_ERR
    end if
  end subroutine

  !> A free handle, reset, for a file on comm.
  subroutine new_handle(comm, DataHandle, status)
    integer, intent(in) :: comm
    integer, intent(out) :: DataHandle, status
    integer :: i
    DataHandle = -1
    status = WRF_WARN_TOO_MANY_FILES
    do i = 1, MAX_HANDLES
      if (.not. handles(i)%used) then
        handles(i) = handle_t()
        handles(i)%used = .true.
        handles(i)%comm = comm
        allocate(handles(i)%dimname(64), handles(i)%dimlen(64), handles(i)%dimid(64))
        handles(i)%dimlen = NO_DIM
        allocate(handles(i)%vars(256), handles(i)%times(16))
        DataHandle = i
        status = WRF_NO_ERR
        return
      end if
    end do
    call say('more than 100 files open at once')
  end subroutine

  !> The start of both opens (collective over comm): the package is
  !> initialized, comm has its Tessera context, a handle is free for path.
  subroutine open_handle(path, comm, DataHandle, h, status)
    character(len=*), intent(in) :: path
    integer, intent(in) :: comm
    integer, intent(out) :: DataHandle, status
    type(handle_t), pointer, intent(out) :: h
    integer :: ictx
    DataHandle = -1
    h => null()
    if (.not. initialized) then
      status = WRF_IO_NOT_INITIALIZED
      return
    end if
    call context_of(comm, ictx, status)
    if (status /= WRF_NO_ERR) return
    call new_handle(comm, DataHandle, status)
    if (status /= WRF_NO_ERR) return
    h => handles(DataHandle)
    h%ctx = ictx
    h%path = path
  end subroutine

  subroutine free_handle(DataHandle)
    integer, intent(in) :: DataHandle
    handles(DataHandle) = handle_t()
  end subroutine

  !> The Tessera context of comm, started on first use (collective over comm).
  !> Tessera's own I/O servers cannot start here: their ranks would be taken
  !> from WRF's domain decomposition, made before any I/O. They start in
  !> ext_tsr_server_split (ext_tsr_servers.F90), whose context every
  !> communicator of the model ranks shares.
  subroutine context_of(comm, ictx, status)
    integer, intent(in) :: comm
    integer, intent(out) :: ictx, status
    type(ctx_entry_t), allocatable :: grown(:)
    integer :: i, n, rc, model
    status = WRF_NO_ERR
    do i = 1, nctx
      if (ctxs(i)%comm == comm) then
        ictx = i
        return
      end if
    end do
    ictx = 0
    if (servers_ctx > 0) then
      ! WRF's domain communicators are made from the model ranks: the same
      ! group, perhaps in another order, which Tessera's tiles do not mind
      call MPI_Comm_compare(comm, ctxs(servers_ctx)%model, n, rc)
      if (n /= MPI_UNEQUAL) then
        ictx = servers_ctx
        return
      end if
    end if
    if (hints_ask_for_servers()) then
      call say('TESSERA_HINTS asks for strategy=servers, but no servers were started'// &
               ' before WRF decomposed its domains: WRF must call ext_tsr_server_split'// &
               ' after MPI_Init (tessera wrf install adds the call)')
      status = WRF_WARN_NOTSUPPORTED
      return
    end if
    if (.not. allocated(ctxs)) allocate(ctxs(4))
    if (nctx == size(ctxs)) then
      allocate(grown(2 * nctx))
      grown(1:nctx) = ctxs(1:nctx)
      call move_alloc(grown, ctxs)
    end if
    nctx = nctx + 1
    ctxs(nctx)%comm = comm
    rc = tsr_init(comm, '', ctxs(nctx)%ctx, model)
    ctxs(nctx)%model = model
    if (rc /= TSR_OK) then
      status = tessera_failed(rc, 'tsr_init')
      nctx = nctx - 1
      return
    end if
    ictx = nctx
  end subroutine

  !> Whether TESSERA_HINTS asks for Tessera's I/O servers (in any group: they
  !> start with the context, before any file name is known).
  logical function hints_ask_for_servers()
    character(len=4096) :: env
    integer :: n
    call get_environment_variable('TESSERA_HINTS', env, n)
    hints_ask_for_servers = index(env(1:max(n, 0)), 'strategy=servers') > 0
  end function

  !> A decomposition of a patch: found among those made before when every
  !> rank finds its own (the search is local, the answer agreed), made
  !> collectively otherwise. Arrays in file order, fastest first, 1-based.
  subroutine decomposition(ictx, comm, nd, g, s, c, ms, mc, forder, idec, rc)
    integer, intent(in) :: ictx, comm, nd
    integer(c_int64_t), intent(in) :: g(3), s(3), c(3), ms(3), mc(3)
    integer(c_int), intent(in) :: forder(3)
    integer, intent(out) :: idec, rc
    type(dec_entry_t), allocatable :: grown(:)
    integer :: key(20), i, found, all_found, ierr
    key = 0
    key(1) = nd
    key(2:4) = int(g)
    key(5:7) = int(s)
    key(8:10) = int(c)
    key(11:13) = int(ms)
    key(14:16) = int(mc)
    key(17:19) = int(forder)
    found = 0
    do i = 1, ndec
      if (decs(i)%ctx == ictx .and. all(decs(i)%key == key)) then
        found = i
        exit
      end if
    end do
    call MPI_Allreduce(merge(1, 0, found > 0), all_found, 1, MPI_INTEGER, MPI_MIN, comm, ierr)
    rc = TSR_OK
    if (all_found == 1) then
      idec = found
      return
    end if
    if (.not. allocated(decs)) allocate(decs(16))
    if (ndec == size(decs)) then
      allocate(grown(2 * ndec))
      grown(1:ndec) = decs(1:ndec)
      call move_alloc(grown, decs)
    end if
    ndec = ndec + 1
    decs(ndec)%ctx = ictx
    decs(ndec)%key = key
    rc = tsr_decomp_ordered(ctxs(ictx)%ctx, g(1:nd), s(1:nd), c(1:nd), ms(1:nd), mc(1:nd), &
                            forder(1:nd), decs(ndec)%d)
    if (rc /= TSR_OK) then
      ndec = ndec - 1
      idec = 0
      return
    end if
    idec = ndec
  end subroutine

  !> The index of a variable of h by name, 0 when there is none.
  integer function find_var(h, name)
    type(handle_t), intent(in) :: h
    character(len=*), intent(in) :: name
    integer :: i
    find_var = 0
    do i = 1, h%nvars
      if (h%vars(i)%name == name) then
        find_var = i
        return
      end if
    end do
  end function

  !> Room for one more variable.
  subroutine grow_vars(h)
    type(handle_t), intent(inout) :: h
    type(var_t), allocatable :: grown(:)
    if (h%nvars < size(h%vars)) return
    allocate(grown(2 * size(h%vars)))
    grown(1:h%nvars) = h%vars(1:h%nvars)
    call move_alloc(grown, h%vars)
  end subroutine

  !> Room for one more time.
  subroutine grow_times(h)
    type(handle_t), intent(inout) :: h
    character(len=DATE_STR_LEN), allocatable :: grown(:)
    if (h%ntimes < size(h%times)) return
    allocate(grown(2 * size(h%times)))
    grown(1:h%ntimes) = h%times(1:h%ntimes)
    call move_alloc(grown, h%times)
  end subroutine

  !> Collective over h%comm: leave Tessera's define mode if still in it.
  integer function end_define(h) result(status)
    type(handle_t), intent(inout) :: h
    integer :: rc
    status = WRF_NO_ERR
    if (.not. h%defining) return
    h%defining = .false.
    rc = tsr_enddef(h%f)
    if (rc /= TSR_OK) status = tessera_failed(rc, 'tsr_enddef of '//trim(h%path))
  end function

  !> The record (1-based) that DateStr writes to, as WRF's packages count
  !> them: a date other than the last one starts a new record and writes
  !> Times there.
  integer function write_frame(h, DateStr, status) result(frame)
    type(handle_t), intent(inout) :: h
    character(len=*), intent(in) :: DateStr
    integer, intent(out) :: status
    character(len=DATE_STR_LEN) :: d
    integer :: rc
    frame = 0
    status = date_check(DateStr)
    if (status /= WRF_NO_ERR) return
    d = DateStr
    if (h%ntimes > 0) then
      if (h%times(h%ntimes) == d) then
        frame = h%ntimes
        return
      end if
    end if
    call grow_times(h)
    h%ntimes = h%ntimes + 1
    h%times(h%ntimes) = d
    frame = h%ntimes
    rc = tsr_put_global(h%f, h%times_varid, frame, d)
    if (rc /= TSR_OK) status = tessera_failed(rc, 'writing Times of '//trim(h%path), h%f)
  end function

  !> The record (1-based) of DateStr in a file being read, 0 if absent.
  integer function read_frame(h, DateStr)
    type(handle_t), intent(in) :: h
    character(len=*), intent(in) :: DateStr
    integer :: i
    read_frame = 0
    do i = 1, h%ntimes
      if (h%times(i) == DateStr(1:min(len(DateStr), DATE_STR_LEN))) then
        read_frame = i
        return
      end if
    end do
  end function

  !> Reading calls need a committed file opened for reading.
  subroutine readable(h, status)
    type(handle_t), intent(in) :: h
    integer, intent(out) :: status
    select case (h%state)
    case (WRF_FILE_OPENED_FOR_READ)
      status = WRF_NO_ERR
    case (WRF_FILE_OPENED_NOT_COMMITTED)
      status = WRF_WARN_DRYRUN_READ
    case (WRF_FILE_OPENED_FOR_WRITE)
      status = WRF_WARN_READ_WONLY_FILE
    case default
      status = WRF_WARN_FILE_NOT_OPENED
    end select
  end subroutine

  !> The handle of a file opened for reading: get_handle, then readable.
  subroutine reading_handle(DataHandle, h, status)
    integer, intent(in) :: DataHandle
    type(handle_t), pointer, intent(out) :: h
    integer, intent(out) :: status
    call get_handle(DataHandle, h, status)
    if (status == WRF_NO_ERR) call readable(h, status)
  end subroutine

  !> Move the reader by delta (+1, -1) among the file's times; past either
  !> end, WRF_WARN_TIME_EOF and no move. The next get_next_var starts over.
  subroutine step_time(DataHandle, delta, DateStr, status)
    integer, intent(in) :: DataHandle, delta
    character(len=*), intent(out) :: DateStr
    integer, intent(out) :: status
    type(handle_t), pointer :: h
    DateStr = ''
    call reading_handle(DataHandle, h, status)
    if (status /= WRF_NO_ERR) return
    if (h%current_time + delta < 1 .or. h%current_time + delta > h%ntimes) then
      status = WRF_WARN_TIME_EOF
      return
    end if
    h%current_time = h%current_time + delta
    DateStr = h%times(h%current_time)
    h%current_var = 0
  end subroutine

  !> WRF's dates are 19 characters, "YYYY-MM-DD_hh:mm:ss".
  integer function date_check(DateStr)
    character(len=*), intent(in) :: DateStr
    date_check = WRF_NO_ERR
    if (len_trim(DateStr) /= DATE_STR_LEN) then
      call say('date string "'//trim(DateStr)//'" is not 19 characters long')
      date_check = WRF_WARN_DATESTR_BAD_LENGTH
    end if
  end function
end module ext_tsr_state
