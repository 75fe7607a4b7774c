!> The driver's WRF-like domain: a process grid as WRF's, patches with
!> 3-point halos, staggered and unstaggered fields in WRF's memory orders,
!> and the exact value every point holds at every frame.
module wrf_api_fields
  use mpi
  implicit none
  public

  integer, parameter :: WRF_REAL = 104, WRF_DOUBLE = 105, WRF_INTEGER = 106, WRF_LOGICAL = 107
  !> e_we, e_sn, e_vert: staggered ends, as WRF's ide, jde, kde.
  integer, parameter :: IDE = 13, JDE = 10, KDE = 5, NSOIL = 4, NEXTRA = 7, HALO = 3, NBDY = 5
  integer, parameter :: NFIELDS = 15, NFRAMES = 3
  real, parameter :: SENTINEL = -999.0
  character(len=19), parameter :: DATES(NFRAMES) = [character(len=19) :: &
    '2026-11-27_00:00:00', '2026-11-27_00:10:00', '2026-11-27_00:20:00']

  type field_t
    character(len=16) :: name = '', memord = '', stagger = ''
    character(len=80) :: description = '', units = '', coordinates = ''
    character(len=32) :: dimnames(3) = ''
    character(len=3) :: letters = ''   ! per memory dimension: x y z X Y Z s u
    integer :: wrftype = WRF_REAL, v = 0
    integer :: ds(3) = 1, de(3) = 1, ms(3) = 1, me(3) = 1, ps(3) = 1, pe(3) = 1
  end type

  integer :: comm, rank, nranks, failures = 0
  integer :: ips, ipe, jps, jpe
  logical :: first_x, last_x, last_y

