/* TESSERA_HINTS_DISPLAY=1 (docs/hints.md, docs/statistics.md): once per file,
 * the first writer prints the hints in effect, the writer ranks and the
 * MPI_Info the MPI library reports for the open file. The same hook records
 * the reported MPI-IO hints (cb_nodes, ...) for the statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "strategy/strategy.h"
#include "core/stats_format.h"
#include "core/mpiio_taken.h"

static const char *const P = "TESSERA_HINTS_DISPLAY:";

static void add_writers(tsr__sbuf *b, const int *writers, int n) {
  enum { SHOW = 32 };
  for (int i = 0; i < n && i < SHOW; i++) tsr__sbuf_printf(b, " %d", writers ? writers[i] : i);
  if (n > SHOW) tsr__sbuf_printf(b, " ... (%d more)", n - SHOW);
}

static void display(tsr_file *f, MPI_Info info, const int *writers, int nwriters,
                    const char *not_taken) {
  tsr__sbuf b = {0};
  char hints[4096];
  tsr__hints_format(&f->hints, hints, sizeof hints);
  tsr__sbuf_printf(&b, "%s file %s\n", P, f->path);
  tsr__sbuf_printf(&b, "%s   strategy %s, backend %s, format cdf%d\n", P,
                   f->strategy ? f->strategy->name : "?", f->backend->name, f->hints.format);
  tsr__sbuf_printf(&b, "%s   hints in effect: %s\n", P, hints[0] ? hints : "(defaults)");
  tsr__sbuf_printf(&b, "%s   writer ranks (%d of %d):", P, nwriters, f->ctx->size);
  add_writers(&b, writers, nwriters);
  tsr__sbuf_printf(&b, "\n");
  if (f->backend->file_info == NULL) {
    tsr__sbuf_printf(&b, "%s   MPI_Info: none (backend %s does not use MPI-IO)\n", P,
                     f->backend->name);
  } else if (info == MPI_INFO_NULL) {
    tsr__sbuf_printf(&b, "%s   MPI_Info: not available\n", P);
  } else {
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    tsr__sbuf_printf(&b, "%s   MPI_Info reported by the MPI library (%d keys):\n", P, nkeys);
    for (int k = 0; k < nkeys; k++) {
      char key[MPI_MAX_INFO_KEY + 1], val[1024];
      if (MPI_Info_get_nthkey(info, k, key) != MPI_SUCCESS) continue;
      if (tsr__info_get(info, key, val, (int)sizeof val) != 1)
        snprintf(val, sizeof val, "(unreadable)");
      tsr__sbuf_printf(&b, "%s     %s = %s\n", P, key, val);
    }
    if (not_taken && not_taken[0])
      tsr__sbuf_printf(&b, "%s   warning: the MPI-IO layer did not take the hints %s\n", P,
                       not_taken);
  }
  if (!b.failed && b.s) {
    fputs(b.s, stdout); /* one call: a file's lines stay together */
    fflush(stdout);
  }
  free(b.s);
}

int tsr__file_created(tsr_file *f, const tsr__sink *sink, const int *writers, int nwriters) {
  f->st.alignment = tsr__stats_alignment(&f->hints);
  int first = writers && nwriters > 0 ? writers[0] : 0;
  if (f->ctx->rank != first || !tsr__sink_is_open(sink)) return 0;
  const tsr__stats_env_t *env = tsr__stats_env();
  if (!env->text && !env->file && !env->display) return 0;
  MPI_Info info = tsr__sink_file_info(sink);
  tsr__sbuf why = {0};
  if (info != MPI_INFO_NULL) {
    tsr__mpiio_record(info, f->st.mpiio);
    f->st.mpiio_not_taken = tsr__mpiio_not_taken(&f->hints, info, &why);
  }
  if (env->display) display(f, info, writers, nwriters, why.failed ? "" : why.s);
  free(why.s);
  if (info != MPI_INFO_NULL) MPI_Info_free(&info);
  return 0;
}
