!> The numbers of WRF's I/O API that ext_tsr_* answers with: status codes
!> (WRF's external/ioapi_share/wrf_status_codes.h) and file states and field
!> types (wrf_io_flags.h). They are the interface's published values, written
!> here so that the package builds without a WRF tree.
module ext_tsr_codes
  implicit none
  public

  ! status codes
  integer, parameter :: WRF_NO_ERR = 0
  integer, parameter :: WRF_WARN_FILE_NF = -1
  integer, parameter :: WRF_WARN_MD_NF = -2
  integer, parameter :: WRF_WARN_TIME_NF = -3
  integer, parameter :: WRF_WARN_TIME_EOF = -4
  integer, parameter :: WRF_WARN_VAR_NF = -5
  integer, parameter :: WRF_WARN_VAR_EOF = -6
  integer, parameter :: WRF_WARN_TOO_MANY_FILES = -7
  integer, parameter :: WRF_WARN_TYPE_MISMATCH = -8
  integer, parameter :: WRF_WARN_WRITE_RONLY_FILE = -9
  integer, parameter :: WRF_WARN_READ_WONLY_FILE = -10
  integer, parameter :: WRF_WARN_FILE_NOT_OPENED = -11
  integer, parameter :: WRF_WARN_2DRYRUNS_1VARIABLE = -12
  integer, parameter :: WRF_WARN_BAD_DATA_HANDLE = -14
  integer, parameter :: WRF_WARN_WRTLEN_NE_DRRUNLEN = -15
  integer, parameter :: WRF_WARN_COUNT_TOO_LONG = -17
  integer, parameter :: WRF_WARN_DIMENSION_ERROR = -18
  integer, parameter :: WRF_WARN_BAD_MEMORYORDER = -19
  integer, parameter :: WRF_WARN_DIMNAME_REDEFINED = -20
  integer, parameter :: WRF_WARN_CHARSTR_GT_LENDATA = -21
  integer, parameter :: WRF_WARN_NOTSUPPORTED = -22
  integer, parameter :: WRF_WARN_NOOP = -23
  integer, parameter :: WRF_ERR_FATAL_BAD_FILE_STATUS = -102
  integer, parameter :: WRF_WARN_FILE_NOT_COMMITTED = -1008
  integer, parameter :: WRF_IO_NOT_INITIALIZED = -1010
  integer, parameter :: WRF_WARN_MD_AFTER_OPEN = -1011
  integer, parameter :: WRF_WARN_DRYRUN_CLOSE = -1013
  integer, parameter :: WRF_WARN_DATESTR_BAD_LENGTH = -1014
  integer, parameter :: WRF_WARN_DATA_TYPE_NOT_FOUND = -1016
  integer, parameter :: WRF_WARN_DATESTR_ERROR = -1017
  integer, parameter :: WRF_WARN_DRYRUN_READ = -1018
  integer, parameter :: WRF_WARN_ZERO_LENGTH_PUT = -1020
  integer, parameter :: WRF_WARN_LENGTH_LESS_THAN_1 = -1022
  integer, parameter :: WRF_WARN_MORE_DATA_IN_FILE = -1023
  !> Not in WRF's table: a failure inside Tessera; the message was printed
  !> on every rank and ext_tsr_error_str gives it back.
  integer, parameter :: WRF_WARN_TESSERA = -1026

  ! file states
  integer, parameter :: WRF_FILE_NOT_OPENED = 100
  integer, parameter :: WRF_FILE_OPENED_NOT_COMMITTED = 101
  integer, parameter :: WRF_FILE_OPENED_FOR_WRITE = 102
  integer, parameter :: WRF_FILE_OPENED_FOR_READ = 103
  ! field types
  integer, parameter :: WRF_REAL = 104
  integer, parameter :: WRF_DOUBLE = 105
  integer, parameter :: WRF_INTEGER = 106
  integer, parameter :: WRF_LOGICAL = 107

  !> Length of WRF's date strings ("0001-01-01_00:00:00"), the Times variable's width.
  integer, parameter :: DATE_STR_LEN = 19
end module ext_tsr_codes
