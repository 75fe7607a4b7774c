!> The typed entry points of WRF's metadata API (ext_tsr_{put,get}_{dom,var}_{ti,td}_<type>).
!> Each hands its values to ext_tsr_meta_core; logicals travel as integers
!> 1/0, as WRF's NetCDF packages store them. Domain time-dependent metadata
!> are the time-dependent metadata of WRF's reserved variable name.

subroutine ext_tsr_put_dom_ti_real(DataHandle, Element, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  real(c_float), intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_ti(DataHandle, '', Element, Status, r=Data(1:Count))
end subroutine

subroutine ext_tsr_put_dom_ti_double(DataHandle, Element, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  real(c_double), intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_ti(DataHandle, '', Element, Status, d=Data(1:Count))
end subroutine

subroutine ext_tsr_put_dom_ti_integer(DataHandle, Element, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  integer, intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_ti(DataHandle, '', Element, Status, i=Data(1:Count))
end subroutine

subroutine ext_tsr_put_dom_ti_logical(DataHandle, Element, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  logical, intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  integer :: ints(max(Count, 0))
  ints = merge(1, 0, Data(1:Count))
  call meta_put_ti(DataHandle, '', Element, Status, i=ints)
end subroutine

subroutine ext_tsr_put_dom_ti_char(DataHandle, Element, Data, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  character(len=*), intent(in) :: Data
  integer, intent(out) :: Status
  call meta_put_ti(DataHandle, '', Element, Status, text=Data)
end subroutine

subroutine ext_tsr_get_dom_ti_real(DataHandle, Element, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  real(c_float), intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_ti(DataHandle, '', Element, Count, OutCount, Status, r=Data(1:Count))
end subroutine

subroutine ext_tsr_get_dom_ti_double(DataHandle, Element, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  real(c_double), intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_ti(DataHandle, '', Element, Count, OutCount, Status, d=Data(1:Count))
end subroutine

subroutine ext_tsr_get_dom_ti_integer(DataHandle, Element, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  integer, intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_ti(DataHandle, '', Element, Count, OutCount, Status, i=Data(1:Count))
end subroutine

subroutine ext_tsr_get_dom_ti_logical(DataHandle, Element, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  logical, intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  integer :: ints(max(Count, 0))
  call meta_get_ti(DataHandle, '', Element, Count, OutCount, Status, i=ints)
  Data(1:OutCount) = ints(1:OutCount) /= 0
end subroutine

subroutine ext_tsr_get_dom_ti_char(DataHandle, Element, Data, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element
  character(len=*), intent(out) :: Data
  integer, intent(out) :: Status
  integer :: OutCount
  call meta_get_ti(DataHandle, '', Element, len(Data), OutCount, Status, text=Data)
end subroutine

subroutine ext_tsr_put_var_ti_real(DataHandle, Element, Var, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  real(c_float), intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_ti(DataHandle, Var, Element, Status, r=Data(1:Count))
end subroutine

subroutine ext_tsr_put_var_ti_double(DataHandle, Element, Var, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  real(c_double), intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_ti(DataHandle, Var, Element, Status, d=Data(1:Count))
end subroutine

subroutine ext_tsr_put_var_ti_integer(DataHandle, Element, Var, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  integer, intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_ti(DataHandle, Var, Element, Status, i=Data(1:Count))
end subroutine

subroutine ext_tsr_put_var_ti_logical(DataHandle, Element, Var, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  logical, intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  integer :: ints(max(Count, 0))
  ints = merge(1, 0, Data(1:Count))
  call meta_put_ti(DataHandle, Var, Element, Status, i=ints)
end subroutine

subroutine ext_tsr_put_var_ti_char(DataHandle, Element, Var, Data, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  character(len=*), intent(in) :: Data
  integer, intent(out) :: Status
  call meta_put_ti(DataHandle, Var, Element, Status, text=Data)
end subroutine

subroutine ext_tsr_get_var_ti_real(DataHandle, Element, Var, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  real(c_float), intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_ti(DataHandle, Var, Element, Count, OutCount, Status, r=Data(1:Count))
end subroutine

subroutine ext_tsr_get_var_ti_double(DataHandle, Element, Var, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  real(c_double), intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_ti(DataHandle, Var, Element, Count, OutCount, Status, d=Data(1:Count))
end subroutine

subroutine ext_tsr_get_var_ti_integer(DataHandle, Element, Var, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  integer, intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_ti(DataHandle, Var, Element, Count, OutCount, Status, i=Data(1:Count))
end subroutine

subroutine ext_tsr_get_var_ti_logical(DataHandle, Element, Var, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  logical, intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  integer :: ints(max(Count, 0))
  call meta_get_ti(DataHandle, Var, Element, Count, OutCount, Status, i=ints)
  Data(1:OutCount) = ints(1:OutCount) /= 0
end subroutine

subroutine ext_tsr_get_var_ti_char(DataHandle, Element, Var, Data, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, Var
  character(len=*), intent(out) :: Data
  integer, intent(out) :: Status
  integer :: OutCount
  call meta_get_ti(DataHandle, Var, Element, len(Data), OutCount, Status, text=Data)
end subroutine

subroutine ext_tsr_put_dom_td_real(DataHandle, Element, DateStr, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  real(c_float), intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, Status, r=Data(1:Count))
end subroutine

subroutine ext_tsr_put_dom_td_double(DataHandle, Element, DateStr, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  real(c_double), intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, Status, d=Data(1:Count))
end subroutine

subroutine ext_tsr_put_dom_td_integer(DataHandle, Element, DateStr, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  integer, intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, Status, i=Data(1:Count))
end subroutine

subroutine ext_tsr_put_dom_td_logical(DataHandle, Element, DateStr, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  logical, intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  integer :: ints(max(Count, 0))
  ints = merge(1, 0, Data(1:Count))
  call meta_put_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, Status, i=ints)
end subroutine

subroutine ext_tsr_put_dom_td_char(DataHandle, Element, DateStr, Data, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  character(len=*), intent(in) :: Data
  integer, intent(out) :: Status
  call meta_put_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, Status, text=Data)
end subroutine

subroutine ext_tsr_get_dom_td_real(DataHandle, Element, DateStr, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  real(c_float), intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, Count, OutCount, Status, r=Data(1:Count))
end subroutine

subroutine ext_tsr_get_dom_td_double(DataHandle, Element, DateStr, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  real(c_double), intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, Count, OutCount, Status, d=Data(1:Count))
end subroutine

subroutine ext_tsr_get_dom_td_integer(DataHandle, Element, DateStr, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  integer, intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, Count, OutCount, Status, i=Data(1:Count))
end subroutine

subroutine ext_tsr_get_dom_td_logical(DataHandle, Element, DateStr, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  logical, intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  integer :: ints(max(Count, 0))
  call meta_get_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, Count, OutCount, Status, i=ints)
  Data(1:OutCount) = ints(1:OutCount) /= 0
end subroutine

subroutine ext_tsr_get_dom_td_char(DataHandle, Element, DateStr, Data, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr
  character(len=*), intent(out) :: Data
  integer, intent(out) :: Status
  integer :: OutCount
  call meta_get_td(DataHandle, DOMAIN_TD_VAR, Element, DateStr, len(Data), OutCount, Status, text=Data)
end subroutine

subroutine ext_tsr_put_var_td_real(DataHandle, Element, DateStr, Var, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  real(c_float), intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_td(DataHandle, Var, Element, DateStr, Status, r=Data(1:Count))
end subroutine

subroutine ext_tsr_put_var_td_double(DataHandle, Element, DateStr, Var, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  real(c_double), intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_td(DataHandle, Var, Element, DateStr, Status, d=Data(1:Count))
end subroutine

subroutine ext_tsr_put_var_td_integer(DataHandle, Element, DateStr, Var, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  integer, intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  call meta_put_td(DataHandle, Var, Element, DateStr, Status, i=Data(1:Count))
end subroutine

subroutine ext_tsr_put_var_td_logical(DataHandle, Element, DateStr, Var, Data, Count, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  logical, intent(in) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: Status
  integer :: ints(max(Count, 0))
  ints = merge(1, 0, Data(1:Count))
  call meta_put_td(DataHandle, Var, Element, DateStr, Status, i=ints)
end subroutine

subroutine ext_tsr_put_var_td_char(DataHandle, Element, DateStr, Var, Data, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  character(len=*), intent(in) :: Data
  integer, intent(out) :: Status
  call meta_put_td(DataHandle, Var, Element, DateStr, Status, text=Data)
end subroutine

subroutine ext_tsr_get_var_td_real(DataHandle, Element, DateStr, Var, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  real(c_float), intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_td(DataHandle, Var, Element, DateStr, Count, OutCount, Status, r=Data(1:Count))
end subroutine

subroutine ext_tsr_get_var_td_double(DataHandle, Element, DateStr, Var, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  real(c_double), intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_td(DataHandle, Var, Element, DateStr, Count, OutCount, Status, d=Data(1:Count))
end subroutine

subroutine ext_tsr_get_var_td_integer(DataHandle, Element, DateStr, Var, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  integer, intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  call meta_get_td(DataHandle, Var, Element, DateStr, Count, OutCount, Status, i=Data(1:Count))
end subroutine

subroutine ext_tsr_get_var_td_logical(DataHandle, Element, DateStr, Var, Data, Count, OutCount, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  logical, intent(out) :: Data(*)
  integer, intent(in) :: Count
  integer, intent(out) :: OutCount
  integer, intent(out) :: Status
  integer :: ints(max(Count, 0))
  call meta_get_td(DataHandle, Var, Element, DateStr, Count, OutCount, Status, i=ints)
  Data(1:OutCount) = ints(1:OutCount) /= 0
end subroutine

subroutine ext_tsr_get_var_td_char(DataHandle, Element, DateStr, Var, Data, Status)
  use, intrinsic :: iso_c_binding
  use ext_tsr_meta_core
  implicit none
  integer, intent(in) :: DataHandle
  character(len=*), intent(in) :: Element, DateStr, Var
  character(len=*), intent(out) :: Data
  integer, intent(out) :: Status
  integer :: OutCount
  call meta_get_td(DataHandle, Var, Element, DateStr, len(Data), OutCount, Status, text=Data)
end subroutine
