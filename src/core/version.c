/* The library's version, from the one place it is set: CMake's project(). */
#include "tessera.h"
#include "tessera_version.h"

const char *tsr_inq_libvers(void) { return TSR__VERSION_STRING; }
