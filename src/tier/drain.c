/* Staging, the drain half (contract in tier/drain.h). One thread per process
 * takes staged files in submission order, so a path written twice reaches its
 * final name in the order it was written. */
#include "tier/drain.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/agree.h"
#include "core/log.h"
#include "core/stats.h"
#include "tessera.h"
#include "tier/drain_convert.h"
#include "tier/fs.h"
#include "tier/manifest.h"
#include "tier/safe_names.h"
#include "tier/stage.h"

/* Large enough that a copy is a few hundred system calls per GB, small
 * enough to stay in cache next to the model. Allocated once per thread. */
#define COPY_BUF ((size_t)4 << 20)

typedef struct job {
  struct job *next;
  char *staged, *final;
} job;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t work, idle;
  pthread_t thread;
  pid_t tid; /* the thread's kernel id, for its priority; 0 before it runs */
  int running, stop, busy;
  int urgent; /* a wait is on: the drain runs at normal priority */
  job *head, *tail;
  tsr__drain_totals tot;
  tsr__drain_totals remote; /* I/O servers' drains heard by this rank */
  char first_msg[512];
} D = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(int code, int e, char *msg, size_t msglen, const char *what, const char *path) {
  snprintf(msg, msglen, "drain: %s %s: %s", what, path, strerror(e));
  return code ? code : tsr__tier_errno_code(e);
}

