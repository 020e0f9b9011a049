/* metrics.h - what a simulation measured: per job, per tenant, overall, and
 * over time. A gp_metrics is an observer of one core (see core.h): it
 * integrates busy GPUs and queue length between events, keeps time series
 * in a fixed number of buckets (bucket width doubles as the run grows, so
 * memory stays constant), and at the end computes the summary. Every
 * figure is defined in docs/metrics.md; percentiles are nearest-rank.
 */
#ifndef GPUPOOL_METRICS_H
#define GPUPOOL_METRICS_H

#include "gpupool/core.h"

#define GP_SERIES_BUCKETS 512
/* GPU types with a series of their own (gp_metrics_type_series) */
#define GP_METRICS_MAX_TYPES 16

struct gp_tenant_summary {
    const char *name;
    uint64_t guarantee; /* GPUs it is guaranteed (0 = none) */
    uint64_t jobs, completed;
    double avg_jct_s, avg_wait_s, p99_wait_s;
    double gpu_hours;         /* GPU time held */
    double share_of_gpu_time; /* its part of all GPU time held */
    uint64_t preemptions;
    /* per-minute samples (see gp_metrics_sample): counted samples and the
     * share of them that were compliant; meaningless while samples = 0 */
    uint64_t guarantee_samples, fairshare_samples;
    double guarantee_compliance, fairshare_compliance;
    /* the same, gang-aware (docs/metrics.md): a sample short of its target
     * also counts when every waiting job asks at least twice the shortfall */
    double guarantee_compliance_gang, fairshare_compliance_gang;
    /* closed reclaim episodes of this tenant, and their delays */
    uint64_t reclaim_episodes;
    double reclaim_delay_p50_s, reclaim_delay_p99_s;
};

/* Why a tenant-sample is out of fair-share compliance (gp_metrics_explain),
 * the first that holds, in this order. */
enum gp_unfair_cause {
    GP_UNFAIR_GANG,       /* every waiting job asks >= 2 x the shortfall */
    GP_UNFAIR_IN_FLIGHT,  /* GPUs are being reclaimed for it */
    GP_UNFAIR_IDLE,       /* free GPUs would hold its smallest waiting job */
    GP_UNFAIR_NO_RECLAIM, /* tenants above their entitlement hold jobs that
                             may go now and would make room: none went */
    GP_UNFAIR_PROTECTED,  /* such jobs exist, but are protected (minimum
                             run time, preemption cap) */
    GP_UNFAIR_BIG_GANGS,  /* the others hold enough beyond their
                             entitlement, in jobs too large to take */
    GP_UNFAIR_NOTHING,    /* nothing beyond an entitlement to take */
    GP_UNFAIR_NCAUSES
};
const char *gp_unfair_cause_name(enum gp_unfair_cause c);

