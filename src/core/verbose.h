/* Logging: silent unless TESSERA_VERBOSE is set to a non-empty value other
 * than 0; then one line per message on stderr with rank, function and line. */
#ifndef TSR_CORE_VERBOSE_H
#define TSR_CORE_VERBOSE_H

int tsr__verbose(void);
void tsr__verbose_at(const char *func, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define TSR_LOG(...) \
  do { \
    if (tsr__verbose()) tsr__verbose_at(__func__, __LINE__, __VA_ARGS__); \
  } while (0)

#endif