contains

  !> WRF's process grid: px x py ranks, each a patch of the mass points.
  subroutine setup_grid(world)
    integer, intent(in) :: world
    integer :: ierr, px, py, cx, cy
    comm = world
    call MPI_Comm_rank(comm, rank, ierr)
    call MPI_Comm_size(comm, nranks, ierr)
    px = int(sqrt(real(nranks)))
    do while (mod(nranks, px) /= 0)
      px = px - 1
    end do
    py = nranks / px
    cx = mod(rank, px)
    cy = rank / px
    ips = 1 + (IDE - 1) * cx / px
    ipe = (IDE - 1) * (cx + 1) / px
    jps = 1 + (JDE - 1) * cy / py
    jpe = (JDE - 1) * (cy + 1) / py
    first_x = cx == 0
    last_x = cx == px - 1
    last_y = cy == py - 1
  end subroutine

  !> Field v: name, memory order, dimensions, attributes and this rank's bounds.
  type(field_t) function field(v) result(f)
    integer, intent(in) :: v
    character(len=*), parameter :: XYT = 'XLONG XLAT XTIME'
    integer :: m
    select case (v)
    case (1)
      f = def('U', 'XZY', 'X', 'Xzy', 'x-wind component', 'm s-1', 'XLONG_U XLAT_U XTIME')
    case (2)
      f = def('V', 'XZY', 'Y', 'xzY', 'y-wind component', 'm s-1', 'XLONG_V XLAT_V XTIME')
    case (3)
      f = def('PH', 'XZY', 'Z', 'xZy', 'perturbation geopotential', 'm2 s-2', XYT)
    case (4)
      f = def('T', 'XZY', '', 'xzy', 'perturbation potential temperature', 'K', XYT)
    case (5)
      f = def('MU', 'XY', '', 'xy', 'perturbation dry air mass in column', 'Pa', XYT)
    case (6)
      f = def('XLAT', 'XY', '', 'xy', 'LATITUDE, SOUTH IS NEGATIVE', 'degree_north', 'XLONG XLAT')
    case (7)
      f = def('ZNU', 'Z', '', 'z', 'eta values on half (mass) levels', '', '')
    case (8)
      f = def('XTIME', '0', '', '', 'minutes since 2026-11-27 00:00:00', 'minutes', '')
    case (9)
      f = def('ISLTYP', 'XY', '', 'xy', 'DOMINANT SOIL CATEGORY', '', XYT)
      f%wrftype = WRF_INTEGER
    case (10)
      f = def('TSLB', 'XZY', 'Z', 'xsy', 'SOIL TEMPERATURE', 'K', XYT)
    case (11)
      f = def('DDATA', 'XY', '', 'xy', 'a double field', '1', XYT)
      f%wrftype = WRF_DOUBLE
    case (12)
      f = def('EXTRA', 'Z', '', 'u', 'a field with an unnamed dimension', '', '')
    case (13)
      f = def('LMASK', 'XY', '', 'xy', 'a logical field', '', XYT)
      f%wrftype = WRF_LOGICAL
    case (14)
      f = def('QXYZ', 'XYZ', '', 'xyz', 'a field held as a(i,j,k)', 'kg kg-1', XYT)
    case default
      ! a boundary field of the west edge, as wrfbdy holds: (j, k, width)
      f = def('U_BXS', 'XSZ', 'X', 'yzb', 'bdy x-wind component', 'm s-1', '')
    end select
    f%v = v
    do m = 1, len_trim(f%letters)
      call bounds(f%letters(m:m), f%ds(m), f%de(m), f%ps(m), f%pe(m), f%ms(m), f%me(m), &
                  f%dimnames(m))
    end do
    ! only the ranks on the west edge hold the west boundary (WRF passes the
    ! others an empty patch, ends before starts)
    if (f%memord == 'XSZ' .and. .not. first_x) f%pe = f%ps - 1
  end function

  type(field_t) function def(name, memord, stagger, letters, description, units, coords) result(f)
    character(len=*), intent(in) :: name, memord, stagger, letters, description, units, coords
    f%name = name
    f%memord = memord
    f%stagger = stagger
    f%letters = letters
    f%description = description
    f%units = units
    f%coordinates = coords
  end function

  !> Domain, patch and memory bounds of one dimension, and its name.
  subroutine bounds(letter, ds, de, ps, pe, ms, me, name)
    character(len=1), intent(in) :: letter
    integer, intent(out) :: ds, de, ps, pe, ms, me
    character(len=*), intent(out) :: name
    ds = 1
    select case (letter)
    case ('x', 'X')
      de = merge(IDE, IDE - 1, letter == 'X')
      ps = ips
      pe = merge(IDE, ipe, letter == 'X' .and. last_x)
      ms = ips - HALO
      me = ipe + HALO
      name = merge('west_east_stag', 'west_east     ', letter == 'X')
    case ('y', 'Y')
      de = merge(JDE, JDE - 1, letter == 'Y')
      ps = jps
      pe = merge(JDE, jpe, letter == 'Y' .and. last_y)
      ms = jps - HALO
      me = jpe + HALO
      name = merge('south_north_stag', 'south_north     ', letter == 'Y')
    case ('z', 'Z')
      de = merge(KDE, KDE - 1, letter == 'Z')
      ps = 1
      pe = de
      ms = 1
      me = KDE
      name = merge('bottom_top_stag', 'bottom_top     ', letter == 'Z')
    case ('b')
      de = NBDY
      ps = 1
      pe = NBDY
      ms = 1
      me = NBDY
      name = 'bdy_width'
    case ('s')
      de = NSOIL
      ps = 1
      pe = NSOIL
      ms = 1
      me = NSOIL
      name = 'soil_layers_stag'
    case default
      de = NEXTRA
      ps = 1
      pe = NEXTRA
      ms = 1
      me = NEXTRA
      name = ''
    end select
  end subroutine

  !> The exact value of field v at frame t at global point (i, j, k).
  integer function value_at(f, t, idx)
    type(field_t), intent(in) :: f
    integer, intent(in) :: t, idx(3)
    integer :: m, g(3)
    g = 0   ! (i, j, k)
    do m = 1, len_trim(f%letters)
      select case (f%letters(m:m))
      case ('x', 'X', 'b')
        g(1) = idx(m)
      case ('y', 'Y')
        g(2) = idx(m)
      case default
        g(3) = idx(m)
      end select
    end do
    value_at = int(mod(int(g(1), 8) + 7_8 * g(2) + 131_8 * g(3) + 8191_8 * t + 524287_8 * f%v, &
                       16777216_8))
  end function

  logical function in_patch(f, idx)
    type(field_t), intent(in) :: f
    integer, intent(in) :: idx(3)
    in_patch = all(idx >= f%ps .and. idx <= f%pe)
  end function

  subroutine fill_real(f, t, a)
    type(field_t), intent(in) :: f
    integer, intent(in) :: t
    real, allocatable, intent(out) :: a(:, :, :)
    integer :: i, j, k
    allocate(a(f%ms(1):f%me(1), f%ms(2):f%me(2), f%ms(3):f%me(3)))
    a = SENTINEL
    do k = f%ms(3), f%me(3)
      do j = f%ms(2), f%me(2)
        do i = f%ms(1), f%me(1)
          if (in_patch(f, [i, j, k])) a(i, j, k) = real(value_at(f, t, [i, j, k]))
        end do
      end do
    end do
  end subroutine

  subroutine fill_double(f, t, a)
    type(field_t), intent(in) :: f
    integer, intent(in) :: t
    double precision, allocatable, intent(out) :: a(:, :, :)
    real, allocatable :: r(:, :, :)
    call fill_real(f, t, r)
    a = dble(r) + merge(0.25d0, 0.0d0, r /= SENTINEL)  ! a value no float holds
  end subroutine

  subroutine fill_int(f, t, a)
    type(field_t), intent(in) :: f
    integer, intent(in) :: t
    integer, allocatable, intent(out) :: a(:, :, :)
    real, allocatable :: r(:, :, :)
    call fill_real(f, t, r)
    a = int(r)
  end subroutine

  subroutine fill_logical(f, t, a)
    type(field_t), intent(in) :: f
    integer, intent(in) :: t
    logical, allocatable, intent(out) :: a(:, :, :)
    real, allocatable :: r(:, :, :)
    call fill_real(f, t, r)
    a = mod(int(r), 2) == 0 .or. r == SENTINEL
  end subroutine

  subroutine expect(st, want, what)
    integer, intent(in) :: st, want
    character(len=*), intent(in) :: what
    character(len=16) :: a, b
    if (st == want) return
    write(a, '(i0)') st
    write(b, '(i0)') want
    call fail(what//': status '//trim(a)//', expected '//trim(b))
  end subroutine

  subroutine fail(what)
    character(len=*), intent(in) :: what
    failures = failures + 1
    write(*, '(a,i0,a,a)') 'rank ', rank, ': FAILED: ', what
  end subroutine

  !> Every rank's failures summed; rank 0 says the verdict.
  subroutine finish()
    integer :: total, ierr
    call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
    if (rank == 0) write(*, '(a,i0,a,i0,a)') 'wrf api driver: ', nranks, ' ranks, ', total, &
                                             ' failures'
    failures = total
  end subroutine
end module wrf_api_fields
