/* trace.h - reading job traces as published: gpupool CSV, Philly, Microsoft
 * ITP, Alibaba openb and PAI, Gavel, Helios, Tiresias. Files may be plain,
 * gzip, xz, bzip2 or zstd, or a tar or zip archive of such files (every
 * member of an archive that the format reads is read, in name order).
 * Rows stream: a trace is never held as text. Limits (docs/traces.md):
 * lines of at most 1 MiB, 4 GiB decoded, GP_TRACE_MAX_ROWS rows.
 *
 * Errors name the place: "philly.csv:1042: field 'duration': ...".
 */
#ifndef GPUPOOL_TRACE_H
#define GPUPOOL_TRACE_H

#include <stdio.h>

#include "gpupool/job.h"
#include "gpupool/speed.h"

/* At most this many rows (jobs and skipped rows together) in one trace: the
 * published traces hold up to a few million jobs (PAI 2020: 1.26 M; Helios,
 * four clusters: 3.4 M), and a simulation peaks at ~0.5 KiB per job
 * (bench/README.md), so 10 M rows is ~3x the largest trace and ~5 GiB of
 * memory. Past it: GP_ERANGE naming file:line. */
#define GP_TRACE_MAX_ROWS UINT64_C(10000000)

struct gp_trace_opts {
    const char *format;   /* NULL or "auto" = detect */
    const char *aux_path; /* a second table some formats need (PAI tasks) */
    bool skip_bad;        /* skip malformed rows, count them, go on */
};

struct gp_trace;

/* Open a trace. GP_EIO (cannot open, bad compression), GP_EPARSE (no
 * known format / bad header), GP_EINVAL (unknown --format). */
int gp_trace_open(struct gp_trace **out, const char *path,
                  const struct gp_trace_opts *opts, struct gp_diag *diag);
/* The same from bytes in memory (fuzzing, tests); `name` names the place in
 * errors and its suffix (.gz, .xz, .tar.gz) is only a hint: compression is
 * detected from the bytes. The buffer must outlive the trace. */
int gp_trace_open_mem(struct gp_trace **out, const void *buf, size_t len,
                      const char *name, const struct gp_trace_opts *opts,
                      struct gp_diag *diag);
/* The next job: 1 = *out filled (strings valid until the next call),
 * 0 = end of trace, < 0 = error with diag. With skip_bad, malformed rows are
 * skipped and counted instead of returned as GP_EPARSE. A row whose id,
 * tenant, user, name or GPU type holds a control character or invalid UTF-8
 * is malformed (GP_EPARSE naming file:line and the field). Errors other
 * than GP_EPARSE stick: a line over 1 MiB, a trace over GP_TRACE_MAX_ROWS
 * rows or 4 GiB decoded (GP_ERANGE), damaged compression (GP_EIO). */
int gp_trace_next(struct gp_trace *t, struct gp_job_spec *out,
                  struct gp_diag *diag);
void gp_trace_close(struct gp_trace *t);

/* The format in use ("philly-csv"), and the cluster that matches the
 * trace - a preset name ("philly") or a cluster spec ("16x4", the Pollux
 * artifact's) - or NULL. */
const char *gp_trace_format(const struct gp_trace *t);
const char *gp_trace_preset(const struct gp_trace *t);
/* Rows read, and rows skipped as malformed or not a GPU job. */
uint64_t gp_trace_rows(const struct gp_trace *t);
uint64_t gp_trace_skipped(const struct gp_trace *t);
/* Print one line per skip reason with its count and first place. */
void gp_trace_print_skips(const struct gp_trace *t, FILE *out);

/* Every known format: name and one-line summary, NULL-terminated. */
struct gp_trace_format_info {
    const char *name;
    const char *summary;
};
extern const struct gp_trace_format_info gp_trace_formats[];

/* ---- clusters ---------------------------------------------------------- */

/* Build a cluster from a spec: "NxG" or "NxG:TYPE" (N nodes of G GPUs),
 * optionally "NxG/S" with S nodes per switch; a preset name ("philly",
 * "openb", "itp", "itp01".."itp10", "tiresias-n32g4", ...); a JSON file
 * (heterogeneous nodes, GPU types, switches; see docs/cluster.md); an openb
 * node-list CSV; a Tiresias cluster-spec CSV. */
int gp_cluster_from_spec(const char *spec, struct gp_cluster **out,
                         struct gp_diag *diag);

struct gp_cluster_preset_info {
    const char *name;
    const char *summary;
};
extern const struct gp_cluster_preset_info gp_cluster_presets[];

struct gp_goodput;
/* Pollux's model profiles (goodput.h) from `path`: a directory holding a
 * directory per model (placements.csv, scalability.csv, validation-B.csv),
 * an archive of the same, or "pollux" (or NULL) for the copy bundled with
 * gpupool. Errors name file:line and the field (GP_EPARSE), or the file
 * (GP_EIO). */
int gp_goodput_load(struct gp_goodput **out, const char *path,
                    struct gp_diag *diag);

/* Gavel's measured throughputs (job type x V100/P100/K80 x scale) as a
 * speed table relative to the V100, for jobs read by the gavel reader
 * (their job_class is their job type), with its pair figures (two job
 * types packed on the same GPUs, gp_speed_table_set_pair); with `spread`,
 * also its figures for gangs spread over servers (its *_unconsolidated
 * tables), which then slow a gang placed over several nodes. The caller
 * frees it. */
int gp_trace_gavel_speeds(struct gp_speed_table **out, bool spread);

#endif
