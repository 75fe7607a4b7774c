/* The one assertion header of the C tests (docs/architecture.md, "rules of
 * the code"): checks, scenario dispatch and skip reporting.
 *
 * Checks count and carry on: a failing one prints the case, the rank, file and
 * line, the expression and both values; the verdict is agreed over
 * MPI_COMM_WORLD when the scenario ends, so a failure on one rank fails the
 * test on every rank and nothing hangs waiting for a rank that gave up.
 * TSR_REQUIRE is for the rare point past which a test cannot go on: it says
 * why and calls MPI_Abort.
 *
 * A test program is a table of scenarios handed to tsr_test_main:
 *
 *   prog list                 the scenario names, one a line (no MPI needed)
 *   prog SCENARIO [args...]   one scenario; args are tsr_test_arg(0), ...
 *   prog s1,s2 [args...]      those scenarios, one after the other
 *   prog all [args...]        every scenario, one after the other
 *
 * and exits 0 (passed), 1 (failed), 2 (usage) or TSR_TEST_SKIP (77: the
 * strategy or backend the scenario is about is not built, or the scenario
 * needs more ranks), the same on every rank. cmake/TesseraTesting.cmake's
 * tsr_add_mpi_scenarios runs a program once per rank count over its
 * scenarios (an mpiexec start costs more than most scenarios) and registers
 * one CTest per (scenario, rank count) that reports that scenario's verdict
 * (TSR_TEST_VERDICTS below), with SKIP_RETURN_CODE 77: a failure names the
 * case and a skip shows as one.
 *
 * Header-only (every function static inline), so any test target can use it
 * with an include path and no extra library. */
#ifndef TSR_TEST_H
#define TSR_TEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera.h"

enum { TSR_TEST_SKIP = 77 };

/* ---- state: one set per program (each test program is one C file) ---- */

static struct {
  long pass, fail;
  int rank, nranks, skipped, argc;
  char **argv;
  const char *program, *scenario;
  char label[256]; /* the current case, printed with every failure */
  char skip_why[256];
} tsr_test_;

/* Ranks of MPI_COMM_WORLD; 0 and 1 in a program that never starts MPI. */
static inline int tsr_test_rank(void) { return tsr_test_.rank; }
static inline int tsr_test_nranks(void) { return tsr_test_.nranks ? tsr_test_.nranks : 1; }

/* The i-th argument after the scenario name, or @p dflt. */
static inline const char *tsr_test_arg(int i, const char *dflt) {
  return i >= 0 && i < tsr_test_.argc ? tsr_test_.argv[i] : dflt;
}

/* Name the case now under test (e.g. "aggregate-2/halo"); failures print it. */
static inline void tsr_test_case(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tsr_test_.label, sizeof tsr_test_.label, fmt, ap);
  va_end(ap);
}

static inline void tsr_test_pass_(void) { tsr_test_.pass++; }

/* With TSR_TEST_VERDICTS=DIR in the environment (how tsr_add_mpi_scenarios
 * runs a program: once per rank count, its scenarios one after the other),
 * each scenario's verdict goes to DIR/<scenario>.np<N>, the exit code on the
 * first line and the closing line after it, and each rank's failure lines to
 * DIR/<scenario>.np<N>.rank<R>; the CTest of (scenario, N) prints them and
 * exits with that code (cmake/tsr_verdict.sh). rank < 0: the verdict file.
 * Returns 0 when not in that mode. */
static inline int tsr_test_verdict_path_(char *buf, size_t size, const char *scenario, int rank) {
  const char *dir = getenv("TSR_TEST_VERDICTS");
  if (!dir || !dir[0] || !scenario) return 0;
  int n = tsr_test_.nranks ? tsr_test_.nranks : 1;
  if (rank < 0) snprintf(buf, size, "%s/%s.np%d", dir, scenario, n);
  else snprintf(buf, size, "%s/%s.np%d.rank%d", dir, scenario, n, rank);
  return 1;
}

