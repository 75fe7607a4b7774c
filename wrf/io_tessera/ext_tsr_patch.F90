!> Where a WRF patch goes in the file: the file-order shape of a field
!> from WRF's domain/memory/patch bounds, the copy of a patch that every
!> rank holds whole (written once), and the catalogue of a file being read.
module ext_tsr_patch
  use, intrinsic :: iso_c_binding
  use mpi
  use tessera
  use ext_tsr_codes
  use ext_tsr_order
  use ext_tsr_state
  implicit none
  private
  public :: patch_t, patch_of, is_replicated, pack_patch, unpack_patch, read_catalogue, &
            patch_decomposition

  !> A field's bounds in file order (fastest first, 1-based within the domain).
  type patch_t
    integer :: nd = 0
    integer(c_int) :: forder(3) = [1, 2, 3]
    integer(c_int64_t) :: g(3) = 1, s(3) = 1, c(3) = 0, ms(3) = 1, mc(3) = 0
    integer :: flen(3) = 1
    ! memory order bounds as WRF gave them (for the copies)
    integer :: mstart(3) = 1, mend(3) = 1, pstart(3) = 1, pend(3) = 1
    logical :: whole = .false.   ! this rank's patch is the whole domain
  end type

contains

  type(patch_t) function patch_of(memord, DomainStart, DomainEnd, MemoryStart, MemoryEnd, &
                                  PatchStart, PatchEnd) result(p)
    character(len=*), intent(in) :: memord
    integer, intent(in) :: DomainStart(*), DomainEnd(*), MemoryStart(*), MemoryEnd(*)
    integer, intent(in) :: PatchStart(*), PatchEnd(*)
    integer :: m, f
    p%nd = max(order_ndim(memord), 0)
    call order_forder(memord, p%forder)
    p%whole = .true.
    do m = 1, p%nd
      f = p%forder(m)
      p%g(f) = DomainEnd(m) - DomainStart(m) + 1
      p%s(f) = PatchStart(m) - DomainStart(m) + 1
      p%c(f) = max(0, PatchEnd(m) - PatchStart(m) + 1)
      p%ms(f) = MemoryStart(m) - DomainStart(m) + 1
      p%mc(f) = MemoryEnd(m) - MemoryStart(m) + 1
      p%flen(f) = int(p%g(f))
      p%mstart(m) = MemoryStart(m)
      p%mend(m) = MemoryEnd(m)
      p%pstart(m) = PatchStart(m)
      p%pend(m) = PatchEnd(m)
      p%whole = p%whole .and. PatchStart(m) == DomainStart(m) .and. PatchEnd(m) == DomainEnd(m)
    end do
  end function

  !> Collective: every rank holds the whole field (WRF's 1-D and 0-D fields,
  !> held alike by every rank), so it is written once, not as a decomposition
  !> whose tiles would overlap. One rank alone writes through its decomposition.
  logical function is_replicated(p, comm)
    type(patch_t), intent(in) :: p
    integer, intent(in) :: comm
    integer :: nproc, ierr
    logical :: all_whole
    call MPI_Comm_size(comm, nproc, ierr)
    call MPI_Allreduce(p%whole, all_whole, 1, MPI_LOGICAL, MPI_LAND, comm, ierr)
    is_replicated = p%nd == 0 .or. (nproc > 1 .and. all_whole)
  end function

  !> The decomposition of p on the context of h (made once, agreed on).
  subroutine patch_decomposition(h, p, idec, status)
    type(handle_t), intent(in) :: h
    type(patch_t), intent(in) :: p
    integer, intent(out) :: idec, status
    integer :: rc
    status = WRF_NO_ERR
    call decomposition(h%ctx, h%comm, p%nd, p%g, p%s, p%c, p%ms, p%mc, p%forder, idec, rc)
    if (rc /= TSR_OK) status = tessera_failed(rc, 'decomposition of a patch of '//trim(h%path))
  end subroutine

  !> Linear offsets (0-based) of the patch point (i, j, k) in memory and in
  !> the file-ordered copy.
  pure subroutine offsets(p, i, j, k, mem, fil)
    type(patch_t), intent(in) :: p
    integer, intent(in) :: i, j, k
    integer(c_int64_t), intent(out) :: mem, fil
    integer(c_int64_t) :: fpos(3), fext(3)
    integer :: m, idx(3)
    idx = [i, j, k]
    fpos = 0
    fext = 1
    do m = 1, p%nd
      fpos(p%forder(m)) = idx(m) - p%pstart(m)
      fext(p%forder(m)) = p%pend(m) - p%pstart(m) + 1
    end do
    mem = (int(k - p%mstart(3), c_int64_t) * (p%mend(2) - p%mstart(2) + 1) + (j - p%mstart(2))) &
          * (p%mend(1) - p%mstart(1) + 1) + (i - p%mstart(1))
    fil = (fpos(3) * fext(2) + fpos(2)) * fext(1) + fpos(1)
  end subroutine

  !> Copy this rank's patch out of its memory (di 4-byte words per value)
  !> into file order.
  subroutine pack_patch(p, di, field, out)
    type(patch_t), intent(in) :: p
    integer, intent(in) :: di
    integer, intent(in) :: field(*)
    integer, intent(inout) :: out(*)
    call copy_patch(p, di, field, out, .true.)
  end subroutine

  !> The reverse of pack_patch: file order into the patch of the memory.
  subroutine unpack_patch(p, di, whole, field)
    type(patch_t), intent(in) :: p
    integer, intent(in) :: di
    integer, intent(in) :: whole(*)
    integer, intent(inout) :: field(*)
    call copy_patch(p, di, whole, field, .false.)
  end subroutine

  !> Every point of the patch from src to dst: memory to file order when
  !> packing, file order to memory when not.
  subroutine copy_patch(p, di, src, dst, packing)
    type(patch_t), intent(in) :: p
    integer, intent(in) :: di
    integer, intent(in) :: src(*)
    integer, intent(inout) :: dst(*)
    logical, intent(in) :: packing
    integer :: i, j, k
    integer(c_int64_t) :: mem, fil, from, to
    do k = p%pstart(3), p%pend(3)
      do j = p%pstart(2), p%pend(2)
        do i = p%pstart(1), p%pend(1)
          call offsets(p, i, j, k, mem, fil)
          from = merge(mem, fil, packing) * di
          to = merge(fil, mem, packing) * di
          dst(to + 1:to + di) = src(from + 1:from + di)
        end do
      end do
    end do
  end subroutine

  !> A file opened for reading: its times (Times) and variables (collective).
  subroutine read_catalogue(h, status)
    type(handle_t), intent(inout) :: h
    integer, intent(out) :: status
    character(kind=c_char), target :: date(DATE_STR_LEN)
    character(len=NAME_LEN) :: name
    integer :: ndims, nvars, ngatts, unlim, i, t, xtype, nd, dimids(8), rc, l
    integer(c_int64_t) :: shape(8)
    type(tsr_decomp_t) :: whole
    status = WRF_NO_ERR
    rc = tsr_inq(h%f, ndims, nvars, ngatts, unlim)
    h%nvars = 0
    h%ntimes = 0
    do i = 0, nvars - 1
      rc = tsr_inq_var(h%f, i, name, xtype, nd, dimids, shape)
      if (rc /= TSR_OK) cycle
      if (name == 'Times') then
        h%times_varid = i
        if (nd /= 2 .or. shape(1) /= DATE_STR_LEN) then
          call say('Times of '//trim(h%path)//' is not char(Time, DateStrLen=19)')
          status = WRF_WARN_DATESTR_BAD_LENGTH
          return
        end if
        do t = 1, int(shape(2))
          date = ' '
          rc = tsr_get_ptr(h%f, i, t, whole, c_loc(date))
          if (rc /= TSR_OK) then
            status = tessera_failed(rc, 'reading Times of '//trim(h%path), h%f)
            return
          end if
          call grow_times(h)
          h%ntimes = h%ntimes + 1
          do l = 1, DATE_STR_LEN
            h%times(h%ntimes)(l:l) = date(l)
          end do
        end do
        cycle
      end if
      call grow_vars(h)
      h%nvars = h%nvars + 1
      h%vars(h%nvars) = var_t()
      h%vars(h%nvars)%name = name
      h%vars(h%nvars)%varid = i
      h%vars(h%nvars)%xtype = xtype
      h%vars(h%nvars)%meta = name(1:min(5, len_trim(name))) == 'md___'
      ! the record dimension is last, fastest first
      h%vars(h%nvars)%ndim = max(0, nd - 1)
      h%vars(h%nvars)%flen(1:min(3, max(0, nd - 1))) = int(shape(1:min(3, max(0, nd - 1))))
    end do
  end subroutine
end module ext_tsr_patch
