/* Writes the Fortran error constants from the one error table in tessera.h,
 * so the Fortran and C codes can never drift apart. */
#include <stdio.h>

#include "tessera.h"

int main(void) {
  printf("! Generated at build time from TSR_ERRNO_MAP in tessera.h: do not edit.\n");
  printf("integer(c_int), parameter, public :: TSR_OK = 0\n");
#define TSR__F_CONST(name, value, text) \
  printf("integer(c_int), parameter, public :: TSR_%s = %d\n", #name, value);
  TSR_ERRNO_MAP(TSR__F_CONST)
#undef TSR__F_CONST
  return 0;
}
