!> Calls the WRF I/O API package the way WRF's output_wrf and input_wrf do:
!> training pass (write_field without data, field attributes), commit,
!> domain metadata, then the fields of several frames from halo'd memory in
!> WRF's memory orders, staggered and not; then reads everything back and
!> checks every value. Every call is spelled ext_tsr_*; the reference file
!> of WRF's own NetCDF package is made from this source with ext_ncd_
!> (make_ncd_reference.sh).
!>
!>   mpiexec -n N wrf_api_driver write|read|both PATH
!>
!> The strategy is TESSERA_HINTS's, as in WRF. Exit 0 when every check holds.
program wrf_api_driver
  use mpi
  use wrf_api_fields
  implicit none
  character(len=16) :: mode
  character(len=1024) :: path
  integer :: ierr, st, world
  call MPI_Init(ierr)
  call get_command_argument(1, mode)
  call get_command_argument(2, path)
  ! as WRF's split_communicator does once installed: Tessera's servers, if
  ! the hints ask for them, leave the job here; the model goes on without them
  world = MPI_COMM_WORLD
  call ext_tsr_server_split(world)
  call setup_grid(world)
  call ext_tsr_ioinit('', st)
  call expect(st, 0, 'ioinit')
  if (mode == 'write' .or. mode == 'both') call write_file(trim(path))
  if (mode == 'read' .or. mode == 'both') call read_file(trim(path))
  if (mode == 'errors') call bad_calls(trim(path))
  call ext_tsr_ioexit(st)
  call expect(st, 0, 'ioexit')
  call finish()
  call MPI_Finalize(ierr)
  if (failures > 0) stop 1

