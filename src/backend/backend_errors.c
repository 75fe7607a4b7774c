/* Backend error mapping shared by the NetCDF and PnetCDF backends. */
#include "backend/backend_errors.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/verbose.h"

int tsr__berr_from_errno(int e) {
  switch (e) {
  case ENOENT:
  case EACCES:
  case EPERM:
  case EISDIR:
  case ENOTDIR:
  case EROFS:
  case ENAMETOOLONG: return TSR_EACCES;
  case ENOSPC:
  case EFBIG: /* RLIMIT_FSIZE with SIGXFSZ ignored, or the file system's limit */
#ifdef EDQUOT
  case EDQUOT:
#endif
    return TSR_ENOSPC;
  case ENOMEM: return TSR_ENOMEM;
  default: return TSR_EIO;
  }
}

static int classify(int native, int sys_errno, const tsr__berr_class *table, size_t ntable) {
  if (native > 0) return tsr__berr_from_errno(native);
  for (size_t i = 0; i < ntable; i++) {
    if (table[i].native != native) continue;
    if (table[i].use_errno && sys_errno > 0) {
      int by_errno = tsr__berr_from_errno(sys_errno);
      if (by_errno != TSR_EIO) return by_errno;
    }
    return table[i].tsr;
  }
  return TSR_EIO;
}

int tsr__berr_native(tsr__berr *err, const char *lib, int native, int sys_errno,
                     const char *native_msg, const tsr__berr_class *table, size_t ntable,
                     const char *context_fmt, ...) {
  int code = classify(native, sys_errno, table, ntable);
  /* Both libraries' strerror may already say "NetCDF: "; we name the library
   * that actually failed instead. */
  const char *msg = native_msg ? native_msg : "unknown error";
  if (strncmp(msg, "NetCDF: ", 8) == 0) msg += 8;
  char context[160] = "";
  if (context_fmt) {
    va_list ap;
    va_start(ap, context_fmt);
    vsnprintf(context, sizeof context, context_fmt, ap);
    va_end(ap);
  }
  /* When errno changed the verdict, say so: the native text alone ("Unknown
   * error in file operation") would hide why this is TSR_ENOSPC. */
  char because[64] = "";
  if (native <= 0 && sys_errno > 0 && code != TSR_EIO && code != classify(native, 0, table, ntable))
    snprintf(because, sizeof because, " [%s]", strerror(sys_errno));
  tsr__berr local;
  tsr__berr *e = err ? err : &local;
  e->code = native;
  snprintf(e->message, sizeof e->message, "%s: %s%s%s%s%s", lib, msg, because,
           context[0] ? " (" : "", context, context[0] ? ")" : "");
  TSR_LOG("%s -> %s", e->message, tsr_errname(code));
  return code;
}

int tsr__berr_plain(tsr__berr *err, int tsr_code, const char *lib, const char *fmt, ...) {
  tsr__berr local;
  tsr__berr *e = err ? err : &local;
  e->code = 0;
  int n = snprintf(e->message, sizeof e->message, "%s: ", lib);
  if (n < 0 || (size_t)n >= sizeof e->message) n = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->message + n, sizeof e->message - (size_t)n, fmt, ap);
  va_end(ap);
  TSR_LOG("%s -> %s", e->message, tsr_errname(tsr_code));
  return tsr_code;
}
