/* A model outside the Tessera tree: writes one field through the installed library. */
#include <stdio.h>
#include <tessera.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  tsr_ctx *ctx;
  MPI_Comm model;
  tsr_decomp *d;
  tsr_file *f;
  int64_t g[1] = {4 * size}, s[1] = {4 * rank}, c[1] = {4};
  float v[4] = {1, 2, 3, 4};
  int dim, var, rc = tsr_init(MPI_COMM_WORLD, "strategy=serial", &ctx, &model);
  if (!rc) rc = tsr_decomp_box(ctx, 1, g, s, c, NULL, NULL, &d);
  if (!rc) rc = tsr_create(ctx, argc > 1 ? argv[1] : "consumer.nc", NULL, &f);
  if (!rc) rc = tsr_def_dim(f, "x", g[0], &dim);
  if (!rc) rc = tsr_def_var(f, "v", TSR_FLOAT, 1, &dim, &var);
  if (!rc) rc = tsr_enddef(f);
  if (!rc) rc = tsr_put(f, var, 0, d, v);
  if (!rc) rc = tsr_close(&f);
  if (!rc) tsr_decomp_free(&d);
  if (!rc) rc = tsr_finalize(&ctx);
  if (rank == 0)
    printf("consumer: %s (libtessera %s)\n", rc ? tsr_strerror(rc) : "ok", tsr_inq_libvers());
  MPI_Finalize();
  return rc ? 1 : 0;
}
