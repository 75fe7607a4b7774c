/* Staging, the drain half (contract in tier/drain.h): the worker. One thread
 * per process runs the jobs the tier feeds it (tier/drain_jobs.c) in
 * submission order, so a path written twice reaches its final name in the
 * order it was written. It knows no kind of job. */
#include "tier/drain.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/agree.h"
#include "core/verbose.h"
#include "core/stats.h"
#include "tessera.h"

/* The jobs' copy buffer: large enough that a copy is a few hundred system
 * calls per GB, small enough to stay in cache next to the model. Allocated
 * once per thread. */
#define COPY_BUF ((size_t)4 << 20)

typedef struct job {
  struct job *next;
  tsr__drain_job work;
} job;

static void job_free(job *j) {
  if (j->work.free) j->work.free(j->work.arg);
  free(j);
}

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
    int64_t bytes = 0;
    int rc = buf ? j->work.run(j->work.arg, buf, COPY_BUF, &bytes, msg, sizeof msg) : TSR_ENOMEM;
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
    job_free(j);
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

int tsr__drain_submit(const tsr__drain_job *work, int at_finalize) {
  job *j = calloc(1, sizeof *j);
  if (!j) {
    if (work->free) work->free(work->arg);
    return TSR_ENOMEM;
  }
  j->work = *work;
  pthread_mutex_lock(&D.mu);
  int rc = at_finalize ? 0 : start_thread();
  if (!rc) {
    if (D.tail) D.tail->next = j;
    else D.head = j;
    D.tail = j;
    pthread_cond_signal(&D.work);
  }
  pthread_mutex_unlock(&D.mu);
  if (rc) job_free(j);
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
      job_free(j);
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