contains

  !> One file of NFRAMES frames, as output_wrf writes a history stream.
  subroutine write_file(path)
    character(len=*), intent(in) :: path
    integer :: h, st, t, v
    call ext_tsr_open_for_write_begin(path, comm, comm, '', h, st)
    call expect(st, 0, 'open_for_write_begin')
    do v = 1, NFIELDS
      call put_field(h, v, 0, .true.)
    end do
    call put_domain_metadata(h)   ! ignored in training, as by WRF's packages
    call ext_tsr_put_var_td_real(h, 'SEED', DATES(1), 'T', [0.0], 1, st)
    call expect(st, 0, 'put_var_td_real in training')
    call ext_tsr_open_for_write_commit(h, st)
    call expect(st, 0, 'open_for_write_commit')
    do t = 1, NFRAMES
      call put_domain_metadata(h)   ! taken before the first field only
      do v = 1, NFIELDS
        call put_field(h, v, t, .false.)
      end do
      call ext_tsr_put_var_td_real(h, 'SEED', DATES(t), 'T', [real(t) + 0.5], 1, st)
      call expect(st, 0, 'put_var_td_real')
    end do
    call ext_tsr_iosync(h, st)
    call expect(st, 0, 'iosync')
    call ext_tsr_ioclose(h, st)
    call expect(st, 0, 'ioclose')
  end subroutine

  !> The calls wrf_ext_write_field makes for one field.
  subroutine put_field(h, v, t, training)
    integer, intent(in) :: h, v, t
    logical, intent(in) :: training
    type(field_t) :: f
    real, allocatable :: r(:, :, :)
    double precision, allocatable :: d(:, :, :)
    integer, allocatable :: i(:, :, :)
    logical, allocatable :: l(:, :, :)
    character(len=19) :: date
    integer :: st
    f = field(v)
    date = DATES(max(t, 1))
    select case (f%wrftype)
    case (WRF_REAL)
      call fill_real(f, t, r)
      call ext_tsr_write_field(h, date, f%name, r, f%wrftype, comm, comm, 0, f%memord, &
                               f%stagger, f%dimnames, f%ds, f%de, f%ms, f%me, f%ps, f%pe, st)
    case (WRF_DOUBLE)
      call fill_double(f, t, d)
      call ext_tsr_write_field(h, date, f%name, d, f%wrftype, comm, comm, 0, f%memord, &
                               f%stagger, f%dimnames, f%ds, f%de, f%ms, f%me, f%ps, f%pe, st)
    case (WRF_INTEGER)
      call fill_int(f, t, i)
      call ext_tsr_write_field(h, date, f%name, i, f%wrftype, comm, comm, 0, f%memord, &
                               f%stagger, f%dimnames, f%ds, f%de, f%ms, f%me, f%ps, f%pe, st)
    case default
      call fill_logical(f, t, l)
      call ext_tsr_write_field(h, date, f%name, l, f%wrftype, comm, comm, 0, f%memord, &
                               f%stagger, f%dimnames, f%ds, f%de, f%ms, f%me, f%ps, f%pe, st)
    end select
    call expect(st, 0, 'write_field '//trim(f%name))
    if (.not. training) return
    call ext_tsr_put_var_ti_char(h, 'description', f%name, f%description, st)
    call expect(st, 0, 'put_var_ti_char description')
    call ext_tsr_put_var_ti_char(h, 'units', f%name, f%units, st)
    call expect(st, 0, 'put_var_ti_char units')
    call ext_tsr_put_var_ti_char(h, 'stagger', f%name, f%stagger, st)
    call expect(st, 0, 'put_var_ti_char stagger')
    if (len_trim(f%coordinates) > 0) then
      call ext_tsr_put_var_ti_char(h, 'coordinates', f%name, f%coordinates, st)
      call expect(st, 0, 'put_var_ti_char coordinates')
    end if
  end subroutine

  !> Global attributes of every type, as output_wrf puts them.
  subroutine put_domain_metadata(h)
    integer, intent(in) :: h
    integer :: st
    call ext_tsr_put_dom_ti_char(h, 'TITLE', ' OUTPUT FROM TESSERA''S WRF API DRIVER', st)
    call expect(st, 0, 'put_dom_ti_char')
    call ext_tsr_put_dom_ti_char(h, 'START_DATE', DATES(1), st)
    call ext_tsr_put_dom_ti_integer(h, 'WEST-EAST_GRID_DIMENSION', [IDE], 1, st)
    call expect(st, 0, 'put_dom_ti_integer')
    call ext_tsr_put_dom_ti_integer(h, 'SOUTH-NORTH_GRID_DIMENSION', [JDE], 1, st)
    call ext_tsr_put_dom_ti_real(h, 'DX', [3000.0], 1, st)
    call expect(st, 0, 'put_dom_ti_real')
    call ext_tsr_put_dom_ti_real(h, 'ETAS', [1.0, 0.75, 0.5, 0.25], 4, st)
    call ext_tsr_put_dom_ti_double(h, 'P_TOP_D', [5000.0d0], 1, st)
    call expect(st, 0, 'put_dom_ti_double')
    call ext_tsr_put_dom_ti_logical(h, 'ADAPTIVE', [.true., .false.], 2, st)
    call expect(st, 0, 'put_dom_ti_logical')
  end subroutine

  !> Everything back through the package, value by value.
  subroutine read_file(path)
    character(len=*), intent(in) :: path
    integer :: h, st, t, v, n, nd, wtype, ival(4), cnt, de(3), ds(3)
    character(len=19) :: date
    character(len=80) :: text, name
    character(len=3) :: mo
    character(len=8) :: stag
    real :: rval(8)
    double precision :: dval(2)
    logical :: lval(2)
    type(field_t) :: f1
    f1 = field(1)
    call ext_tsr_open_for_read_begin(path, comm, comm, '', h, st)
    call expect(st, 0, 'open_for_read_begin')
    call ext_tsr_open_for_read_commit(h, st)
    call expect(st, 0, 'open_for_read_commit')
    do t = 1, NFRAMES
      call ext_tsr_get_next_time(h, date, st)
      call expect(st, 0, 'get_next_time')
      if (date /= DATES(t)) call fail('get_next_time: '//date//' where '//DATES(t))
    end do
    call ext_tsr_get_next_time(h, date, st)
    call expect(st, -4, 'get_next_time past the last time: WRF_WARN_TIME_EOF')
    call ext_tsr_get_dom_ti_char(h, 'TITLE', text, st)
    call expect(st, 0, 'get_dom_ti_char')
    if (text /= ' OUTPUT FROM TESSERA''S WRF API DRIVER') call fail('TITLE read back as '//text)
    call ext_tsr_get_dom_ti_integer(h, 'WEST-EAST_GRID_DIMENSION', ival, 4, cnt, st)
    call expect(st, 0, 'get_dom_ti_integer')
    if (cnt /= 1 .or. ival(1) /= IDE) call fail('WEST-EAST_GRID_DIMENSION read back')
    call ext_tsr_get_dom_ti_real(h, 'ETAS', rval, 8, cnt, st)
    if (cnt /= 4 .or. any(rval(1:4) /= [1.0, 0.75, 0.5, 0.25])) call fail('ETAS read back')
    call ext_tsr_get_dom_ti_real(h, 'ETAS', rval, 2, cnt, st)
    call expect(st, -1023, 'get_dom_ti_real of 4 values into 2: WRF_WARN_MORE_DATA_IN_FILE')
    call ext_tsr_get_dom_ti_double(h, 'DX', dval, 2, cnt, st)
    if (cnt /= 1 .or. dval(1) /= 3000.0d0) call fail('DX read back as a double')
    call ext_tsr_get_dom_ti_logical(h, 'ADAPTIVE', lval, 2, cnt, st)
    if (cnt /= 2 .or. .not. lval(1) .or. lval(2)) call fail('ADAPTIVE read back')
    call ext_tsr_get_dom_ti_integer(h, 'DX', ival, 4, cnt, st)
    call expect(st, -8, 'get_dom_ti_integer of a real attribute: WRF_WARN_TYPE_MISMATCH')
    call ext_tsr_get_var_ti_char(h, 'units', 'U', text, st)
    if (st /= 0 .or. text /= 'm s-1') call fail('units of U read back as '//text)
    call ext_tsr_get_var_info(h, 'U', nd, mo, stag, ds, de, wtype, st)
    call expect(st, 0, 'get_var_info U')
    if (nd /= 3 .or. mo /= 'XYZ' .or. stag /= 'X' .or. any(de /= [IDE, JDE - 1, KDE - 1]) &
        .or. wtype /= WRF_REAL) call fail('get_var_info of U')
    n = 0
    do
      call ext_tsr_get_next_var(h, name, st)
      if (st /= 0) exit
      n = n + 1
    end do
    call expect(st, -6, 'get_next_var past the last: WRF_WARN_VAR_EOF')
    if (n /= NFIELDS) call fail('get_next_var did not list every field once')
    do t = 1, NFRAMES
      do v = 1, NFIELDS
        call check_field(h, v, t)
      end do
      call ext_tsr_get_var_td_real(h, 'SEED', DATES(t), 'T', rval, 1, cnt, st)
      if (st /= 0 .or. cnt /= 1 .or. rval(1) /= real(t) + 0.5) call fail('get_var_td_real')
    end do
    call ext_tsr_read_field(h, DATES(1), 'NOPE', rval, WRF_REAL, comm, comm, 0, 'XY', '', &
                            f1%dimnames, f1%ds, f1%de, f1%ms, f1%me, f1%ps, f1%pe, st)
    call expect(st, -5, 'read_field of a field the file lacks: WRF_WARN_VAR_NF')
    call ext_tsr_ioclose(h, st)
    call expect(st, 0, 'ioclose after reading')
  end subroutine

  !> One field read into memory whose halo holds a sentinel: the patch must
  !> come back exact and the halo untouched.
  subroutine check_field(h, v, t)
    integer, intent(in) :: h, v, t
    type(field_t) :: f
    real, allocatable :: r(:, :, :), re(:, :, :)
    double precision, allocatable :: d(:, :, :), de(:, :, :)
    integer, allocatable :: i(:, :, :), ie(:, :, :)
    logical, allocatable :: l(:, :, :), le(:, :, :)
    integer :: st
    f = field(v)
    select case (f%wrftype)
    case (WRF_REAL)
      call fill_real(f, t, re)
      allocate(r, mold=re)
      r = SENTINEL
      call ext_tsr_read_field(h, DATES(t), f%name, r, f%wrftype, comm, comm, 0, f%memord, &
                              f%stagger, f%dimnames, f%ds, f%de, f%ms, f%me, f%ps, f%pe, st)
      if (any(r /= re)) call fail('values of '//trim(f%name)//' at '//DATES(t))
    case (WRF_DOUBLE)
      call fill_double(f, t, de)
      allocate(d, mold=de)
      d = SENTINEL
      call ext_tsr_read_field(h, DATES(t), f%name, d, f%wrftype, comm, comm, 0, f%memord, &
                              f%stagger, f%dimnames, f%ds, f%de, f%ms, f%me, f%ps, f%pe, st)
      if (any(d /= de)) call fail('values of '//trim(f%name)//' at '//DATES(t))
    case (WRF_INTEGER)
      call fill_int(f, t, ie)
      allocate(i, mold=ie)
      i = int(SENTINEL)
      call ext_tsr_read_field(h, DATES(t), f%name, i, f%wrftype, comm, comm, 0, f%memord, &
                              f%stagger, f%dimnames, f%ds, f%de, f%ms, f%me, f%ps, f%pe, st)
      if (any(i /= ie)) call fail('values of '//trim(f%name)//' at '//DATES(t))
    case default
      call fill_logical(f, t, le)
      allocate(l, mold=le)
      l = .true.
      call ext_tsr_read_field(h, DATES(t), f%name, l, f%wrftype, comm, comm, 0, f%memord, &
                              f%stagger, f%dimnames, f%ds, f%de, f%ms, f%me, f%ps, f%pe, st)
      if (any(l .neqv. le)) call fail('values of '//trim(f%name)//' at '//DATES(t))
    end select
    call expect(st, 0, 'read_field '//trim(f%name))
  end subroutine

  !> Wrong calls get WRF's status codes, the same on every rank.
  subroutine bad_calls(path)
    character(len=*), intent(in) :: path
    integer :: h, st
    real :: r(1)
    type(field_t) :: f1, f5
    f1 = field(1)
    f5 = field(5)
    call ext_tsr_open_for_read_begin(path//'.missing', comm, comm, '', h, st)
    call expect(st, -1, 'open_for_read_begin of a missing file: WRF_WARN_FILE_NF')
    call ext_tsr_open_for_write_begin(path, comm, comm, '', h, st)
    call expect(st, 0, 'open_for_write_begin')
    call ext_tsr_write_field(h, DATES(1), 'BAD', r, WRF_REAL, comm, comm, 0, 'QQ', '', &
                             f1%dimnames, f1%ds, f1%de, f1%ms, f1%me, f1%ps, f1%pe, st)
    call expect(st, -19, 'write_field with memory order QQ: WRF_WARN_BAD_MEMORYORDER')
    call ext_tsr_write_field(h, '2026-11-27', 'BAD', r, WRF_REAL, comm, comm, 0, 'XY', '', &
                             f1%dimnames, f1%ds, f1%de, f1%ms, f1%me, f1%ps, f1%pe, st)
    call expect(st, -1014, 'write_field with a short date: WRF_WARN_DATESTR_BAD_LENGTH')
    call put_field(h, 5, 0, .true.)
    call ext_tsr_open_for_write_commit(h, st)
    call ext_tsr_write_field(h, DATES(1), 'UNTRAINED', r, WRF_REAL, comm, comm, 0, 'XY', '', &
                             f5%dimnames, f5%ds, f5%de, f5%ms, f5%me, f5%ps, f5%pe, st)
    call expect(st, -5, 'write_field of a field not in training: WRF_WARN_VAR_NF')
    call ext_tsr_put_var_ti_char(h, 'units', 'MU', 'Pa', st)
    call expect(st, -1011, 'put_var_ti after the commit: WRF_WARN_MD_AFTER_OPEN')
    call put_field(h, 5, 1, .false.)
    call ext_tsr_ioclose(h, st)
    call expect(st, 0, 'ioclose')
    call ext_tsr_ioclose(h, st)
    call expect(st, -14, 'ioclose of a closed handle: WRF_WARN_BAD_DATA_HANDLE')
  end subroutine
end program
