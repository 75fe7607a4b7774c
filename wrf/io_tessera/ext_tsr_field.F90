!> Fields: write_field (training pass: define; real pass: write the patch in
!> place), read_field, and what a reader asks about a file's variables.

module ext_tsr_field_support
  use, intrinsic :: iso_c_binding
  use mpi
  use tessera
  use ext_tsr_codes
  use ext_tsr_order
  use ext_tsr_state
  use ext_tsr_patch
  implicit none
  private
  public :: define_field, tsr_type_of, memory_type_of, words_of, define_dimension, field_handle

contains

  !> What write_field and read_field check first: a memory order WRF knows
  !> (memord: lower case) and an open handle.
  subroutine field_handle(DataHandle, Var, MemoryOrdIn, memord, h, status)
    integer, intent(in) :: DataHandle
    character(len=*), intent(in) :: Var, MemoryOrdIn
    character(len=3), intent(out) :: memord
    type(handle_t), pointer, intent(out) :: h
    integer, intent(out) :: status
    h => null()
    memord = order_lower(MemoryOrdIn)
    if (order_ndim(memord) < 0) then
      call say('field '//trim(Var)//': memory order "'//trim(MemoryOrdIn)//'" is not WRF''s')
      status = WRF_WARN_BAD_MEMORYORDER
      return
    end if
    call get_handle(DataHandle, h, status)
  end subroutine

  !> The file type of a WRF field type (doubles become floats with
  !> REAL_OUTPUT_SIZE=4, as in WRF's packages).
  integer function tsr_type_of(FieldType, r4)
    integer, intent(in) :: FieldType
    logical, intent(in) :: r4
    select case (FieldType)
    case (WRF_REAL)
      tsr_type_of = TSR_FLOAT
    case (WRF_DOUBLE)
      tsr_type_of = merge(TSR_FLOAT, TSR_DOUBLE, r4)
    case (WRF_INTEGER, WRF_LOGICAL)
      tsr_type_of = TSR_INT
    case default
      tsr_type_of = -1
    end select
  end function

  !> The memory's element type of a WRF field type.
  integer function memory_type_of(FieldType)
    integer, intent(in) :: FieldType
    memory_type_of = tsr_type_of(FieldType, .false.)
  end function

  !> 4-byte words per value of a Tessera type.
  integer function words_of(xtype)
    integer, intent(in) :: xtype
    words_of = merge(2, 1, xtype == TSR_DOUBLE)
  end function

  !> The dimension of length len named name ('' for WRF's unnamed ones), by
  !> the rules of WRF's packages: an unnamed dimension takes any slot of the
  !> same length, else a new slot named DIM<slot>; a named one its own name.
  integer function define_dimension(h, name, len, status) result(dimid)
    type(handle_t), intent(inout) :: h
    character(len=*), intent(in) :: name
    integer, intent(in) :: len
    integer, intent(out) :: status
    character(len=NAME_LEN), allocatable :: gn(:)
    integer, allocatable :: gl(:), gi(:)
    integer :: i, slot, rc
    character(len=8) :: auto
    status = WRF_NO_ERR
    dimid = -1
    slot = 0
    do i = 1, h%ndims
      if (len_trim(name) == 0 .or. name(1:1) == char(0)) then
        if (h%dimlen(i) == len) slot = i
      else if (h%dimname(i) == name) then
        if (h%dimlen(i) /= len) then
          call say('dimension '//trim(name)//' given two lengths in '//trim(h%path))
          status = WRF_WARN_DIMNAME_REDEFINED
          return
        end if
        slot = i
      end if
      if (slot > 0) exit
    end do
    if (slot > 0) then
      dimid = h%dimid(slot)
      return
    end if
    if (h%ndims == size(h%dimlen)) then
      allocate(gn(2 * h%ndims), gl(2 * h%ndims), gi(2 * h%ndims))
      gn(1:h%ndims) = h%dimname(1:h%ndims)
      gl(1:h%ndims) = h%dimlen(1:h%ndims)
      gi(1:h%ndims) = h%dimid(1:h%ndims)
      call move_alloc(gn, h%dimname)
      call move_alloc(gl, h%dimlen)
      call move_alloc(gi, h%dimid)
    end if
    h%ndims = h%ndims + 1
    if (len_trim(name) == 0 .or. name(1:1) == char(0)) then
      write(auto, '("DIM",i4.4)') h%ndims
      h%dimname(h%ndims) = auto
    else
      h%dimname(h%ndims) = name
    end if
    h%dimlen(h%ndims) = len
    rc = tsr_def_dim(h%f, trim(h%dimname(h%ndims)), int(len, c_int64_t), dimid)
    if (rc /= TSR_OK) then
      status = tessera_failed(rc, 'defining dimension '//trim(h%dimname(h%ndims)), h%f)
      return
    end if
    h%dimid(h%ndims) = dimid
  end function

  !> The training pass of one field: its variable, attributes and decomposition.
  subroutine define_field(h, Var, FieldType, memord, DimNames, p, status)
    type(handle_t), intent(inout) :: h
    character(len=*), intent(in) :: Var, memord
    integer, intent(in) :: FieldType
    character(len=*), intent(in) :: DimNames(*)
    type(patch_t), intent(in) :: p
    integer, intent(out) :: status
    integer :: dimids(4), m, f, rc, iv, xtype, idec
    type(var_t) :: v
    status = WRF_NO_ERR
    if (find_var(h, Var) > 0) then
      status = WRF_WARN_2DRYRUNS_1VARIABLE
      return
    end if
    xtype = tsr_type_of(FieldType, h%r4_output)
    if (xtype < 0) then
      call say('field '//trim(Var)//' has a type WRF''s I/O API does not know')
      status = WRF_WARN_DATA_TYPE_NOT_FOUND
      return
    end if
    ! in file order, fastest first, as WRF's packages define them
    do f = 1, p%nd
      m = findloc(p%forder(1:p%nd), f, 1)
      dimids(f) = define_dimension(h, DimNames(m), p%flen(f), status)
      if (status /= WRF_NO_ERR) return
    end do
    dimids(p%nd + 1) = h%time_dimid
    v%name = Var
    v%ndim = p%nd
    v%flen = p%flen
    v%xtype = xtype
    rc = tsr_def_var(h%f, trim(Var), xtype, dimids(1:p%nd + 1), v%varid)
    if (rc == TSR_OK) rc = tsr_put_att(h%f, v%varid, 'FieldType', &
                                       merge(WRF_REAL, FieldType, xtype == TSR_FLOAT))
    if (rc == TSR_OK) rc = tsr_put_att(h%f, v%varid, 'MemoryOrder', order_attribute(memord))
    if (rc /= TSR_OK) then
      status = tessera_failed(rc, 'defining '//trim(Var)//' in '//trim(h%path), h%f)
      return
    end if
    v%replicated = is_replicated(p, h%comm)
    if (.not. v%replicated) then
      call patch_decomposition(h, p, idec, status)
      if (status /= WRF_NO_ERR) return
      rc = tsr_def_var_decomp(h%f, v%varid, decs(idec)%d)
      if (rc /= TSR_OK) then
        status = tessera_failed(rc, 'decomposition of '//trim(Var)//' in '//trim(h%path), h%f)
        return
      end if
    end if
    call grow_vars(h)
    h%nvars = h%nvars + 1
    iv = h%nvars
    h%vars(iv) = v
  end subroutine
end module ext_tsr_field_support

!> Training pass: define the field. Real pass: write this rank's patch,
!> read in place from WRF's memory (halos and memory order included).
subroutine ext_tsr_write_field(DataHandle, DateStr, Var, Field, FieldType, Comm, IOComm, &
                               DomainDesc, MemoryOrdIn, Stagger, DimNames, DomainStart, &
                               DomainEnd, MemoryStart, MemoryEnd, PatchStart, PatchEnd, Status)
  use, intrinsic :: iso_c_binding
  use tessera
  use ext_tsr_codes
  use ext_tsr_order
  use ext_tsr_state
  use ext_tsr_patch
  use ext_tsr_field_support
  implicit none
  integer, intent(in) :: DataHandle, FieldType, DomainDesc
  character(len=*), intent(in) :: DateStr, Var, MemoryOrdIn, Stagger
  integer, intent(inout), target :: Field(*)
  integer, intent(inout) :: Comm, IOComm
  character(len=*), intent(in) :: DimNames(*)
  integer, intent(in) :: DomainStart(*), DomainEnd(*), MemoryStart(*), MemoryEnd(*)
  integer, intent(in) :: PatchStart(*), PatchEnd(*)
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  type(patch_t) :: p
  character(len=3) :: memord
  integer :: iv, frame, rc, idec, di, n
  integer, allocatable, target :: whole(:)
  real(c_double), allocatable :: dbl(:)
  real(c_float), allocatable, target :: flt(:)
  call field_handle(DataHandle, Var, MemoryOrdIn, memord, h, Status)
  if (Status /= WRF_NO_ERR) return
  Status = date_check(DateStr)
  if (Status /= WRF_NO_ERR) return
  p = patch_of(memord, DomainStart, DomainEnd, MemoryStart, MemoryEnd, PatchStart, PatchEnd)
  if (order_zero_horizontal(memord, p%flen)) return
  select case (h%state)
  case (WRF_FILE_OPENED_NOT_COMMITTED)
    call define_field(h, Var, FieldType, memord, DimNames, p, Status)
    return
  case (WRF_FILE_OPENED_FOR_WRITE)
    continue
  case (WRF_FILE_OPENED_FOR_READ)
    Status = WRF_WARN_WRITE_RONLY_FILE
    return
  case default
    Status = WRF_ERR_FATAL_BAD_FILE_STATUS
    return
  end select
  iv = find_var(h, Var)
  if (iv == 0) then
    call say('field '//trim(Var)//' was not in the training pass of '//trim(h%path))
    Status = WRF_WARN_VAR_NF
    return
  end if
  if (any(h%vars(iv)%flen(1:p%nd) /= p%flen(1:p%nd)) .or. h%vars(iv)%ndim /= p%nd) then
    call say('field '//trim(Var)//' has other dimensions than in its training pass')
    Status = WRF_WARN_WRTLEN_NE_DRRUNLEN
    return
  end if
  Status = end_define(h)
  if (Status /= WRF_NO_ERR) return
  frame = write_frame(h, DateStr, Status)
  if (Status /= WRF_NO_ERR) return
  if (h%vars(iv)%replicated) then
    ! every rank holds it whole: one copy in file order, written once
    di = words_of(memory_type_of(FieldType))
    n = int(product(p%c(1:max(p%nd, 1))))
    if (p%nd == 0) n = 1
    allocate(whole(n * di))
    call pack_patch(p, di, Field, whole)
    if (h%vars(iv)%xtype == TSR_FLOAT .and. FieldType == WRF_DOUBLE) then
      dbl = transfer(whole, [0.0_c_double])
      flt = real(dbl, c_float)
      rc = tsr_put_global_ptr(h%f, h%vars(iv)%varid, frame, c_loc(flt))
    else
      rc = tsr_put_global_ptr(h%f, h%vars(iv)%varid, frame, c_loc(whole))
    end if
  else
    call patch_decomposition(h, p, idec, Status)
    if (Status /= WRF_NO_ERR) return
    rc = tsr_put_ptr(h%f, h%vars(iv)%varid, frame, decs(idec)%d, memory_type_of(FieldType), &
                     c_loc(Field(1)))
  end if
  if (rc /= TSR_OK) Status = tessera_failed(rc, 'writing '//trim(Var)//' to '//trim(h%path), h%f)
end subroutine

!> Read this rank's patch of a field at DateStr into WRF's memory.
subroutine ext_tsr_read_field(DataHandle, DateStr, Var, Field, FieldType, Comm, IOComm, &
                              DomainDesc, MemoryOrdIn, Stagger, DimNames, DomainStart, &
                              DomainEnd, MemoryStart, MemoryEnd, PatchStart, PatchEnd, Status)
  use, intrinsic :: iso_c_binding
  use tessera
  use ext_tsr_codes
  use ext_tsr_order
  use ext_tsr_state
  use ext_tsr_patch
  use ext_tsr_field_support
  implicit none
  integer, intent(in) :: DataHandle, FieldType, DomainDesc
  character(len=*), intent(in) :: DateStr, Var, MemoryOrdIn, Stagger
  integer, intent(inout), target :: Field(*)
  integer, intent(inout) :: Comm, IOComm
  character(len=*), intent(in) :: DimNames(*)
  integer, intent(in) :: DomainStart(*), DomainEnd(*), MemoryStart(*), MemoryEnd(*)
  integer, intent(in) :: PatchStart(*), PatchEnd(*)
  integer, intent(out) :: Status
  type(handle_t), pointer :: h
  type(patch_t) :: p
  character(len=3) :: memord
  integer :: iv, frame, rc, idec, di, n, fdi
  integer, allocatable, target :: whole(:), conv(:)
  type(tsr_decomp_t) :: none
  logical :: convert
  call field_handle(DataHandle, Var, MemoryOrdIn, memord, h, Status)
  if (Status /= WRF_NO_ERR) return
  call readable(h, Status)
  if (Status /= WRF_NO_ERR) return
  iv = find_var(h, Var)
  if (iv == 0) then
    Status = WRF_WARN_VAR_NF
    return
  end if
  frame = read_frame(h, DateStr)
  if (frame == 0) then
    Status = WRF_WARN_TIME_NF
    return
  end if
  p = patch_of(memord, DomainStart, DomainEnd, MemoryStart, MemoryEnd, PatchStart, PatchEnd)
  if (any(h%vars(iv)%flen(1:p%nd) /= p%flen(1:p%nd)) .or. h%vars(iv)%ndim /= p%nd) then
    call say('field '//trim(Var)//' of '//trim(h%path)//' has other dimensions than asked for')
    Status = WRF_WARN_DIMENSION_ERROR
    return
  end if
  di = words_of(memory_type_of(FieldType))
  fdi = words_of(h%vars(iv)%xtype)
  convert = h%vars(iv)%xtype /= memory_type_of(FieldType)
  if (convert .and. (h%vars(iv)%xtype == TSR_INT .or. memory_type_of(FieldType) == TSR_INT)) then
    call say('field '//trim(Var)//' of '//trim(h%path)//' is stored in another kind of type')
    Status = WRF_WARN_TYPE_MISMATCH
    return
  end if
  if (is_replicated(p, h%comm) .or. convert) then
    ! the whole variable on every rank, then this rank's patch out of it
    n = product(h%vars(iv)%flen(1:max(p%nd, 1)))
    if (p%nd == 0) n = 1
    allocate(whole(n * fdi))
    rc = tsr_get_ptr(h%f, h%vars(iv)%varid, frame, none, c_loc(whole))
    if (rc == TSR_OK .and. convert) then
      if (fdi == 2) then
        conv = transfer(real(transfer(whole, [0.0_c_double]), c_float), [0])
      else
        conv = transfer(real(transfer(whole, [0.0_c_float]), c_double), [0])
      end if
      call move_alloc(conv, whole)
    end if
    if (rc == TSR_OK) then
      ! the patch's place in the whole: shift the patch to domain origin
      call unpack_whole(p, di, whole, Field)
    end if
  else
    call patch_decomposition(h, p, idec, Status)
    if (Status /= WRF_NO_ERR) return
    rc = tsr_get_ptr(h%f, h%vars(iv)%varid, frame, decs(idec)%d, c_loc(Field(1)))
  end if
  if (rc /= TSR_OK) Status = tessera_failed(rc, 'reading '//trim(Var)//' of '//trim(h%path), h%f)
contains
  !> The patch of a whole variable (file order, domain origin) into memory.
  subroutine unpack_whole(p, di, whole, field)
    type(patch_t), intent(in) :: p
    integer, intent(in) :: di
    integer, intent(in) :: whole(*)
    integer, intent(inout) :: field(*)
    type(patch_t) :: q
    integer, allocatable :: part(:)
    integer :: i, j, k, f, ii(3)
    integer(c_int64_t) :: src, dst
    ! cut the patch out of the whole in file order, then unpack_patch it
    allocate(part(max(1, int(product(p%c(1:max(p%nd, 1))))) * di))
    dst = 0
    do k = 1, int(merge(p%c(3), 1_c_int64_t, p%nd >= 3))
      do j = 1, int(merge(p%c(2), 1_c_int64_t, p%nd >= 2))
        do i = 1, int(merge(p%c(1), 1_c_int64_t, p%nd >= 1))
          ii = [i, j, k]
          src = 0
          do f = 3, 1, -1
            if (f <= p%nd) src = src * p%g(f) + (p%s(f) + ii(f) - 2)
          end do
          part(dst * di + 1:dst * di + di) = whole(src * di + 1:src * di + di)
          dst = dst + 1
        end do
      end do
    end do
    q = p
    call unpack_patch(q, di, part, field)
  end subroutine
end subroutine
