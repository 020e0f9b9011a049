/* metrics_priv.h - what the presentation code (output.c, report.c) reads of
 * a finished gp_metrics beyond the public summary: the per-job records, and
 * the rows of the summary table, shared by the text table and the HTML
 * report so both show the same figures under the same labels.
 */
#ifndef GPUPOOL_SIM_METRICS_PRIV_H
#define GPUPOOL_SIM_METRICS_PRIV_H

#include <stdio.h>

#include "gpupool/metrics.h"

/* A finished job, compactly: 72 bytes plus its external id's bytes (kept
 * back to back in one buffer, not interned: ids are unique). */
struct gp__job_rec {
    int64_t submit_us, first_start_us, end_us, duration_us, gpu_us;
    int64_t deadline_us;  /* its SLO's deadline; 0 = none */
    int64_t wait_owed_us; /* of its wait, while its tenant was owed GPUs */
    uint32_t ext_off;     /* into the id buffer; UINT32_MAX = none */
    uint32_t tenant;      /* index into gp_summary.tenants */
    uint32_t user, name;  /* the metrics' own string ids */
    uint32_t milli;       /* milli-GPUs it asks for */
    uint32_t preemptions, starts;
    uint8_t state; /* enum gp_job_state */
    bool final;    /* kept when the job was over (not at the run's end) */
};
_Static_assert(sizeof(struct gp__job_rec) <= 88, "job record stays compact");

/* Why a run interval ended (the runs CSV's end_reason). */
enum gp__run_end {
    GP__RUN_RUNNING, /* still running when the simulation ended */
    GP__RUN_COMPLETED,
    GP__RUN_FAILED,
    GP__RUN_TIME_LIMIT,
    GP__RUN_CANCELLED,
    GP__RUN_PREEMPTED,
    GP__RUN_START_FAILED, /* the world could not start it */
    GP__RUN_NODE_DOWN,    /* lost with its node */
    GP__RUN_RESIZED,      /* grown or shrunk: the next interval goes on */
    GP__RUN_MIGRATED,     /* moved: it starts again at once elsewhere */
};
const char *gp__run_end_name(enum gp__run_end e);

/* One run interval of a job (see gp_metrics_record_runs). */
struct gp__run_rec {
    int64_t start_us, end_us; /* end_us: the end of the run if still open */
    uint32_t job;             /* the core's job id */
    uint32_t run;             /* 1 for its first start, 2 after a restart */
    uint32_t milli;           /* milli-GPUs it held */
    uint32_t type, where;     /* the metrics' string ids: GPU type, placement */
    uint8_t end;              /* enum gp__run_end */
};

/* An interval a tenant held its fair share (at least 95% of it), or was
 * owed GPUs (held less), while entitled to some (gp_metrics_record_shares). */
struct gp__share_rec {
    int64_t start_us, end_us;
    uint32_t tenant;   /* its name: a string id of the metrics */
    uint32_t core_idx; /* the core's tenant index */
    bool owed;
};

/* The share intervals, in the order they began (n = 0 unless recorded). */
size_t gp__metrics_nshares(const struct gp_metrics *m);
const struct gp__share_rec *gp__metrics_share(const struct gp_metrics *m,
                                              size_t i);
bool gp__metrics_records_shares(const struct gp_metrics *m);

/* The run records, in start order (n = 0 unless recorded). */
size_t gp__metrics_nruns(const struct gp_metrics *m);
const struct gp__run_rec *gp__metrics_run(const struct gp_metrics *m, size_t i);
bool gp__metrics_records_runs(const struct gp_metrics *m);

/* Records are indexed by the core's job id, 0..njobs-1, after finish. */
size_t gp__metrics_njobs(const struct gp_metrics *m);
const struct gp__job_rec *gp__metrics_job(const struct gp_metrics *m, size_t i);
const char *gp__metrics_ext_id(const struct gp_metrics *m,
                               const struct gp__job_rec *r);
const char *gp__metrics_str(const struct gp_metrics *m, uint32_t id);
bool gp__metrics_finished(const struct gp_metrics *m);

/* ---- the summary table ------------------------------------------------ */

enum gp__row_kind {
    GP__ROW_COUNT, /* uint64_t, printed as an integer */
    GP__ROW_TIME,  /* seconds, shown in a unit chosen per row */
    GP__ROW_PCT,   /* a fraction, shown as a percentage */
    GP__ROW_NUM,   /* a plain number, 2 decimals */
    GP__ROW_RATIO, /* a ratio (to a lower bound, a load), 3 decimals */
    GP__ROW_GPUH,  /* GPU-seconds, shown as GPU-hours */
};

