/* Staging, the drain of a log (stage_format=log, docs/staging.md): the drain
 * thread runs the tessera-convert program and waits for it. A process of its
 * own, because the conversion calls NetCDF/HDF5, which are not thread-safe,
 * while the model thread next to the drain may be calling them too. */
#include "tier/drain_convert.h"

#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tessera.h"

extern char **environ;

/* Where the converter is: $TESSERA_CONVERT; for the library of a build tree
 * (tests), that tree's program; next to an installed library (<libdir>/../bin,
 * wherever the prefix was moved); the configured install bindir. */
static const char anchor; /* an object of this library, for dladdr */

static int find_program(char *out, size_t n) {
  const char *env = getenv("TESSERA_CONVERT");
  if (env && env[0]) {
    snprintf(out, n, "%s", env);
    return access(out, X_OK) == 0;
  }
  Dl_info info;
  char libdir[4096] = "";
  if (dladdr(&anchor, &info) && info.dli_fname) {
    char *copy = strdup(info.dli_fname);
    if (copy) snprintf(libdir, sizeof libdir, "%s", dirname(copy));
    free(copy);
  }
  if (strcmp(libdir, TSR__CONVERT_BUILD_LIBDIR) == 0) {
    snprintf(out, n, "%s", TSR__CONVERT_BUILD);
    if (access(out, X_OK) == 0) return 1;
  }
  if (libdir[0]) {
    snprintf(out, n, "%s/%s/tessera-convert", libdir, TSR__CONVERT_LIB_TO_BIN);
    if (access(out, X_OK) == 0) return 1;
  }
  snprintf(out, n, "%s", TSR__CONVERT_INSTALLED);
  if (access(out, X_OK) == 0) return 1;
  snprintf(out, n, "%s", TSR__CONVERT_BUILD); /* a static link inside the build tree */
  return access(out, X_OK) == 0;
}

/* The model's environment without the MPI launcher's variables: with them
 * the converter would take itself for one more rank of the job; without,
 * its MPI_Init is a singleton's. Where the MPI library itself is, stays:
 * a relocated installation (OPAL_PREFIX, Open MPI's component paths, set by
 * module files and bundles) cannot start even a singleton without it. */
static int install_location(const char *var) {
  const char *eq = strchr(var, '=');
  size_t n = eq ? (size_t)(eq - var) : strlen(var);
  static const char *const ends[] = {"_PREFIX", "DIR", "component_path"};
  for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
    size_t m = strlen(ends[i]);
    if (n >= m && strncmp(var + n - m, ends[i], m) == 0) return 1;
  }
  return strncmp(var, "OMPI_ALLOW_RUN_AS_ROOT", 22) == 0;
}

static char **child_env(void) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = malloc((n + 1) * sizeof *env);
  if (!env) return NULL;
  size_t k = 0;
  static const char *const drop[] = {"OMPI_",  "PMIX_",  "PMI_",   "OPAL_", "ORTE_",
                                     "PRTE_",  "MPICH_", "HYDRA_", "I_MPI_"};
  for (size_t i = 0; i < n; i++) {
    int keep = 1;
    for (size_t d = 0; d < sizeof drop / sizeof drop[0]; d++)
      if (strncmp(environ[i], drop[d], strlen(drop[d])) == 0) keep = 0;
    if (keep || install_location(environ[i])) env[k++] = environ[i];
  }
  env[k] = NULL;
  return env;
}

int tsr__drain_convert(const char *log, const char *final, char *msg, size_t msglen) {
  char prog[4096];
  if (!find_program(prog, sizeof prog)) {
    snprintf(msg, msglen, "drain: the converter tessera-convert is not installed (looked for %s; "
             "set TESSERA_CONVERT); %s stays staged", prog, log);
    return TSR_ENOTBUILT;
  }
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(msg, msglen, "drain: no pipe for the converter: %s", strerror(errno));
    return TSR_ENOMEM;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", 0, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  /* The model's files and MPI's sockets stay with the model. */
  posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
#endif
  char **env = child_env();
  char *argv[] = {prog, (char *)log, (char *)final, NULL};
  pid_t pid = -1;
  int e = env ? posix_spawn(&pid, prog, &fa, NULL, argv, env) : ENOMEM;
  posix_spawn_file_actions_destroy(&fa);
  free(env);
  close(fds[1]);
  if (e != 0) {
    close(fds[0]);
    snprintf(msg, msglen, "drain: cannot run %s: %s", prog, strerror(e));
    return TSR_EACCES;
  }
  /* The converter's message, if it fails: read to the end, then reap. */
  char text[400] = "";
  size_t got = 0;
  for (;;) {
    ssize_t r = read(fds[0], text + got, sizeof text - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
    if (got == sizeof text - 1) { /* keep draining the pipe, keep the start */
      char sink[256];
      while (read(fds[0], sink, sizeof sink) > 0) {}
      break;
    }
  }
  text[got] = '\0';
  if (got && text[got - 1] == '\n') text[got - 1] = '\0';
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  /* The converter exits with TSR__CONVERT_EXIT - TSR_E* (tessera_convert.c);
   * any other status (an MPI library that aborted, exit 1) is TSR_EIO. */
  int code = WIFEXITED(st) ? TSR__CONVERT_EXIT - WEXITSTATUS(st) : TSR_EIO;
  if (code < TSR_ELAST || code >= 0) code = TSR_EIO;
  if (text[0])
    snprintf(msg, msglen, "%s", text);
  else
    snprintf(msg, msglen, "drain: %s exited with status %d converting %s", prog,
             WIFEXITED(st) ? WEXITSTATUS(st) : -1, log);
  if (WIFSIGNALED(st))
    snprintf(msg, msglen, "drain: %s killed by signal %d converting %s", prog, WTERMSIG(st), log);
  return code;
}
