/* Error names and texts, generated from the one table in tessera.h. */
#include "tessera.h"

const char *tsr_strerror(int err) {
  switch (err) {
  case TSR_OK: return "success";
#define TSR__ERR_TEXT(name, value, text) \
  case TSR_##name: return text;
    TSR_ERRNO_MAP(TSR__ERR_TEXT)
#undef TSR__ERR_TEXT
  }
  return "unknown error code";
}

const char *tsr_errname(int err) {
  switch (err) {
  case TSR_OK: return "TSR_OK";
#define TSR__ERR_NAME(name, value, text) \
  case TSR_##name: return "TSR_" #name;
    TSR_ERRNO_MAP(TSR__ERR_NAME)
#undef TSR__ERR_NAME
  }
  return "TSR_E?";
}
