/* The metrics of the design guide (one definition everywhere), reduced over
 * the model ranks: JSON for tools and one human line on rank 0. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static void json_string(FILE *fp, const char *s) {
  fputc('"', fp);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(fp, "\\%c", c);
    else if (c < 0x20)
      fprintf(fp, "\\u%04x", c);
    else
      fputc(c, fp);
  }
  fputc('"', fp);
}

static double ratio(double a, double b) { return b > 0.0 ? a / b : 0.0; }

int bench_metrics_report(bench_run *run) {
  MPI_Comm comm = run->grid.comm;
  const bench_timers *tm = &run->tm;
  const tsr_stats *st = &run->lib_stats;
  enum { WALL, COMPUTE, BLOCKED, TOTAL, DRAIN, WRITER, SERVER, LIB_BLOCKED, INPUT, RESTART, DEFINE,
         NMAX };
  double local[NMAX], mx[NMAX];
  local[WALL] = tm->finalize_end - tm->t_start;
  local[COMPUTE] = tm->compute_s;
  local[BLOCKED] = tm->blocked_s;
  local[TOTAL] = tm->first_put >= 0 ? tm->finalize_end - tm->first_put : 0.0;
  local[DRAIN] = tm->finalize_end - tm->last_step_end;
  local[WRITER] = st->writer_s;
  local[SERVER] = st->server_writer_s;
  local[LIB_BLOCKED] = st->blocked_s;
  local[INPUT] = tm->input_s;
  local[RESTART] = tm->restart_s;
  local[DEFINE] = tm->define_s;
  MPI_Allreduce(local, mx, NMAX, MPI_DOUBLE, MPI_MAX, comm);
  int64_t lsum[3] = {st->bytes_put, st->bytes_written, st->peak_buffer_bytes}, gsum[3], peak;
  MPI_Allreduce(lsum, gsum, 2, MPI_INT64_T, MPI_SUM, comm);
  MPI_Allreduce(&lsum[2], &peak, 1, MPI_INT64_T, MPI_MAX, comm);
  if (run->grid.rank != 0) return 0;

  double bytes = (double)run->bytes;
  double writer = mx[SERVER] > 0.0 ? mx[SERVER] : mx[WRITER];
  double io_fraction = ratio(mx[BLOCKED], mx[WALL]);
  double eff_bw = ratio(bytes, mx[BLOCKED]), write_bw = ratio(bytes, writer);
  int model = run->grid.size, io = run->world_size - run->grid.size;
  const char *check = !run->cfg.check ? NULL : run->check_failed ? "failed" : "passed";
  int rc = 0;
  if (run->cfg.json[0]) {
    FILE *fp = fopen(run->cfg.json, "w");
    if (!fp) {
      fprintf(stderr, "tessera-bench: cannot write %s\n", run->cfg.json);
      rc = -1;
    } else {
      fprintf(fp, "{\n  \"tessera_bench\": 1,\n  \"strategy\": ");
      json_string(fp, run->strategy);
      fprintf(fp, ",\n  \"hints\": ");
      json_string(fp, run->effective_hints);
      fprintf(fp, ",\n  \"ranks\": {\"model\": %d, \"io\": %d},\n", model, io);
      fprintf(fp, "  \"px\": %d,\n  \"py\": %d,\n", run->grid.px, run->grid.py);
      fprintf(fp, "  \"nx\": %d,\n  \"ny\": %d,\n  \"nz\": %d,\n", run->cfg.nx, run->cfg.ny,
              run->cfg.nz);
      fprintf(fp, "  \"steps\": %d,\n  \"output_every\": %d,\n  \"sweeps\": %d,\n", run->cfg.steps,
              run->cfg.output_every, run->cfg.sweeps);
      fprintf(fp, "  \"frames\": %d,\n  \"files\": %d,\n  \"frames_per_file\": %d,\n", run->outputs,
              run->nfiles, run->cfg.frames_per_file);
      fprintf(fp, "  \"schema\": ");
      json_string(fp, run->cfg.schema[0] ? run->cfg.schema : "default");
      fprintf(fp, ",\n  \"variables\": %d,\n  \"decomposed_variables\": %d,\n", run->schema.nvars,
              run->ndecomposed);
      fprintf(fp, "  \"wall_s\": %.6f,\n  \"compute_s\": %.6f,\n", mx[WALL], mx[COMPUTE]);
      fprintf(fp, "  \"output_blocked_s\": %.6f,\n  \"output_total_s\": %.6f,\n", mx[BLOCKED],
              mx[TOTAL]);
      fprintf(fp, "  \"drain_s\": %.6f,\n  \"io_fraction\": %.6f,\n", mx[DRAIN], io_fraction);
      fprintf(fp, "  \"bytes\": %lld,\n  \"effective_bw\": %.1f,\n  \"write_bw\": %.1f,\n",
              (long long)run->bytes, eff_bw, write_bw);
      fprintf(fp, "  \"writer_s\": %.6f,\n  \"define_s\": %.6f,\n", writer, mx[DEFINE]);
      /* --plain: the method that wrote the files without Tessera, else null. */
      fprintf(fp, "  \"plain\": ");
      if (run->cfg.plain[0])
        json_string(fp, run->cfg.plain);
      else
        fprintf(fp, "null");
      fprintf(fp, ",\n");
      /* The Hurricane Irma study's three rows: Input, Output, Restart. */
      fprintf(fp, "  \"input_s\": %.6f,\n  \"restart_s\": %.6f,\n  \"restarts\": %d,\n",
              mx[INPUT], mx[RESTART], run->restarts);
      fprintf(fp, "  \"input_bytes\": %lld,\n  \"restart_bytes\": %lld,\n",
              (long long)run->input_bytes, (long long)run->restart_bytes);
      fprintf(fp, "  \"start_step\": %d,\n", run->start_step);
      fprintf(fp,
              "  \"library\": {\"blocked_s\": %.6f, \"writer_s\": %.6f, \"server_writer_s\": %.6f, "
              "\"bytes_put\": %lld, \"bytes_written\": %lld, \"peak_buffer_bytes\": %lld},\n",
              mx[LIB_BLOCKED], mx[WRITER], mx[SERVER], (long long)gsum[0], (long long)gsum[1],
              (long long)peak);
      fprintf(fp, "  \"check\": ");
      if (check)
        json_string(fp, check);
      else
        fprintf(fp, "null");
      fprintf(fp, "\n}\n");
      if (fclose(fp) != 0) rc = -1;
    }
  }
  if (!run->cfg.quiet) {
    printf("tessera-bench: %s, %d model + %d io ranks (%dx%d), %dx%dx%d, %d steps, %d outputs in %d "
           "files: wall %.2f s, compute %.2f s, output blocked %.3f s (%.1f%%), total %.3f s, "
           "drain %.3f s, %.1f MB at %.1f MB/s effective, %.1f MB/s write\n",
           run->strategy, model, io, run->grid.px, run->grid.py, run->cfg.nx, run->cfg.ny,
           run->cfg.nz, run->cfg.steps, run->outputs, run->nfiles, mx[WALL], mx[COMPUTE],
           mx[BLOCKED], 100.0 * io_fraction, mx[TOTAL], mx[DRAIN], bytes / 1e6, eff_bw / 1e6,
           write_bw / 1e6);
    /* The study's other two rows, when the run had them. */
    if (run->cfg.input[0] || run->cfg.restart[0] || run->restarts || run->cfg.write_input)
      printf("tessera-bench: input %.3f s (from step %d), restart %.3f s (%d restart files)\n",
             mx[INPUT], run->start_step, mx[RESTART], run->restarts);
    fflush(stdout);
  }
  return rc;
}
