!> What a reader asks of an open file: its times in order, its variables
!> in order, a variable's shape and type; and the texts of status codes.
!> None of these is collective (every rank holds the same catalogue), so
!> WRF may call them on its monitor rank alone.

!> The next (previous) time of the file, as WRF's readers walk it.
subroutine ext_tsr_get_next_time(DataHandle, DateStr, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(out) :: DateStr
  integer, intent(out) :: Status
  call step_time(DataHandle, 1, DateStr, Status)
end subroutine

subroutine ext_tsr_get_previous_time(DataHandle, DateStr, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(out) :: DateStr
  integer, intent(out) :: Status
  call step_time(DataHandle, -1, DateStr, Status)
end subroutine

!> Position the reader at DateStr (the next get_next_var starts over).
subroutine ext_tsr_set_time(DataHandle, DateStr, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: DateStr
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  integer :: t
  call reading_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  t = read_frame(h, DateStr)
  if (t == 0) then
    Status = WRF_WARN_TIME_NF
    return
  end if
  h%current_time = t
  h%current_var = 0
end subroutine

!> The next field of the file (Times and time-dependent metadata left out).
subroutine ext_tsr_get_next_var(DataHandle, VarName, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(out) :: VarName
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  VarName = ''
  call reading_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  do
    h%current_var = h%current_var + 1
    if (h%current_var > h%nvars) then
      Status = WRF_WARN_VAR_EOF
      return
    end if
    if (.not. h%vars(h%current_var)%meta) exit
  end do
  VarName = h%vars(h%current_var)%name
end subroutine

subroutine ext_tsr_end_of_frame(DataHandle, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: DataHandle
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  call get_handle(DataHandle, h, Status)
end subroutine

!> A field's memory order, stagger, domain extent (file order) and WRF type,
!> from the attributes WRF's packages write.
subroutine ext_tsr_get_var_info(DataHandle, Name, NDim, MemoryOrder, Stagger, DomainStart, &
                                DomainEnd, WrfType, Status)
  use ext_tsr_state
  use ext_tsr_order
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Name
  integer, intent(out) :: NDim
  character(len=*), intent(out) :: MemoryOrder
  character(len=*) :: Stagger
  integer, intent(out) :: DomainStart(*), DomainEnd(*)
  integer, intent(out) :: WrfType, Status
  type(handle_t), pointer :: h
  integer :: iv, rc, j
  character(len=8) :: mo
  NDim = 0
  MemoryOrder = ''
  WrfType = 0
  call reading_handle(DataHandle, h, Status)
  if (Status /= WRF_NO_ERR) return
  iv = find_var(h, Name)
  if (iv == 0) then
    Status = WRF_WARN_VAR_NF
    return
  end if
  mo = ''
  rc = tsr_get_att(h%f, h%vars(iv)%varid, 'MemoryOrder', mo)
  if (rc /= TSR_OK) then
    Status = WRF_WARN_MD_NF
    return
  end if
  MemoryOrder = mo
  Stagger = ''
  rc = tsr_get_att(h%f, h%vars(iv)%varid, 'stagger', Stagger)
  if (len_trim(Stagger) > 0) then
    if (Stagger(1:1) == char(0)) Stagger = ''
  end if
  rc = tsr_get_att(h%f, h%vars(iv)%varid, 'FieldType', WrfType)
  NDim = order_ndim(mo)
  if (NDim < 0) then
    Status = WRF_WARN_BAD_MEMORYORDER
    NDim = 0
    return
  end if
  do j = 1, NDim
    DomainStart(j) = 1
    DomainEnd(j) = h%vars(iv)%flen(j)
  end do
end subroutine

!> The text of a status code (ext_tsr's own, WRF_WARN_TESSERA, gives
!> Tessera's last message).
subroutine ext_tsr_error_str(Code, ReturnString, Status)
  use ext_tsr_state
  implicit none
  integer, intent(in) :: Code
  character(len=*), intent(out) :: ReturnString
  integer, intent(out) :: Status
  select case (Code)
  case (WRF_NO_ERR)
    ReturnString = 'No error'
  case (WRF_WARN_TESSERA)
    ReturnString = 'Tessera: '//trim(last_message)
  case (WRF_WARN_FILE_NF)
    ReturnString = 'File not found (or incomplete)'
  case (WRF_WARN_MD_NF)
    ReturnString = 'Metadata not found'
  case (WRF_WARN_TIME_NF)
    ReturnString = 'Timestamp not found'
  case (WRF_WARN_TIME_EOF)
    ReturnString = 'No more timestamps'
  case (WRF_WARN_VAR_NF)
    ReturnString = 'Variable not found'
  case (WRF_WARN_VAR_EOF)
    ReturnString = 'No more variables for the current time'
  case (WRF_WARN_NOTSUPPORTED)
    ReturnString = 'Not supported by Tessera: '//trim(last_message)
  case (WRF_IO_NOT_INITIALIZED)
    ReturnString = 'ext_tsr_ioinit was not called'
  case (WRF_WARN_BAD_DATA_HANDLE)
    ReturnString = 'Bad data handle'
  case (WRF_WARN_BAD_MEMORYORDER)
    ReturnString = 'MemoryOrder not recognised'
  case default
    ReturnString = trim(last_message)
  end select
  Status = WRF_NO_ERR
end subroutine

subroutine ext_tsr_warning_str(Code, ReturnString, Status)
  implicit none
  integer, intent(in) :: Code
  character(len=*), intent(out) :: ReturnString
  integer, intent(out) :: Status
  call ext_tsr_error_str(Code, ReturnString, Status)
end subroutine
