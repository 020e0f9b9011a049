/* reader.h - the ops table every trace format implements, and the list
 * that registers them (one line per format in GP_TRACE_READER_LIST).
 *
 * trace.c opens the input, offers the first line of the first member to
 * every probe, picks the best (or the one named by --format), then calls
 * next() until it returns 0. A reader owns its walk over tar members.
 */
#ifndef GPUPOOL_TRACE_READER_H
#define GPUPOOL_TRACE_READER_H

#include "gpupool/trace.h"
#include "trace/io.h"

/* next() may also return this: the row is valid but not a job gpupool
 * schedules (a CPU-only pod, a zero-GPU job); diag says why. It is counted
 * as skipped whether or not skip_bad is set. */
#define GP_TRACE_NOT_GPU 2

struct gp_trace_reader_ops {
    const char *name;    /* "philly-csv", as given to --format */
    const char *summary; /* one line for `gpupool formats` */
    const char *preset;  /* matching cluster: a preset name or a cluster
                            spec ("16x4"), or NULL */
    /* How well does this first line (of member `member`) match? 0 = not at
     * all, 100 = an exact header. No side effects. */
    int (*probe)(const char *line, size_t len, const char *member);
    /* The input is positioned at the first member, nothing read yet. */
    int (*open)(void **priv, struct gp_input *in,
                const struct gp_trace_opts *opts, struct gp_diag *diag);
    /* 1 = a job in *out (strings valid until the next call), 0 = end,
     * GP_TRACE_NOT_GPU = row skipped (diag says why), GP_EPARSE = a bad row,
     * already consumed (diag names file:line and the field; the caller may
     * skip it and call again), any other < 0 = fatal. */
    int (*next)(void *priv, struct gp_job_spec *out, struct gp_diag *diag);
    void (*close)(void *priv);
};

#define GP_TRACE_READER_LIST(X)                                                \
    X(gpupool)                                                                 \
    X(philly_json)                                                             \
    X(philly_csv)                                                              \
    X(itp)                                                                     \
    X(helios)                                                                  \
    X(helios_excerpt)                                                          \
    X(gavel)                                                                   \
    X(openb)                                                                   \
    X(pai)                                                                     \
    X(tiresias)                                                                \
    X(pollux)

#define X(name) extern const struct gp_trace_reader_ops gp_trace_reader_##name;
GP_TRACE_READER_LIST(X)
#undef X

/* Parse "YYYY-MM-DD HH:MM:SS" (no zone, read as UTC) into microseconds
 * since 1970. GP_EPARSE on anything else. Shared by the readers. */
int gp_trace_parse_datetime(const char *s, size_t len, int64_t *us);

#endif