/* Count a failure and print "[rank R] scenario/case file:line: message". */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline void tsr_test_fail_(const char *file, int line, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  const char *base = strrchr(file, '/');
  tsr_test_.fail++;
  char text[1200];
  snprintf(text, sizeof text, "[rank %d] %s%s%s%s %s:%d: %s\n", tsr_test_.rank,
           tsr_test_.scenario ? tsr_test_.scenario : "", tsr_test_.label[0] ? "/" : "",
           tsr_test_.label, tsr_test_.scenario || tsr_test_.label[0] ? ":" : "",
           base ? base + 1 : file, line, msg);
  fputs(text, stderr);
  fflush(stderr);
  char path[1024];
  if (tsr_test_verdict_path_(path, sizeof path, tsr_test_.scenario, tsr_test_.rank)) {
    FILE *fp = fopen(path, "a");
    if (fp) {
      fputs(text, fp);
      fclose(fp);
    }
  }
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static inline void tsr_test_failf_(const char *file, int line, const char *expr, const char *fmt,
                                   ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tsr_test_fail_(file, line, "check failed: %s: %s", expr, msg);
}

/* ---- checks ---- */

/* @p expr must hold. */
#define TSR_CHECK(expr)                                                                   \
  do {                                                                                    \
    if (expr) tsr_test_pass_();                                                           \
    else tsr_test_fail_(__FILE__, __LINE__, "check failed: %s", #expr);                   \
  } while (0)

/* @p expr must hold; on failure the message after it (printf format) is printed. */
#define TSR_CHECKF(expr, ...)                                                             \
  do {                                                                                    \
    if (expr) tsr_test_pass_();                                                           \
    else tsr_test_failf_(__FILE__, __LINE__, #expr, __VA_ARGS__);                         \
  } while (0)

/* Two integers (any integer type, compared as long long) must be equal. */
#define TSR_CHECK_EQ_INT(a, b)                                                            \
  do {                                                                                    \
    long long tsr_a_ = (long long)(a), tsr_b_ = (long long)(b);                           \
    if (tsr_a_ == tsr_b_) tsr_test_pass_();                                               \
    else                                                                                  \
      tsr_test_fail_(__FILE__, __LINE__, "%s == %s failed: %lld != %lld", #a, #b, tsr_a_, \
                     tsr_b_);                                                             \
  } while (0)

/* Two strings must be equal (NULL prints as "(null)" and equals only NULL). */
#define TSR_CHECK_EQ_STR(a, b)                                                            \
  do {                                                                                    \
    const char *tsr_a_ = (a), *tsr_b_ = (b);                                              \
    if (tsr_a_ == tsr_b_ || (tsr_a_ && tsr_b_ && strcmp(tsr_a_, tsr_b_) == 0))            \
      tsr_test_pass_();                                                                   \
    else                                                                                  \
      tsr_test_fail_(__FILE__, __LINE__, "%s == %s failed: \"%s\" != \"%s\"", #a, #b,     \
                     tsr_a_ ? tsr_a_ : "(null)", tsr_b_ ? tsr_b_ : "(null)");              \
  } while (0)

/* A pointer (an output handle after a failed call) must be NULL. */
#define TSR_CHECK_NULL(p)                                                                 \
  do {                                                                                    \
    const void *tsr_p_ = (const void *)(p);                                               \
    if (tsr_p_ == NULL) tsr_test_pass_();                                                 \
    else tsr_test_fail_(__FILE__, __LINE__, "%s is %p, expected NULL", #p, tsr_p_);       \
  } while (0)

/* A Tessera call must return @p want; both codes print by name. */
#define TSR_CHECK_RC(call, want)                                                          \
  do {                                                                                    \
    int tsr_rc_ = (call), tsr_w_ = (want);                                                \
    if (tsr_rc_ == tsr_w_) tsr_test_pass_();                                              \
    else                                                                                  \
      tsr_test_fail_(__FILE__, __LINE__, "%s returned %s (%d), expected %s (%d): %s", #call, \
                     tsr_errname(tsr_rc_), tsr_rc_, tsr_errname(tsr_w_), tsr_w_,           \
                     tsr_strerror(tsr_rc_));                                              \
  } while (0)

#define TSR_CHECK_OK(call) TSR_CHECK_RC(call, TSR_OK)

/* A point past which this rank cannot go on (a fixture missing): say why and
 * end the whole job, so the other ranks do not wait for this one. */
#define TSR_REQUIRE(expr)                                                                 \
  do {                                                                                    \
    if (!(expr)) tsr_test_abort_(__FILE__, __LINE__, #expr);                              \
  } while (0)

static inline void tsr_test_abort_(const char *file, int line, const char *what) {
  tsr_test_fail_(file, line, "required: %s; aborting the job", what);
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (up && !down) MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

/* ---- skipping ---- */

/* Mark the scenario skipped, with the reason (printed once, by rank 0). The
 * caller returns from the scenario; every rank must reach the same decision
 * (Tessera agrees on error codes, so a TSR_ENOTBUILT from a collective call
 * is the same everywhere). */
static inline void tsr_test_skip(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(tsr_test_.skip_why, sizeof tsr_test_.skip_why, fmt, ap);
  va_end(ap);
  tsr_test_.skipped = 1;
}

/* If @p rc is TSR_ENOTBUILT, skip the scenario and return from it:
 *   TSR_SKIP_IF_NOT_BUILT(tsr_create(ctx, path, "strategy=direct", &f), "strategy direct"); */
#define TSR_SKIP_IF_NOT_BUILT(rc, what)                                                   \
  do {                                                                                    \
    if ((rc) == TSR_ENOTBUILT) {                                                          \
      tsr_test_skip("%s is not built into this library", what);                           \
      return;                                                                             \
    }                                                                                     \
  } while (0)

/* ---- verdict ---- */

/* Agree on the verdict of what ran so far: failures anywhere -> 1, else a
 * skip anywhere -> TSR_TEST_SKIP, else 0. Collective over MPI_COMM_WORLD
 * while MPI runs; local in a program without MPI. Prints the closing line on
 * rank 0 and resets the counters. */
static inline int tsr_test_verdict(const char *name) {
  long local[3] = {tsr_test_.pass, tsr_test_.fail, tsr_test_.skipped}, all[3];
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (up && !down) {
    MPI_Allreduce(local, all, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  } else {
    memcpy(all, local, sizeof all);
  }
  int code = all[1] ? 1 : all[2] ? TSR_TEST_SKIP : 0;
  if (tsr_test_.rank == 0) {
    char line[1024], path[1024];
    if (code == TSR_TEST_SKIP)
      snprintf(line, sizeof line, "%s np%d: SKIPPED (%s); %ld passed before\n", name,
               tsr_test_nranks(), tsr_test_.skip_why[0] ? tsr_test_.skip_why : "on another rank",
               all[0]);
    else
      snprintf(line, sizeof line, "%s np%d: %ld passed, %ld failed\n", name, tsr_test_nranks(),
               all[0], all[1]);
    fputs(line, stdout);
    fflush(stdout);
    if (tsr_test_verdict_path_(path, sizeof path, tsr_test_.scenario, -1)) {
      FILE *fp = fopen(path, "w");
      if (fp) {
        fprintf(fp, "%d\n%s", code, line);
        fclose(fp);
      }
    }
  }
  tsr_test_.pass = tsr_test_.fail = 0;
  tsr_test_.skipped = 0;
  tsr_test_.skip_why[0] = tsr_test_.label[0] = '\0';
  return code;
}

/* ---- scenario dispatch ---- */

typedef struct {
  const char *name;
  void (*run)(void); /* collective over MPI_COMM_WORLD */
  int min_ranks;     /* fewer ranks: skipped (0 = any) */
} tsr_test_scenario;

static inline int tsr_test_usage_(const char *program, const tsr_test_scenario *s, int n) {
  fprintf(stderr, "usage: %s list | all | SCENARIO[,SCENARIO...] [args...]\nscenarios:", program);
  for (int i = 0; i < n; i++) fprintf(stderr, " %s", s[i].name);
  fprintf(stderr, "\n");
  return 2;
}

static inline int tsr_test_run_one_(const tsr_test_scenario *s) {
  char name[320];
  snprintf(name, sizeof name, "%s %s", tsr_test_.program, s->name);
  tsr_test_.scenario = s->name;
  tsr_test_.label[0] = '\0';
  if (s->min_ranks > tsr_test_nranks())
    tsr_test_skip("needs at least %d ranks", s->min_ranks);
  else
    s->run();
  int code = tsr_test_verdict(name);
  tsr_test_.scenario = NULL;
  return code;
}

/* main() of a test program: `return tsr_test_main(argc, argv, "read", SCENARIOS, n);`
 * @p program names the program in messages. argv[1] is `list`, `all`, one
 * scenario or several joined by commas. Starts and ends MPI itself. */
static inline int tsr_test_main(int argc, char **argv, const char *program,
                                const tsr_test_scenario *s, int n) {
  tsr_test_.program = program;
  tsr_test_.nranks = 1;
  if (argc < 2) return tsr_test_usage_(program, s, n);
  if (strcmp(argv[1], "list") == 0) {
    for (int i = 0; i < n; i++) printf("%s\n", s[i].name);
    return 0;
  }
  enum { MAXS = 64 };
  int pick[MAXS], npick = 0;
  if (strcmp(argv[1], "all") == 0) {
    for (int i = 0; i < n && npick < MAXS; i++) pick[npick++] = i;
  } else {
    for (const char *p = argv[1]; *p && npick < MAXS;) {
      size_t len = strcspn(p, ",");
      int found = -1;
      for (int i = 0; i < n && found < 0; i++)
        if (strlen(s[i].name) == len && strncmp(p, s[i].name, len) == 0) found = i;
      if (found < 0) {
        fprintf(stderr, "%s: no scenario '%.*s'\n", program, (int)len, p);
        return tsr_test_usage_(program, s, n);
      }
      pick[npick++] = found;
      p += len + (p[len] == ',');
    }
  }
  tsr_test_.argc = argc - 2;
  tsr_test_.argv = argv + 2;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &tsr_test_.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &tsr_test_.nranks);
  char path[1024];
  int verdicts = tsr_test_verdict_path_(path, sizeof path, "x", -1);
  if (verdicts) { /* no verdict or message left from an earlier run */
    for (int k = 0; k < npick; k++) {
      tsr_test_verdict_path_(path, sizeof path, s[pick[k]].name, tsr_test_.rank);
      remove(path);
      tsr_test_verdict_path_(path, sizeof path, s[pick[k]].name, -1);
      if (tsr_test_.rank == 0) remove(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  /* Failed if one failed; skipped only if all skipped. In verdict mode the
   * verdicts are in the files: the run itself passes unless it breaks. */
  int code = 0, ran = 0;
  for (int k = 0; k < npick; k++) {
    int c = tsr_test_run_one_(&s[pick[k]]);
    if (c == 1) code = 1;
    if (c == 0) ran = 1;
  }
  if (!code && !ran && npick > 0) code = TSR_TEST_SKIP;
  MPI_Finalize();
  return verdicts ? 0 : code;
}

#endif