static ssize_t read_full(int fd, char *buf, size_t cap) {
  size_t got = 0;
  while (got < cap) {
    ssize_t r = read(fd, buf + got, cap - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

/* Checksum and size of what @p fd holds from its start. */
static int sum_file(int fd, char *buf, size_t cap, uint64_t *sum, int64_t *size) {
  tsr__sum64 c;
  tsr__sum64_init(&c);
  if (lseek(fd, 0, SEEK_SET) != 0) return -1;
  for (;;) {
    ssize_t r = read_full(fd, buf, cap);
    if (r < 0) return -1;
    if (r == 0) break;
    tsr__sum64_update(&c, buf, (size_t)r);
  }
  *sum = tsr__sum64_final(&c);
  *size = (int64_t)c.total;
  return 0;
}

int tsr__copy_verified(const char *src, const char *final, const struct timespec *made,
                       char *buf, size_t cap, char *msg, size_t msglen) {
  size_t n = strlen(final) + sizeof TSR__STAGE_TMP_SUFFIX;
  char *tmp = malloc(n);
  int rc = 0, in = -1, out = -1;
  if (!tmp) {
    snprintf(msg, msglen, "drain: out of memory");
    return TSR_ENOMEM;
  }
  snprintf(tmp, n, "%s%s", final, TSR__STAGE_TMP_SUFFIX);
  in = open(src, O_RDONLY);
  if (in < 0) {
    rc = fail(0, errno, msg, msglen, "cannot open", src);
    goto done;
  }
  out = tsr__name_create(tmp, O_RDWR, 0666); /* read back to verify; never through a link */
  if (out < 0) {
    rc = fail(0, errno, msg, msglen, "cannot create", tmp);
    goto done;
  }
  tsr__sum64 c;
  tsr__sum64_init(&c);
  for (;;) {
    ssize_t r = read_full(in, buf, cap);
    if (r < 0) {
      rc = fail(0, errno, msg, msglen, "cannot read", src);
      goto done;
    }
    if (r == 0) break;
    tsr__sum64_update(&c, buf, (size_t)r);
    if (tsr__write_full(out, buf, (size_t)r) != 0) {
      rc = fail(0, errno, msg, msglen, "cannot write", tmp);
      goto done;
    }
  }
  /* On disk before the name says so: the source copy may go away next. */
  if (fsync(out) != 0) {
    rc = fail(0, errno, msg, msglen, "cannot sync", tmp);
    goto done;
  }
  uint64_t sum_copy;
  int64_t size_copy;
  if (sum_file(out, buf, cap, &sum_copy, &size_copy) != 0) {
    rc = fail(0, errno, msg, msglen, "cannot read back", tmp);
    goto done;
  }
  if (size_copy != (int64_t)c.total || sum_copy != tsr__sum64_final(&c)) {
    snprintf(msg, msglen, "drain: copy %s of %s does not verify (%lld of %lld bytes, checksum %s)",
             tmp, src, (long long)size_copy, (long long)c.total,
             sum_copy == tsr__sum64_final(&c) ? "equal" : "differs");
    rc = TSR_EIO;
    goto done;
  }
  int cl = close(out);
  out = -1;
  if (cl != 0) {
    rc = fail(0, errno, msg, msglen, "cannot close", tmp);
    goto done;
  }
  int oserr = 0;
  rc = made ? tsr__promote_made(tmp, final, made, &oserr, msg, msglen)
            : tsr__promote(tmp, final, &oserr, msg, msglen);
done:
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  if (rc) unlink(tmp); /* a failed copy never stays; the source always does */
  free(tmp);
  return rc;
}

int tsr__drain_copy(const char *staged, const char *final, char *buf, size_t cap,
                    char *msg, size_t msglen) {
  struct stat sb;
  int is_log = lstat(staged, &sb) == 0 && S_ISDIR(sb.st_mode); /* stage_format=log */
  struct timespec made; /* a log's converter finds it itself */
  if (!is_log && tsr__stage_made(staged, &made) < 0)
    return fail(0, errno, msg, msglen, "cannot find", staged);
  int rc = is_log ? tsr__drain_convert(staged, final, msg, msglen)
                  : tsr__copy_verified(staged, final, &made, buf, cap, msg, msglen);
  if (rc) return rc;
  size_t m = strlen(staged) + sizeof TSR__DEST_SUFFIX;
  char *marker = malloc(m);
  if (!marker) return fail(TSR_ENOMEM, ENOMEM, msg, msglen, "no memory for the marker of", staged);
  snprintf(marker, m, "%s%s", staged, TSR__DEST_SUFFIX);
  /* Its manifest lines (checksum=) once the file is complete at its place:
   * a reader of the manifest never meets a frame of a file still copying. */
  rc = tsr__manifest_from_marker(marker, final, msg, msglen);
  if (rc) {
    free(marker);
    return rc;
  }
  /* The final file is complete: now, and only now, the staged copy goes;
   * its marker last, so a crash in between leaves a marker whose staged
   * file is gone and whose destination is complete (recover removes it). */
  tsr__name_remove(staged);
  unlink(marker);
  free(marker);
  return 0;
}

static void *drain_main(void *arg) {
  (void)arg;
  /* Nice 19 for this thread only (Linux applies it per thread): the copy
   * takes the cycles the model leaves idle. */
  pid_t tid = (pid_t)syscall(SYS_gettid);
  char *buf = malloc(COPY_BUF);
  pthread_mutex_lock(&D.mu);
  if (!D.urgent) setpriority(PRIO_PROCESS, (id_t)tid, 19);
  D.tid = tid;
  for (;;) {
    while (!D.head && !D.stop) pthread_cond_wait(&D.work, &D.mu);
    if (!D.head) break;
    job *j = D.head;
    D.head = j->next;
    if (!D.head) D.tail = NULL;
    D.busy = 1;
    pthread_mutex_unlock(&D.mu);
    char msg[512] = "drain: out of memory";
    double t0 = now();
    int rc = buf ? tsr__drain_copy(j->staged, j->final, buf, COPY_BUF, msg, sizeof msg) : TSR_ENOMEM;
    int64_t bytes = 0;
    struct stat sb;
    if (!rc && stat(j->final, &sb) == 0) bytes = (int64_t)sb.st_size;
    if (rc) TSR_LOG("%s", msg);
    pthread_mutex_lock(&D.mu);
    D.tot.busy_s += now() - t0;
    if (rc) {
      D.tot.failed++;
      if (!D.tot.first_error) {
        D.tot.first_error = rc;
        snprintf(D.first_msg, sizeof D.first_msg, "%s", msg);
      }
    } else {
      D.tot.files++;
      D.tot.bytes += bytes;
    }
    D.busy = 0;
    free(j->staged);
    free(j->final);
    free(j);
    if (!D.head) pthread_cond_broadcast(&D.idle);
  }
  pthread_mutex_unlock(&D.mu);
  free(buf);
  return NULL;
}

/* Under D.mu. */
static int start_thread(void) {
  if (D.running) return 0;
  D.stop = 0;
  if (pthread_create(&D.thread, NULL, drain_main, NULL) != 0) return TSR_ENOMEM;
  D.running = 1;
  return 0;
}

int tsr__drain_submit(const char *staged, const char *final, int at_finalize) {
  job *j = calloc(1, sizeof *j);
  if (j) {
    j->staged = strdup(staged);
    j->final = strdup(final);
  }
  if (!j || !j->staged || !j->final) {
    if (j) free(j->staged), free(j->final), free(j);
    return TSR_ENOMEM;
  }
  pthread_mutex_lock(&D.mu);
  int rc = at_finalize ? 0 : start_thread();
  if (!rc) {
    if (D.tail) D.tail->next = j;
    else D.head = j;
    D.tail = j;
    pthread_cond_signal(&D.work);
  }
  pthread_mutex_unlock(&D.mu);
  if (rc) free(j->staged), free(j->final), free(j);
  return rc;
}

void tsr__drain_wait(void) {
  double t0 = now();
  pthread_mutex_lock(&D.mu);
  /* The model now waits for the drain: it is the critical path and takes
   * normal priority where the system lets a process raise it again
   * (RLIMIT_NICE, CAP_SYS_NICE); elsewhere it stays at nice 19. */
  D.urgent = 1;
  if (D.tid) setpriority(PRIO_PROCESS, (id_t)D.tid, 0);
  if (D.head && start_thread() != 0) {
    /* No thread: the queued files stay staged with their markers. */
    while (D.head) {
      job *j = D.head;
      D.head = j->next;
      D.tot.failed++;
      if (!D.tot.first_error) D.tot.first_error = TSR_ENOMEM;
      free(j->staged), free(j->final), free(j);
    }
    D.tail = NULL;
  }
  while (D.running && (D.head || D.busy)) pthread_cond_wait(&D.idle, &D.mu);
  D.tot.wait_s += now() - t0;
  D.urgent = 0;
  if (D.tid) setpriority(PRIO_PROCESS, (id_t)D.tid, 19);
  pthread_mutex_unlock(&D.mu);
}

void tsr__drain_get_totals(tsr__drain_totals *t) {
  pthread_mutex_lock(&D.mu);
  *t = D.tot;
  pthread_mutex_unlock(&D.mu);
}

void tsr__drain_add_remote(const tsr__drain_totals *t) {
  pthread_mutex_lock(&D.mu);
  D.remote.files += t->files;
  D.remote.bytes += t->bytes;
  D.remote.failed += t->failed;
  if (t->busy_s > D.remote.busy_s) D.remote.busy_s = t->busy_s;
  if (t->wait_s > D.remote.wait_s) D.remote.wait_s = t->wait_s;
  pthread_mutex_unlock(&D.mu);
}

/* Counted from one tsr_finalize to the next, so a process that initialises
 * Tessera twice reports each run's own drains. */
static void stop_and_reset(tsr__drain_totals *out, char *msg, size_t msglen) {
  pthread_mutex_lock(&D.mu);
  int running = D.running;
  D.stop = 1;
  pthread_cond_signal(&D.work);
  pthread_mutex_unlock(&D.mu);
  if (running) pthread_join(D.thread, NULL);
  pthread_mutex_lock(&D.mu);
  D.running = 0;
  D.tid = 0;
  *out = D.tot;
  /* Servers' drains ran in other processes, in parallel with this one's. */
  out->files += D.remote.files;
  out->bytes += D.remote.bytes;
  out->failed += D.remote.failed;
  if (D.remote.busy_s > out->busy_s) out->busy_s = D.remote.busy_s;
  if (D.remote.wait_s > out->wait_s) out->wait_s = D.remote.wait_s;
  snprintf(msg, msglen, "%s", D.first_msg);
  memset(&D.tot, 0, sizeof D.tot);
  memset(&D.remote, 0, sizeof D.remote);
  D.first_msg[0] = '\0';
  pthread_mutex_unlock(&D.mu);
}

int tsr__drain_finish_local(tsr__drain_totals *out, char *msg, size_t msglen) {
  tsr__drain_wait();
  tsr__drain_totals t;
  stop_and_reset(&t, msg, msglen);
  if (t.first_error) TSR_LOG("%s", msg);
  if (out) *out = t;
  return t.first_error;
}

/* Arrive at a barrier and sleep until everyone has: ranks without drains
 * would otherwise spin in the agreement's reduction (MPI polls) and take the
 * cores the drain threads of the other ranks need. */
static void sleepy_barrier(MPI_Comm comm) {
  MPI_Request req;
  if (MPI_Ibarrier(comm, &req) != MPI_SUCCESS) return;
  for (int done = 0;;) {
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) return;
    usleep(1000);
  }
}

int tsr__drain_finalize(MPI_Comm comm, char *msg, size_t msglen) {
  tsr__drain_totals t;
  msg[0] = '\0';
  int local = tsr__drain_finish_local(&t, msg, msglen);
  sleepy_barrier(comm);
  int rc = tsr__agree(comm, local);
  /* The drains ran on a few ranks; the sentence reaches every one. */
  if (rc) tsr__share_message(comm, local, rc, msg, msglen);
  const tsr__stats_env_t *env = tsr__stats_env();
  if (!env->text && !env->file) return rc;
  /* Collective whenever statistics are on (every rank decides alike); printed
   * only by a job that staged something, so runs without stage_dir add no
   * record to the statistics. */
  double x[2] = {t.wait_s, t.busy_s}, xr[2] = {0, 0};
  int64_t n[3] = {t.files, t.bytes, t.failed}, nr[3] = {0, 0, 0};
  int me = 0;
  MPI_Comm_rank(comm, &me);
  if (MPI_Reduce(x, xr, 2, MPI_DOUBLE, MPI_MAX, 0, comm) != MPI_SUCCESS ||
      MPI_Reduce(n, nr, 3, MPI_INT64_T, MPI_SUM, 0, comm) != MPI_SUCCESS || me != 0)
    return rc;
  if (nr[0] + nr[2] == 0) return rc;
  double mbps = xr[1] > 0 ? (double)nr[1] / 1e6 / xr[1] : 0.0;
  if (env->text) {
    printf("TESSERA stage: files %lld, staged bytes %lld, failed %lld, drain_s %.6f, "
           "drain busy_s %.6f, drain MB/s %.1f\n",
           (long long)nr[0], (long long)nr[1], (long long)nr[2], xr[0], xr[1], mbps);
    fflush(stdout);
  }
  if (env->file) {
    char line[512];
    int len = snprintf(line, sizeof line,
                       "{\"record\": \"stage\", \"staged_files\": %lld, \"staged_bytes\": %lld, "
                       "\"failed_files\": %lld, \"drain_s\": %.9f, \"drain_busy_s\": %.9f, "
                       "\"drain_MBps\": %.3f}\n",
                       (long long)nr[0], (long long)nr[1], (long long)nr[2], xr[0], xr[1], mbps);
    int fd = open(env->file, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      if (write(fd, line, (size_t)len) != len) TSR_LOG("stage statistics: short write");
      close(fd);
    }
  }
  return rc;
}