struct gp__row {
    const char *label;
    enum gp__row_kind kind;
    size_t off;       /* of the field in struct gp_summary */
    bool group_start; /* first row of a group (drawn apart) */
    /* does this run have the figure? NULL = always. A cell without it
     * shows "-", and a row no run has is left out. */
    bool (*has)(const struct gp_summary *s);
};

extern const struct gp__row gp__rows[];
extern const size_t gp__nrows;

/* Is the row shown for these runs (does any run have the figure)? */
bool gp__row_shown(const struct gp__row *row, struct gp_metrics *const *runs,
                   size_t n);

/* A time unit: its name and its length in seconds. */
struct gp__tunit {
    const char *name;
    double div_s;
};

/* "avg JCT (h)" for a row over these runs; the unit for its cells. A
 * table has one time unit (s, min or h), the one that suits the largest
 * time any of its rows shows for these runs. */
void gp__row_label(const struct gp__row *row, struct gp_metrics *const *runs,
                   size_t n, char *buf, size_t len, struct gp__tunit *unit);
/* One cell of a row for one run ("-" when the run lacks the figure). */
void gp__row_cell(const struct gp__row *row, const struct gp_summary *s,
                  struct gp__tunit unit, char *buf, size_t len);

/* The rows of the per-tenant tables, the same way. */
struct gp__trow {
    const char *label;
    enum gp__row_kind kind;
    size_t off; /* of the field in struct gp_tenant_summary */
    bool (*has)(const struct gp_summary *s, const struct gp_tenant_summary *t);
};

extern const struct gp__trow gp__trows[];
extern const size_t gp__ntrows;

/* Shown when any tenant of any run has the figure. */
bool gp__trow_shown(const struct gp__trow *row, struct gp_metrics *const *runs,
                    size_t n);
/* The label and the unit (for time rows, one for all the tenant rows,
 * from the largest time over every time row, tenant and run); one cell, "-" for
 * a tenant without the figure or for t = NULL (a tenant the run does not have).
 */
void gp__trow_label(const struct gp__trow *row, struct gp_metrics *const *runs,
                    size_t n, char *buf, size_t len, struct gp__tunit *unit);
void gp__trow_cell(const struct gp__trow *row, const struct gp_summary *s,
                   const struct gp_tenant_summary *t, struct gp__tunit unit,
                   char *buf, size_t len);

/* Does the run have more than one tenant (fair shares mean something)? */
bool gp__multi_tenant(const struct gp_summary *s);

/* Column headers: policy names, with "/placement" added to every run when
 * two runs would share a name, and "@GPUs" (the cluster's size) too when
 * two runs of one policy and placement ran on clusters of different
 * sizes. */
void gp__run_name(struct gp_metrics *const *runs, size_t n, size_t i, char *buf,
                  size_t len);

/* What the runs simulated, setting k of GP__NSETTINGS (trace, cluster,
 * placement, preemption, elastic, parity, seed, gpupool's version, the
 * command line): its
 * key, and
 * its value
 * in buf - one when every run has the same, else "run: value" per run,
 * joined by "; ". False (buf "") when no run says. */
#define GP__NSETTINGS 9
bool gp__setting(struct gp_metrics *const *runs, size_t n, size_t k,
                 const char **key, char *buf, size_t len);

/* The line saying how many jobs run i rejected and why (an example), or
 * false when it rejected none or an earlier run on a cluster of the same
 * size said it. */
bool gp__rejected_note(struct gp_metrics *const *runs, size_t n, size_t i,
                       char *buf, size_t len);

/* The k tenants holding the most GPU time (ties by name), as indexes into
 * s->tenants; returns how many were written (<= k). */
size_t gp__top_tenants(const struct gp_summary *s, size_t k, size_t *idx);
/* The index of a tenant by name in s->tenants, or (size_t)-1. */
size_t gp__tenant_find(const struct gp_summary *s, const char *name);

/* The HTML reports' shared pieces (report.c): text escaped for HTML, the
 * style sheet, mkdir -p (diag names the directory that failed). */
void gp__html_esc(FILE *f, const char *s);
extern const char gp__css[];
int gp__make_dirs(const char *dir, struct gp_diag *diag);

#endif
