/* sim.h - the simulator world: replay a workload through the core on a
 * virtual clock. Events (arrivals, completions, the core's wake-ups) are
 * taken in time order; time jumps from event to event, never in fixed
 * steps. The same workload, cluster and options give byte-identical
 * results.
 */
#ifndef GPUPOOL_SIM_H
#define GPUPOOL_SIM_H

#include "gpupool/metrics.h"
#include "gpupool/nodeevents.h"
#include "gpupool/trace.h"

/* A trace read into memory once, sorted by submit time (stable), with time
 * shifted so the first submission is at 0. Strings live in `strs`. */
struct gp_workload {
    struct gp_job_spec *jobs;
    size_t n, cap;
    struct gp_strtab strs;
    char format[32];
    char preset[32];
    uint64_t rows, skipped;
    int64_t t0_us; /* the original time of the first submission */
};

void gp_workload_init(struct gp_workload *w);
void gp_workload_fini(struct gp_workload *w);
/* Append one job (strings copied). */
int gp_workload_add(struct gp_workload *w, const struct gp_job_spec *spec);
/* Sort by submit time and shift time to start at 0. */
void gp_workload_seal(struct gp_workload *w);
/* Read a whole trace. Skips are reported on `skips` (may be NULL). */
int gp_workload_load(struct gp_workload *w, struct gp_trace *t, FILE *skips,
                     struct gp_diag *diag);

#define GP_SIM_GRACE_DEFAULT_US (120 * GP_US_PER_S)

struct gp_sim_config {
    const struct gp_policy_ops *policy;
    const struct gp_kv *policy_opts;
    size_t npolicy_opts;
    enum gp_place_model model;
    int64_t restart_cost_us;
    int64_t round_period_us;
    uint64_t seed;
    bool progress; /* show progress on stderr */
    /* multi-tenant pooling */
    const struct gp_tenant_spec *tenants;
    size_t ntenants;
    /* the preemption model, the same for every policy: graceful (signal,
     * checkpoint within the grace, stop; restart costs), or free (instant
     * and lossless, as the Tiresias, Gavel and Helios simulators assume) */
    enum gp_preemption_model {
        GP_PREEMPTION_GRACEFUL,
        GP_PREEMPTION_FREE
    } preemption;
    /* graceful: GP_TIME_NONE or 0 = the policy's default, or else
     * GP_SIM_GRACE_DEFAULT_US (the instant model is GP_PREEMPTION_FREE).
     * Ignored when free. */
    int64_t grace_us;
    int64_t ckpt_cost_us; /* a signalled job needs this to checkpoint */
    /* jobs that ask for a share of one GPU (gpu_milli) get a whole GPU
     * each, as before shares were modelled (false: they share devices) */
    bool shares_round_up;
    /* how long the world takes to carry out a start or a kill (0 = at
     * once, as every earlier result assumed) */
    int64_t actuation_delay_us;
    /* nodes that fail and come back: events from a file (NULL = none),
     * and failures drawn per node with mean mtbf_s between them (0 =
     * none), each repaired after a draw of mean mttr_s (0 = 1 h); both
     * seeded from `seed` */
    const struct gp_node_events *node_events;
    double mtbf_s, mttr_s;
    /* measured throughputs (NULL = each GPU type's relative speed) */
    const struct gp_speed_table *speed;
    /* the pace of a gang over several nodes where the table has no spread
     * figure (0 = 1: no slowdown; see gp_core_config.spread_speed) */
    double spread_speed;
    int64_t min_run_us[GP_NPRIO];
    uint32_t max_preemptions[GP_NPRIO];
    int64_t half_life_us; /* 0 = 24 h */
    enum gp_ckpt_mode { GP_CKPT_TRACE, GP_CKPT_ALL, GP_CKPT_NONE } ckpt;
    /* elastic jobs: as the trace says (its min_gpus, max_gpus), every job
     * of 2 GPUs or more elastic from ceil(elastic_min x its GPUs) (at
     * least 1) up to its GPUs, or none (every job runs at its size) */
    enum gp_elastic_mode {
        GP_ELASTIC_TRACE,
        GP_ELASTIC_ALL,
        GP_ELASTIC_NONE
    } elastic;
    double elastic_min;     /* 0 < F <= 1; 0 = 0.5 */
    int64_t resize_cost_us; /* what an elastic job pays at each resize
                               (gp_core_config.resize_cost_us) */
    /* Singularity-style transparent resize and its time-slicing overhead
     * (gp_core_config.resize_transparent, slice_overhead) */
    bool resize_transparent;
    double slice_overhead;
    /* Pollux's goodput model (gp_core_config.goodput; NULL = none): jobs
     * without a duration whose class names a model progress by it, and
     * adapt their batch sizes under a policy that says so
     * (gp_policy_ops.adapts_batch) */
    const struct gp_goodput *goodput;
    /* a second observer, told after the metrics (tests check invariants) */
    const struct gp_observer_ops *watch;
    void *watch_priv;
    const char *label; /* for progress lines */
    const struct gp_env *env;
    /* what the results say was simulated (NULL = not said) */
    const char *trace;        /* the trace's path or name */
    const char *cluster_spec; /* the cluster as given */
    const char *parity;       /* the peer simulator's world it runs in */
    const char *command;      /* the command line that asked for the run */
};

/* Run the workload on a cluster (which the run consumes) and fill metrics.
 * wall_s is measured by the caller's clock through `clock_s` (NULL = 0), so
 * this file stays testable. */
int gp_sim_run(const struct gp_workload *w, struct gp_cluster *cluster,
               const struct gp_sim_config *cfg, struct gp_metrics *metrics,
               double (*clock_s)(void), struct gp_diag *diag);

#endif
