/* The files of a Zarr store on disk (format=zarr, backend/zarr.c): writing a
 * file, making a directory, removing a tree without following links, and
 * retiring a replaced store off the critical path.
 *
 * A store replaced by a new one (or a temporary a killed run left) is renamed
 * to a trash name, `<final>.tessera-old-<pid>-<n>`, which is one rename, and
 * its files are removed by a background thread of this process; the process
 * waits for that thread at exit, so a run that ends normally leaves no trash.
 * A killed run may leave a trash tree: the next create of the same name
 * hands it to the thread, and `tessera clean` removes it. A trash name never
 * reads as the store's final name, so a reader never sees a half-removed
 * store under it. */
#ifndef TSR_BACKEND_ZARR_FS_H
#define TSR_BACKEND_ZARR_FS_H

#include <stddef.h>

#include "backend/backend_errors.h"

/* What a trash name adds to the final name (python/tessera/clean.py). */
#define TSR__ZARR_TRASH ".tessera-old-"

/* Remove @p path whatever it is: a tree, a file, a link (never what it
 * points to). 0 when nothing has the name; -1 with errno. */
int tsr__zarr_rm_tree(const char *path);

/* 1 when @p path is absent, a directory holding a zarr.json, or an empty
 * directory: what a create may replace. */
int tsr__zarr_replaceable(const char *path);

/* @p n bytes into a new file @p path (never through a link). */
int tsr__zarr_write_file(const char *path, const void *buf, size_t n, tsr__berr *err);

/* A directory; one that exists is fine. */
int tsr__zarr_make_dir(const char *path, tsr__berr *err);

/* Rename @p path (if anything has the name) to a fresh trash name of
 * @p final and have it removed in the background. 0, or -1 with errno when
 * the rename failed (the name still holds what it held). */
int tsr__zarr_retire(const char *path, const char *final);

/* Trash names of @p final that a killed run left, handed to the background
 * removal (those this process removes already are skipped). */
void tsr__zarr_sweep(const char *final);

#endif
