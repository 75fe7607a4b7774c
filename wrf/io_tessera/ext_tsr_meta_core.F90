!> Metadata of WRF's I/O API over Tessera: time-independent metadata are
!> attributes (global for the domain, of the variable for a field);
!> time-dependent metadata are variables md___<element><var>(Time, DIMnnnn),
!> named and shaped as WRF's NetCDF packages name and shape them.
module ext_tsr_meta_core
  use, intrinsic :: iso_c_binding
  use tessera
  use ext_tsr_codes
  use ext_tsr_state
  use ext_tsr_field_support, only: define_dimension
  implicit none
  private
  public :: meta_put_ti, meta_get_ti, meta_put_td, meta_get_td, DOMAIN_TD_VAR

  !> The variable name WRF's packages give time-dependent domain metadata.
  character(len=*), parameter :: DOMAIN_TD_VAR = 'E_X_T_D_O_M_A_I_N_M_E_T_A_DATA_'

contains

  !> Put an attribute: Var '' for a domain (global) one. As WRF's NetCDF
  !> packages do, domain metadata are taken after the commit and before the
  !> first field, field metadata in the training pass.
  subroutine meta_put_ti(DataHandle, Var, Element, status, text, r, d, i)
    integer, intent(in) :: DataHandle
    character(len=*), intent(in) :: Var, Element
    integer, intent(out) :: status
    character(len=*), intent(in), optional :: text
    real(c_float), intent(in), optional :: r(:)
    real(c_double), intent(in), optional :: d(:)
    integer, intent(in), optional :: i(:)
    type(handle_t), pointer :: h
    integer :: varid, iv, rc
    call get_handle(DataHandle, h, status)
    if (status /= WRF_NO_ERR) return
    if (h%state == WRF_FILE_OPENED_FOR_READ) then
      status = WRF_WARN_WRITE_RONLY_FILE
      return
    end if
    if (len_trim(Var) == 0) then
      ! WRF puts domain metadata in both passes; the header takes them once
      if (h%state /= WRF_FILE_OPENED_FOR_WRITE .or. .not. h%defining) return
      varid = TSR_GLOBAL
    else
      if (h%state /= WRF_FILE_OPENED_NOT_COMMITTED) then
        status = WRF_WARN_MD_AFTER_OPEN
        return
      end if
      iv = find_var(h, Var)
      if (iv == 0) then
        status = WRF_WARN_VAR_NF
        return
      end if
      varid = h%vars(iv)%varid
    end if
    if (present(text)) then
      if (len_trim(Var) == 0) then
        rc = tsr_put_att(h%f, varid, trim(Element), trim(text))
      else if (len_trim(text) == 0) then
        rc = tsr_put_att(h%f, varid, trim(Element), char(0)) ! WRF's empty field attribute
      else
        rc = tsr_put_att(h%f, varid, trim(Element), trim(text))
      end if
    else if (present(r)) then
      rc = tsr_put_att(h%f, varid, trim(Element), r)
    else if (present(d)) then
      rc = tsr_put_att(h%f, varid, trim(Element), d)
    else
      rc = tsr_put_att(h%f, varid, trim(Element), i)
    end if
    if (rc /= TSR_OK) status = tessera_failed(rc, 'attribute '//trim(Element)//' of '// &
                                              trim(h%path), h%f)
  end subroutine

  !> Get an attribute (Var '' for a domain one) as the caller's type: float
  !> and double convert into each other, integers must be integers.
  subroutine meta_get_ti(DataHandle, Var, Element, Count, OutCount, status, text, r, d, i)
    integer, intent(in) :: DataHandle, Count
    character(len=*), intent(in) :: Var, Element
    integer, intent(out) :: OutCount, status
    character(len=*), intent(out), optional :: text
    real(c_float), intent(out), optional :: r(:)
    real(c_double), intent(out), optional :: d(:)
    integer, intent(out), optional :: i(:)
    type(handle_t), pointer :: h
    integer :: varid, iv, rc, xtype, n
    real(c_float), allocatable :: fv(:)
    real(c_double), allocatable :: dv(:)
    integer, allocatable :: iv_(:)
    OutCount = 0
    call reading_handle(DataHandle, h, status)
    if (status /= WRF_NO_ERR) return
    varid = TSR_GLOBAL
    if (len_trim(Var) > 0) then
      iv = find_var(h, Var)
      if (iv == 0) then
        status = WRF_WARN_VAR_NF
        return
      end if
      varid = h%vars(iv)%varid
    end if
    rc = tsr_inq_att(h%f, varid, trim(Element), xtype, n)
    if (rc /= TSR_OK) then
      status = WRF_WARN_MD_NF
      return
    end if
    if (n < 1) then
      if (present(text)) text = ''
      status = WRF_WARN_LENGTH_LESS_THAN_1
      return
    end if
    if (present(text)) then
      if (xtype /= TSR_CHAR) then
        status = WRF_WARN_TYPE_MISMATCH
      else if (n > len(text)) then
        status = WRF_WARN_CHARSTR_GT_LENDATA
      else
        rc = tsr_get_att(h%f, varid, trim(Element), text)
        if (len(text) > 0) then
          if (text(1:1) == char(0)) text = ''
        end if
      end if
      return
    end if
    if (present(i) .neqv. xtype == TSR_INT) then
      status = WRF_WARN_TYPE_MISMATCH
      return
    end if
    if (.not. present(i) .and. xtype /= TSR_FLOAT .and. xtype /= TSR_DOUBLE) then
      status = WRF_WARN_TYPE_MISMATCH
      return
    end if
    OutCount = min(n, Count)
    select case (xtype)
    case (TSR_INT)
      allocate(iv_(n))
      rc = tsr_get_att(h%f, varid, trim(Element), iv_)
      i(1:OutCount) = iv_(1:OutCount)
    case (TSR_FLOAT)
      allocate(fv(n))
      rc = tsr_get_att(h%f, varid, trim(Element), fv)
      if (present(r)) r(1:OutCount) = fv(1:OutCount)
      if (present(d)) d(1:OutCount) = fv(1:OutCount)
    case default
      allocate(dv(n))
      rc = tsr_get_att(h%f, varid, trim(Element), dv)
      if (present(r)) r(1:OutCount) = real(dv(1:OutCount), c_float)
      if (present(d)) d(1:OutCount) = dv(1:OutCount)
    end select
    if (n > Count) status = WRF_WARN_MORE_DATA_IN_FILE
  end subroutine

  !> WRF's name of a time-dependent metadatum: md___<element><var>, lower
  !> case, '-' and ':' made '_'.
  function md_name(Element, Var) result(name)
    character(len=*), intent(in) :: Element, Var
    character(len=NAME_LEN) :: name
    integer :: k, c
    name = 'MD___'//trim(Element)//trim(Var)
    do k = 1, len_trim(name)
      c = iachar(name(k:k))
      if (c >= iachar('A') .and. c <= iachar('Z')) name(k:k) = achar(c + 32)
      if (name(k:k) == '-' .or. name(k:k) == ':') name(k:k) = '_'
    end do
  end function

  !> Put a time-dependent metadatum: defined in the training pass (one
  !> DIMnnnn of its length, and Time), written at DateStr's record after.
  subroutine meta_put_td(DataHandle, Var, Element, DateStr, status, text, r, d, i)
    integer, intent(in) :: DataHandle
    character(len=*), intent(in) :: Var, Element, DateStr
    integer, intent(out) :: status
    character(len=*), intent(in), optional, target :: text
    real(c_float), intent(in), optional :: r(:)
    real(c_double), intent(in), optional :: d(:)
    integer, intent(in), optional :: i(:)
    type(handle_t), pointer :: h
    character(len=NAME_LEN) :: name
    integer :: n, xtype, iv, dimid, rc, frame, k
    character(kind=c_char), allocatable, target :: tbuf(:)
    real(c_float), allocatable, target :: fbuf(:)
    real(c_double), allocatable, target :: dbuf(:)
    integer, allocatable, target :: ibuf(:)
    type(var_t) :: v
    call get_handle(DataHandle, h, status)
    if (status /= WRF_NO_ERR) return
    name = md_name(Element, Var)
    if (present(text)) then
      n = len(text)
      xtype = TSR_CHAR
    else if (present(r)) then
      n = size(r)
      xtype = TSR_FLOAT
    else if (present(d)) then
      n = size(d)
      xtype = TSR_DOUBLE
    else
      n = size(i)
      xtype = TSR_INT
    end if
    select case (h%state)
    case (WRF_FILE_OPENED_NOT_COMMITTED)
      if (n < 1) then
        status = WRF_WARN_ZERO_LENGTH_PUT
        return
      end if
      if (find_var(h, name) > 0) then
        status = WRF_WARN_2DRYRUNS_1VARIABLE
        return
      end if
      dimid = define_dimension(h, '', n, status)
      if (status /= WRF_NO_ERR) return
      v%name = name
      v%ndim = 1
      v%flen(1) = n
      v%xtype = xtype
      v%meta = .true.
      v%replicated = .true.
      rc = tsr_def_var(h%f, trim(name), xtype, [dimid, h%time_dimid], v%varid)
      if (rc /= TSR_OK) then
        status = tessera_failed(rc, 'defining '//trim(name)//' in '//trim(h%path), h%f)
        return
      end if
      call grow_vars(h)
      h%nvars = h%nvars + 1
      h%vars(h%nvars) = v
    case (WRF_FILE_OPENED_FOR_WRITE)
      iv = find_var(h, name)
      if (iv == 0) then
        status = WRF_WARN_MD_NF
        return
      end if
      if (n > h%vars(iv)%flen(1)) then
        status = WRF_WARN_COUNT_TOO_LONG
        return
      else if (n < 1) then
        status = WRF_WARN_ZERO_LENGTH_PUT
        return
      end if
      status = end_define(h)
      if (status /= WRF_NO_ERR) return
      frame = write_frame(h, DateStr, status)
      if (status /= WRF_NO_ERR) return
      ! the whole record, padded as the fill of an unwritten tail would be
      n = h%vars(iv)%flen(1)
      select case (xtype)
      case (TSR_CHAR)
        allocate(tbuf(n))
        tbuf = c_null_char
        do k = 1, len(text)
          tbuf(k) = text(k:k)
        end do
        rc = tsr_put_global_ptr(h%f, h%vars(iv)%varid, frame, c_loc(tbuf))
      case (TSR_FLOAT)
        allocate(fbuf(n))
        fbuf = 0
        fbuf(1:size(r)) = r
        rc = tsr_put_global_ptr(h%f, h%vars(iv)%varid, frame, c_loc(fbuf))
      case (TSR_DOUBLE)
        allocate(dbuf(n))
        dbuf = 0
        dbuf(1:size(d)) = d
        rc = tsr_put_global_ptr(h%f, h%vars(iv)%varid, frame, c_loc(dbuf))
      case default
        allocate(ibuf(n))
        ibuf = 0
        ibuf(1:size(i)) = i
        rc = tsr_put_global_ptr(h%f, h%vars(iv)%varid, frame, c_loc(ibuf))
      end select
      if (rc /= TSR_OK) status = tessera_failed(rc, 'writing '//trim(name)//' to '// &
                                                trim(h%path), h%f)
    case default
      status = WRF_WARN_WRITE_RONLY_FILE
    end select
  end subroutine

  !> Get a time-dependent metadatum at DateStr (collective: every rank reads).
  subroutine meta_get_td(DataHandle, Var, Element, DateStr, Count, OutCount, status, text, r, &
                         d, i)
    integer, intent(in) :: DataHandle, Count
    character(len=*), intent(in) :: Var, Element, DateStr
    integer, intent(out) :: OutCount, status
    character(len=*), intent(out), optional :: text
    real(c_float), intent(out), optional :: r(:)
    real(c_double), intent(out), optional :: d(:)
    integer, intent(out), optional :: i(:)
    type(handle_t), pointer :: h
    integer :: iv, frame, n, rc, k, want
    character(kind=c_char), allocatable, target :: tbuf(:)
    real(c_float), allocatable, target :: fbuf(:)
    real(c_double), allocatable, target :: dbuf(:)
    integer, allocatable, target :: ibuf(:)
    type(tsr_decomp_t) :: whole
    OutCount = 0
    call reading_handle(DataHandle, h, status)
    if (status /= WRF_NO_ERR) return
    iv = find_var(h, md_name(Element, Var))
    if (iv == 0) then
      status = WRF_WARN_MD_NF
      return
    end if
    frame = read_frame(h, DateStr)
    if (frame == 0) then
      status = WRF_WARN_TIME_NF
      return
    end if
    want = TSR_INT
    if (present(text)) want = TSR_CHAR
    if (present(r) .or. present(d)) want = TSR_DOUBLE
    if ((want == TSR_DOUBLE .and. h%vars(iv)%xtype /= TSR_FLOAT .and. &
         h%vars(iv)%xtype /= TSR_DOUBLE) .or. &
        (want /= TSR_DOUBLE .and. h%vars(iv)%xtype /= want)) then
      status = WRF_WARN_TYPE_MISMATCH
      return
    end if
    n = h%vars(iv)%flen(1)
    OutCount = min(n, Count)
    select case (h%vars(iv)%xtype)
    case (TSR_CHAR)
      allocate(tbuf(n))
      rc = tsr_get_ptr(h%f, h%vars(iv)%varid, frame, whole, c_loc(tbuf))
      text = ''
      do k = 1, min(n, len(text))
        if (tbuf(k) /= c_null_char) text(k:k) = tbuf(k)
      end do
      OutCount = min(n, len(text))
    case (TSR_FLOAT)
      allocate(fbuf(n))
      rc = tsr_get_ptr(h%f, h%vars(iv)%varid, frame, whole, c_loc(fbuf))
      if (present(r)) r(1:OutCount) = fbuf(1:OutCount)
      if (present(d)) d(1:OutCount) = fbuf(1:OutCount)
    case (TSR_DOUBLE)
      allocate(dbuf(n))
      rc = tsr_get_ptr(h%f, h%vars(iv)%varid, frame, whole, c_loc(dbuf))
      if (present(r)) r(1:OutCount) = real(dbuf(1:OutCount), c_float)
      if (present(d)) d(1:OutCount) = dbuf(1:OutCount)
    case default
      allocate(ibuf(n))
      rc = tsr_get_ptr(h%f, h%vars(iv)%varid, frame, whole, c_loc(ibuf))
      i(1:OutCount) = ibuf(1:OutCount)
    end select
    if (rc /= TSR_OK) status = tessera_failed(rc, 'reading '//trim(md_name(Element, Var)), h%f)
  end subroutine
end module ext_tsr_meta_core
