/* When history output happens: the step of each output (every K steps, or
 * when WRF's history alarm rings), the output index of a step and the dates
 * they stand for. Apart from output.c, which writes the files, because the
 * check (check.c), which output.c calls, needs the same dates and indices. */
#include <math.h>
#include <stdio.h>

#include "bench.h"

void bench_step_date(const bench_run *run, int64_t step, char date[BENCH_DATE_LEN + 1]) {
  double secs = (double)step * run->cfg.dt;
  if (bench_date_add(run->cfg.start_date, (int64_t)(secs + 0.5), date) != 0)
    snprintf(date, BENCH_DATE_LEN + 1, "%s", run->cfg.start_date);
}

int64_t bench_output_step(const bench_config *c, int t) {
  if (c->output_every > 0) return (int64_t)t * c->output_every;
  /* The first step whose end has reached t rings of the alarm. */
  int64_t s = (int64_t)ceil((double)t * c->output_every_s / c->dt) - 1;
  if (s < 0) s = 0;
  while (bench_alarm_count(s, c->dt, c->output_every_s) < t) s++;
  while (s > 0 && bench_alarm_count(s - 1, c->dt, c->output_every_s) >= t) s--;
  return s;
}

int bench_output_index(const bench_config *c, int64_t step) {
  if (c->output_every > 0) return (int)(step / c->output_every);
  return (int)bench_alarm_count(step, c->dt, c->output_every_s);
}

int bench_output_due(const bench_config *c, int64_t step) {
  return bench_every_due(c->output_every, c->output_every_s, c->dt, step);
}

void bench_output_date(const bench_run *run, int t, char date[BENCH_DATE_LEN + 1]) {
  bench_step_date(run, bench_output_step(&run->cfg, t), date);
}
