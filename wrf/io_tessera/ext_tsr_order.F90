!> WRF's MemoryOrder strings: how many dimensions a field has, where each
!> memory dimension goes in the file, and the MemoryOrder attribute the
!> file carries. Same rules as WRF's NetCDF packages, so files match io_form 2.
module ext_tsr_order
  implicit none
  private
  public :: order_lower, order_ndim, order_forder, order_attribute, order_zero_horizontal

contains

  !> Lower-case copy, blank-padded to 3 characters.
  pure function order_lower(memord) result(lc)
    character(len=*), intent(in) :: memord
    character(len=3) :: lc
    integer :: i, c
    lc = adjustl(memord)
    do i = 1, 3
      c = iachar(lc(i:i))
      if (c >= iachar('A') .and. c <= iachar('Z')) lc(i:i) = achar(c + 32)
    end do
  end function

  !> Number of dimensions of a memory order, -1 when WRF does not know it.
  pure integer function order_ndim(memord)
    character(len=*), intent(in) :: memord
    select case (order_lower(memord))
    case ('xyz', 'xzy', 'yxz', 'yzx', 'zxy', 'zyx', 'xsz', 'xez', 'ysz', 'yez')
      order_ndim = 3
    case ('xy', 'yx', 'xs', 'xe', 'ys', 'ye', 'cc')
      order_ndim = 2
    case ('z', 'c')
      order_ndim = 1
    case ('0')
      order_ndim = 0
    case default
      order_ndim = -1
    end select
  end function

  !> forder(m): the file dimension (fastest first) of memory dimension m.
  !> Fields named by x, y, z go to the file as (x, y, z), fastest first;
  !> boundary (s, e) and 1-D fields keep their memory order, as WRF's own
  !> packages store them.
  pure subroutine order_forder(memord, forder)
    character(len=*), intent(in) :: memord
    integer, intent(out) :: forder(3)
    character(len=3) :: lc
    integer :: m, n
    lc = order_lower(memord)
    n = max(order_ndim(memord), 0)
    forder = [1, 2, 3]
    if (scan(lc, 'se') > 0 .or. n < 2) return
    do m = 1, n
      forder(m) = index('xyz', lc(m:m))
    end do
  end subroutine

  !> The MemoryOrder attribute: the file's order in WRF's letters, upper
  !> case, 3 characters ("XYZ", "XY ", "Z  ", "0  ").
  pure function order_attribute(memord) result(att)
    character(len=*), intent(in) :: memord
    character(len=3) :: att, lc
    integer :: i, c
    lc = order_lower(memord)
    select case (lc)
    case ('xzy', 'yxz', 'yzx', 'zxy', 'zyx')
      att = 'xyz'
    case ('yx')
      att = 'xy'
    case default
      att = lc
    end select
    do i = 1, 3
      c = iachar(att(i:i))
      if (c >= iachar('a') .and. c <= iachar('z')) att(i:i) = achar(c - 32)
    end do
  end function

  !> WRF's packages skip a field whose horizontal extent is zero (flen in
  !> file order): nothing is defined or written for it.
  pure logical function order_zero_horizontal(memord, flen)
    character(len=*), intent(in) :: memord
    integer, intent(in) :: flen(3)
    select case (order_lower(memord))
    case ('xyz', 'xzy', 'yxz', 'yzx', 'zxy', 'zyx', 'xy', 'yx')
      order_zero_horizontal = flen(1) < 1 .or. flen(2) < 1
    case default
      order_zero_horizontal = .false.
    end select
  end function
end module ext_tsr_order
