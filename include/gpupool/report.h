/* report.h - presenting simulation results: a side-by-side table for a
 * terminal, JSON for programs, a per-job CSV, and a self-contained HTML
 * report with SVG charts. Output is deterministic: the same runs give
 * byte-identical text (wall-clock figures aside, which callers may omit).
 */
#ifndef GPUPOOL_REPORT_H
#define GPUPOOL_REPORT_H

#include <stdio.h>

#include "gpupool/metrics.h"

/* One JSON object for one run, or a JSON array when n > 1 or `array`.
 * Keys: see docs/metrics.md. `with_wall` false omits wall_s and
 * events_per_s (for golden tests that must be byte-identical). GP_ESTATE
 * for a run not finished, GP_EIO when writing fails, GP_ENOMEM. */
int gp_output_json(FILE *out, struct gp_metrics *const *runs, size_t n,
                   bool array, bool with_wall);
/* A table with one column per run. */
void gp_output_table(FILE *out, struct gp_metrics *const *runs, size_t n,
                     bool with_wall);
/* One CSV row per job: id,tenant,user,name,gpus,submit_s,first_start_s,
 * end_s,wait_s,jct_s,duration_s,preemptions,starts,gpu_s,state. Times in
 * seconds with 6 decimals, empty where never reached. GP_ESTATE before
 * gp_metrics_finish, GP_EIO when writing fails. */
int gp_metrics_write_jobs_csv(const struct gp_metrics *m, FILE *out);
/* One CSV row per run interval of a job, in the order the runs started:
 * job,tenant,run,start_s,end_s,gpus,gpu_type,placement,end_reason.
 * placement is "node3:0-3;node4:0-3" (empty in the count model);
 * end_reason is completed, failed, time_limit, cancelled, preempted, or
 * running (still running when the run ended, end_s the end). Needs
 * gp_metrics_record_runs before the run: GP_ESTATE without it or before
 * gp_metrics_finish, GP_EIO when writing fails. */
int gp_metrics_write_runs_csv(const struct gp_metrics *m, FILE *out);
/* One CSV row per interval a tenant held its fair share or was owed GPUs
 * (tenant,start_s,end_s,state: held or owed), in the order the intervals
 * began: a tenant's intervals never overlap, and a time in none of them it
 * was entitled to nothing (no demand). A job's wait_owed_s is the overlap
 * of its wait with its tenant's owed rows. Needs gp_metrics_record_fairshare
 * before the run: GP_ESTATE without it or before gp_metrics_finish,
 * GP_EIO when writing fails. */
int gp_metrics_write_fairshare_csv(const struct gp_metrics *m, FILE *out);

/* One CSV row per run, with a header line when `header`: every figure of
 * the run's JSON object that is not per tenant (what was simulated, the
 * command line, the figures), under its JSON key and in the JSON's order,
 * printed as the JSON prints it (null: empty; quoted as RFC 4180 asks).
 * docs/metrics.md defines each. GP_ESTATE for a run not
 * finished, GP_EIO when writing fails, GP_ENOMEM. */
int gp_output_summary_csv(FILE *out, struct gp_metrics *const *runs, size_t n,
                          bool header, bool with_wall);

/* The report's heading. What was simulated comes from the runs (see
 * gp_metrics_describe); trace and cluster here stand in for runs that were
 * not described. */
struct gp_report_info {
    const char *title;
    const char *trace;   /* path or name of the trace */
    const char *cluster; /* the cluster spec */
    const char *command; /* the command line that produced it */
};
/* Write DIR/index.html (DIR and its parents created if missing): summary
 * table, per-tenant table, a load sweep when the runs span more than one
 * cluster size (average wait, GPU utilization and, with tenants, fair-share
 * compliance against offered load, a line per policy), GPU utilization and
 * jobs waiting over time, JCT CDF per run, per-tenant GPU usage over time.
 * Charts are inline SVG; the file needs nothing else. info and its fields may
 * be NULL. GP_EIO (diag names the path) when a directory or the file cannot be
 * made or written. */
int gp_report_write(const char *dir, struct gp_metrics *const *runs, size_t n,
                    const struct gp_report_info *info, struct gp_diag *diag);

/* gpupool compare: several traces, each run under a set of policies. */
struct gp_compare_case {
    const char *label; /* its report is DIR/<label>/index.html */
    struct gp_metrics *const *runs;
    size_t n;
};
/* Write DIR/summary.csv (every run, each with the gpupool sim command line
 * that made it) and DIR/index.html (`command` at its head) (a table per figure,
 * a row per case and a column per policy, and a link to each case's report),
 * and print the same tables to `table` unless it is NULL. DIR is created if
 * missing. GP_EIO (diag names the path), GP_ENOMEM. */
int gp_compare_write(const char *dir, const struct gp_compare_case *cases,
                     size_t ncases, const char *command, bool with_wall,
                     FILE *table, struct gp_diag *diag);

#endif