struct gp_summary {
    const char *policy;
    const char *placement;
    const char *shares; /* see gp_run_desc.shares; NULL = no shares */
    uint64_t cluster_gpus;
    uint64_t jobs; /* submitted (rejected included) */
    uint64_t completed;
    uint64_t rejected; /* could never fit the cluster */
    /* why they were rejected: a request larger than the cluster (or than
     * its GPUs of the requested type), a GPU type the cluster lacks, the
     * policy's admission control (oasis), any other reason; the largest
     * request rejected; the first reason given (empty when none was
     * rejected) */
    uint64_t rejected_too_large, rejected_gpu_type, rejected_policy,
        rejected_other;
    uint64_t largest_rejected_gpus;
    const char *rejected_example;
    uint64_t unfinished; /* still pending or running at the end */
    /* completed jobs with an SLO (gp_job_spec.slo_us), and those of them
     * that completed after its deadline */
    uint64_t slo_jobs, slo_missed;
    double avg_jct_s, p50_jct_s, p95_jct_s, p99_jct_s;
    double avg_wait_s, p50_wait_s, p95_wait_s, p99_wait_s;
    /* the average wait of the completed jobs by width: [0] one GPU or a
     * share of one, [1] 2 GPUs up to a node (the cluster's largest,
     * width_node_gpus), [2] more than a node; completed_width counts them
     * (an average is 0 where none completed) */
    double avg_wait_width_s[3];
    uint64_t completed_width[3];
    /* the part of those waits spent while the job's tenant was owed GPUs:
     * it held less than 95% of its fair-share entitlement (the fair-share
     * compliance test); the rest of a wait passed while the tenant held
     * its share, queued behind its own work (docs/metrics.md) */
    double avg_wait_owed_width_s[3];
    uint32_t width_node_gpus;
    double makespan_s;      /* last end - first submit */
    double gpu_utilization; /* allocated GPU-s / (GPUs x makespan) */
    double avg_queue_len;   /* time-average pending jobs over the makespan */
    /* the same over the arrival window, first to last submission (rejected
     * jobs aside; submit_span_s long; 0 while that span is 0) */
    double gpu_utilization_arrivals;
    double avg_queue_len_arrivals;
    /* the workload: GPU-work submitted per GPU-second of the submit span
     * (meaningless while offered_load_known is false: a span of 0) */
    double offered_load;
    bool offered_load_known;
    double submit_span_s; /* last - first submit, rejected jobs aside */
    uint64_t preemptions;
    double preemptions_per_job_mean; /* over jobs not rejected */
    uint64_t preemptions_per_job_max;
    double lost_gpu_s;      /* lost_work_gpu_s + restart_gpu_s */
    double lost_work_gpu_s; /* work thrown away by preemptions x GPUs */
    double restart_gpu_s;   /* GPU-seconds spent on restart overhead (and
                               on resize overhead) */
    /* jobs resized in place (gp_plan_resize): in all, to fewer GPUs, to
     * more, and on the same GPUs at a new pace or grant (retunes) */
    uint64_t resizes, shrinks, grows, retunes;
    uint64_t migrations; /* moves carried out (gp_plan_migrate) */
    /* GPU-seconds jobs held on devices other jobs held too (co-location:
     * gandiva's time-slicing and packing), beyond the devices' own */
    double colocated_gpu_s;
    /* tenancy: compliance over per-minute tenant-samples (meaningless
     * while the matching samples count is 0), reclaim episodes */
    uint64_t guaranteed_tenants; /* tenants with jobs and a guarantee */
    uint64_t guarantee_samples, fairshare_samples;
    double guarantee_compliance, fairshare_compliance;
    /* gang-aware, beside the strict ones (never instead of them) */
    double guarantee_compliance_gang, fairshare_compliance_gang;
    /* with gp_metrics_explain: the fair-share samples out of compliance by
     * cause, as shares of all counted fair-share samples (they sum to
     * 1 - fairshare_compliance); see docs/metrics.md */
    bool explained;
    double unfair[GP_UNFAIR_NCAUSES];
    uint64_t reclaim_episodes;
    double reclaim_delay_p50_s, reclaim_delay_p99_s;
    /* the episodes not served in the instant they began (idle GPUs serve
     * most at once), and their delays */
    uint64_t reclaim_episodes_waited;
    double reclaim_waited_p50_s, reclaim_waited_p99_s;
    /* lower bounds, so every result shows its distance from the limit */
    double lb_avg_jct_s;  /* mean duration: no job finishes faster */
    double lb_makespan_s; /* work conservation with arrivals */
    /* the completed work / (cluster GPUs x lb_makespan_s): the most any
     * policy could keep the GPUs busy to the makespan */
    double gpu_utilization_ceiling;
    /* busy GPUs / cluster GPUs over the time some job was waiting (0 when
     * none ever waited), and that time */
    double gpu_utilization_saturated;
    double saturated_s;
    double avg_jct_ratio;  /* avg JCT / lb_avg_jct_s */
    double makespan_ratio; /* makespan / lb_makespan_s */
    /* run-time prediction (see predict.h), over the completed jobs of known
     * duration: relative error |predicted - actual| / actual at submission */
    uint64_t predicted; /* jobs measured */
    double pred_p50_rel_err, pred_p90_rel_err;
    double pred_underestimated; /* share predicted shorter than they ran */
    uint64_t rounds;
    uint64_t events;
    double wall_s;
    struct gp_tenant_summary *tenants; /* sorted by name */
    size_t ntenants;
    /* what was simulated (see gp_metrics_describe; "" where not told) */
    const char *trace, *trace_format, *cluster_spec, *preemption;
    const char *elastic; /* gp_run_desc.elastic; NULL = not said */
    const char *parity;  /* gp_run_desc.parity; NULL = none */
    const char *command; /* gp_run_desc.command; NULL = not said */
    uint64_t seed;
    bool described;      /* gp_metrics_describe was called */
    const char *version; /* gpupool's version */
};

/* What a run simulated, for the results to carry (strings copied). */
struct gp_run_desc {
    const char *trace;        /* path or name */
    const char *trace_format; /* the reader's name */
    const char *cluster_spec; /* as given: "64x8", a preset, a file */
    const char *preemption;   /* "graceful (grace 120 s, ...)", "instant" */
    uint64_t seed;
    /* how jobs asking for a share of one GPU were placed; NULL when the
     * workload has none */
    const char *shares;
    /* which jobs were elastic and what a resize costs; NULL = none was */
    const char *elastic;
    /* the peer simulator whose world it copied (--parity); NULL = none */
    const char *parity;
    /* the command line that made the run; NULL = not said */
    const char *command;
};

/* A time series of bucket averages: bucket i covers
 * [t0 + i*width, t0 + (i+1)*width), cut at end_us: the last bucket may be
 * covered only in part, and then holds the average over that part. The
 * buckets start at the first event, 1 s wide; width doubles as needed. */
struct gp_series {
    int64_t t0_us;
    int64_t width_us;
    int64_t end_us; /* the series covers [t0_us, end_us) */
    size_t n;       /* buckets in use */
    double v[GP_SERIES_BUCKETS];
};

struct gp_metrics;

int gp_metrics_new(struct gp_metrics **out);
void gp_metrics_free(struct gp_metrics *m);
/* The observer ops to hand to the core, with the metrics as priv. */
extern const struct gp_observer_ops gp_metrics_observer;
/* The state of the core has been constant over (from_us, to_us]: take the
 * per-minute samples (fair-share and guarantee compliance) whose instants
 * (first submit + k minutes, k >= 1) fall in it. The simulator calls this
 * before it applies the events at to_us. O(1) when no minute boundary is
 * crossed, O(tenants) when one is (however many). */
void gp_metrics_sample(struct gp_metrics *m, const struct gp_core *core,
                       int64_t from_us, int64_t to_us);
/* Say what the run simulates; before gp_metrics_finish. GP_ENOMEM. */
int gp_metrics_describe(struct gp_metrics *m, const struct gp_run_desc *d);
/* Keep one record per run interval of a job (start, end, GPUs, where, why
 * it ended) for gp_metrics_write_runs_csv; off by default, as it costs
 * memory in proportion to the runs. Before the first hook. */
void gp_metrics_record_runs(struct gp_metrics *m, bool on);
/* Keep each tenant's intervals of holding its fair share and of being
 * owed GPUs (held below 95% of it) for gp_metrics_write_fairshare_csv; off
 * by default (memory in proportion to the changes). Before the first
 * sample. */
void gp_metrics_record_fairshare(struct gp_metrics *m, bool on);
/* Classify every fair-share sample out of compliance by cause
 * (gp_summary.unfair); off by default: it walks the running jobs of the
 * tenants above their entitlement at every sampled interval. Before the
 * first hook. */
void gp_metrics_explain(struct gp_metrics *m, bool on);
/* Count one simulator event (for events per second). */
void gp_metrics_count_event(struct gp_metrics *m);
/* Close the books at end_us: summary, percentiles, series. The metrics copy
 * what they need of every job (id, tenant, user, name, times, counts), so
 * the core may be freed afterwards. Once only (GP_ESTATE after); GP_ENOMEM,
 * also for an allocation that failed inside a hook. */
int gp_metrics_finish(struct gp_metrics *m, const struct gp_core *core,
                      int64_t end_us, double wall_s);

/* The readers below are meaningful after gp_metrics_finish; what they
 * return lives as long as the metrics. */
const struct gp_summary *gp_metrics_summary(const struct gp_metrics *m);
/* Sorted JCTs (seconds) of completed jobs, for CDFs. */
const double *gp_metrics_jcts(const struct gp_metrics *m, size_t *n);
/* Over time: busy GPUs (average per bucket), pending jobs, and per tenant
 * busy GPUs (index as in gp_summary.tenants; NULL past the last). */
const struct gp_series *gp_metrics_util_series(const struct gp_metrics *m);
const struct gp_series *gp_metrics_queue_series(const struct gp_metrics *m);
const struct gp_series *gp_metrics_tenant_series(const struct gp_metrics *m,
                                                 size_t tenant);
/* On a cluster of two GPU types or more: how many types have a series (the
 * first GP_METRICS_MAX_TYPES; 0 on a cluster of one type), and each
 * type's GPUs allocated over time (milli-GPUs as GPUs, average per
 * bucket), with its name and its GPUs at the end; NULL past the last. */
size_t gp_metrics_ntypes(const struct gp_metrics *m);
const struct gp_series *gp_metrics_type_series(const struct gp_metrics *m,
                                               size_t type, const char **name,
                                               uint64_t *gpus);
/* GPUs running elastic jobs lacked of what they asked (shrunk, or started
 * below their size) over time; NULL when none ever did. */
const struct gp_series *gp_metrics_shrunk_series(const struct gp_metrics *m);
/* GPUs running elastic jobs held beyond what they asked (grown, or started
 * above their size) over time; NULL when none ever did. */
const struct gp_series *gp_metrics_grown_series(const struct gp_metrics *m);

#endif
