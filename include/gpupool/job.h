/* job.h - what a job is: the spec a trace or client gives, and the record
 * the core keeps (state, accounting, placement).
 */
#ifndef GPUPOOL_JOB_H
#define GPUPOOL_JOB_H

#include "gpupool/cluster.h"

/* A job as described by its submitter. Strings are borrowed: the core copies
 * what it keeps. Durations are the true run time on a reference GPU where
 * the world knows it (the simulator does); 0 = unknown. */
struct gp_job_spec {
    const char *id;     /* external id; NULL = assigned */
    const char *tenant; /* NULL = "default" */
    const char *user;
    const char *name;
    const char *gpu_type;  /* NULL or "" = any */
    const char *job_class; /* its kind, for the speed model (speed.h);
                              NULL = none: it runs at its type's speed */
    int64_t submit_us;
    int64_t duration_us;
    int64_t time_limit_us; /* 0 = none */
    /* Its service-level objective: it should complete within this long of
     * its submission (gavel's SLO objective plans for it; metrics count
     * the jobs that miss it). 0 = none. */
    int64_t slo_us;
    /* A run-time estimate given with the job (a trace's estimate_s, e.g.
     * a peer simulator's): it replaces the predictor's. 0 = none. */
    int64_t estimate_us;
    /* GPUs: a gang of `gpus` whole devices; or, with gpus 0, a share of
     * one device of gpu_milli milli-GPUs (1..999, GP_MILLI_PER_GPU to a
     * GPU), or no GPU at all (gpu_milli 0: a CPU-only part, a parameter
     * server). Shares and zero-GPU jobs are not elastic. */
    uint32_t gpus;
    uint32_t gpu_milli;
    uint32_t min_gpus, max_gpus; /* elastic range; 0 = gpus */
    uint32_t cpus;               /* for the whole job; 0 = none */
    uint64_t mem_mib;            /* for the whole job; 0 = none */
    int32_t priority;            /* larger = more important; 0 = normal */
    bool checkpointable;
    /* Its global batch size, for a model whose progress the goodput model
     * follows (goodput.h: Pollux's workloads give it); 0 = none. */
    uint32_t batch_size;
};

/* A job's life (docs/lifecycle.md):
 *
 *   PENDING -> STARTING -> RUNNING -> STOPPING -> PENDING (preempted)
 *                 |           |           '----> CANCELLED (cancelled)
 *                 |           '-> COMPLETED | FAILED (it exited)
 *                 '-> PENDING (the start failed; FAILED past the retries)
 *
 * STARTING and STOPPING hold the job's resources until the world confirms
 * (gp_core_job_started, gp_core_job_start_failed, gp_core_job_stopped,
 * gp_core_job_ended): in a real cluster a start can fail and a stop takes
 * time. A job that can never fit is REJECTED at submission. This is the
 * main path; docs/lifecycle.md has every transition (free preemption,
 * cancels in each state, exits while starting or stopping, lost nodes). */
enum gp_job_state {
    GP_JOB_PENDING,
    GP_JOB_STARTING,
    GP_JOB_RUNNING,
    GP_JOB_STOPPING,
    GP_JOB_COMPLETED,
    GP_JOB_FAILED,
    GP_JOB_CANCELLED,
    GP_JOB_REJECTED,
};
const char *gp_job_state_name(enum gp_job_state s);

/* Why a job was rejected at submission. */
enum gp_reject_cause {
    GP_REJECT_NONE,
    GP_REJECT_GPU_TYPE,  /* the cluster has no GPU of the type it asks, or
                            none of a type its class can run on (speed.h) */
    GP_REJECT_TOO_LARGE, /* more GPUs than the cluster can ever give it */
    GP_REJECT_OTHER,     /* CPUs, memory, a share no node can hold */
    GP_REJECT_POLICY,    /* the policy would never admit it (gp_job.why) */
};

/* Why a job was told to stop. */
enum gp_stop_reason {
    GP_STOP_NONE,
    GP_STOP_PREEMPT,   /* a policy preempted it: it will wait again */
    GP_STOP_CANCEL,    /* cancelled: it ends once stopped */
    GP_STOP_NODE_DOWN, /* its node went down: it is gone already */
    GP_STOP_MIGRATE,   /* a policy moves it: once stopped it starts again
                          at once on the resources held for it (dest) */
};
const char *gp_stop_reason_name(enum gp_stop_reason r);

/* The core's record of a job. Policies read it; only the core writes it. */
struct gp_job {
    uint32_t id;        /* its slot in the core; reused once it is retired */
    uint32_t gen;       /* the slot's generation (see gp_job_handle) */
    uint64_t seq;       /* submission order, from 0, never reused: ties in
                           rank go to the lower */
    const char *ext;    /* the external id, "" if none (owned by the core) */
    uint32_t tenant;    /* tenant index (see gp_core_tenant_name) */
    uint32_t user;      /* strtab id */
    uint32_t name;      /* strtab id */
    uint32_t job_class; /* strtab id; 0 = none */
    enum gp_job_state state;
    struct gp_demand demand;
    uint32_t min_gpus, max_gpus;
    int32_t priority;
    bool checkpointable;
    uint32_t batch_size; /* spec.batch_size (goodput.h); 0 = none */
    /* The world reports this run's GPUs idle (gp_core_set_job_idle): only
     * while RUNNING; it clears when the run is signalled or ends, so a new
     * run must be found idle again. */
    bool idle;
    /* Preempted because it was idle, its GPUs lent to another tenant
     * (gp_plan_preempt_idle): set from that decision until it starts
     * again. A policy makes no claim for it (docs/pooling.md). */
    bool parked;

    int64_t submit_us;
    int64_t duration_us; /* true work on a reference GPU; 0 = unknown */
    int64_t time_limit_us;
    int64_t deadline_us; /* submission + its SLO (spec.slo_us); 0 = none */

    /* accounting */
    int64_t first_start_us;  /* GP_TIME_NONE until started */
    int64_t held_since_us;   /* when this run's resources were taken */
    int64_t run_start_us;    /* start of the current run, as the world
                                confirmed it; GP_TIME_NONE while starting */
    int64_t overhead_us;     /* restart cost paid at the head of this run */
    double speed;            /* work per second on this run's placement
                                (see speed.h) */
    int64_t held_us;         /* wall time it held resources (ended runs) */
    int64_t work_done_us;    /* work finished in earlier runs */
    int64_t end_us;          /* GP_TIME_NONE until ended */
    int64_t gpu_us;          /* GPU-microseconds held so far (ended runs) */
    int64_t attained_gpu_us; /* useful GPU-microseconds done (ended runs) */
    int64_t lost_work_us;    /* work thrown away by preemptions */
    int64_t signal_us;       /* when a graceful preemption was signalled */
    int64_t queued_us;       /* when it last joined the queue: its
                                submission, or the end of the run it lost
                                (a start that failed keeps it) */
    int64_t predicted_us;    /* predicted run time at submission */
    uint32_t preemptions;
    uint32_t starts;         /* runs begun (resources taken), failed or not */
    uint32_t start_failures; /* starts the world could not carry out */
    uint32_t node_failures;  /* runs lost with their node */
    uint32_t resizes;        /* GPU count changes while it ran */
    uint32_t migrations;     /* moves by gp_plan_migrate, carried out */
    int64_t ckpt_work_us;    /* work its last checkpoint holds (reported by
                                gp_core_job_checkpointed) */
    uint32_t why;            /* strtab id: why it last failed to start,
                                or why it failed; 0 = none */
    uint8_t stop_reason;     /* enum gp_stop_reason, while STOPPING */
    uint8_t reject;          /* enum gp_reject_cause, when REJECTED */
    uint8_t requeued_by;     /* enum gp_stop_reason of its last return to
                                the queue: PREEMPT, NODE_DOWN or MIGRATE
                                (a move: it started again at once) */
    uint8_t pred_source;     /* enum gp_predict_source */
    uint32_t reclaim_for;    /* tenant a preemption reclaims GPUs for */
    uint32_t t_prev, t_next; /* in its tenant's list of running jobs */
    /* in its tenant's list of pending jobs of 2 GPUs or more that never
     * started, oldest submission first (gp_view_tenant_oldest_gang) */
    uint32_t gang_prev, gang_next;
    bool gang_listed;

    /* A job whose progress the goodput model follows (goodput.h; its
     * class names a model of gp_core_config.goodput and it came without a
     * duration). Its work is the time it would take on its reference
     * placement (its GPUs packed four to a node, its own batch size), epoch
     * by epoch; its rate is its goodput where it runs over the
     * reference's, and changes at every epoch. */
    uint32_t goodput_curve;    /* its reference curve in the core, + 1
                                  (0: not modelled) */
    uint32_t goodput_model;    /* its model (gp_goodput_find) */
    uint32_t epoch;            /* the epoch its current rate is for */
    uint32_t atomic_bsz;       /* per-GPU batch size of the current run */
    uint32_t accum_steps;      /* gradient accumulation steps */
    uint32_t max_replicas;     /* the most GPUs it has run on */
    double grad_sqr, grad_var; /* the gradient statistics it last measured
                                  (grad_var < 0: none yet) */
    int64_t rate_until_us;     /* the work at which its rate changes next
                                  (the next epoch's; INT64_MAX: none) */
    int64_t rerated_us;        /* when its rate last changed within this run
                                  (gp_core_job_rerate); GP_TIME_NONE: not
                                  since the run began */

    /* placement while running */
    struct gp_placement where;
    /* while it migrates (STOPPING, stop_reason MIGRATE, gp_job_dest_held):
     * where it starts once stopped, taken in the cluster and counted in its
     * tenant's ledger from the decision on */
    struct gp_placement dest;

    /* core-private bookkeeping (queues, plan marks) */
    uint32_t heap_pos;  /* position in its pending or running heap */
    uint32_t qclass;    /* pending shape class */
    uint32_t plan_mark; /* round in which the plan touched it */
    uint8_t plan_op;
    bool retired;
    int64_t rank[2]; /* the policy's rank, lower runs first */
};

/* A job's handle: slot and generation. It stays unambiguous after the job
 * is retired (gp_core_retire): lookups then find nothing. A job in a slot
 * never retired has the handle of its slot number. */
static inline uint64_t gp_job_handle(const struct gp_job *j)
{
    return (uint64_t)j->gen << 32 | j->id;
}

/* Is a place held for the job to move to (gp_plan_migrate)? A move's
 * destination always names a node, so it is held exactly while it has
 * slots. */
static inline bool gp_job_dest_held(const struct gp_job *j)
{
    return j->dest.nslots > 0;
}

/* When the current run's work at its current rate began: after the
 * restart overhead, or when its rate last changed (gp_job.rerated_us). */
static inline int64_t gp_job_rated_from(const struct gp_job *j)
{
    int64_t t = j->run_start_us + j->overhead_us;

    return j->rerated_us != GP_TIME_NONE && j->rerated_us > t ? j->rerated_us
                                                              : t;
}

/* Priority classes: priority > 0 is high, 0 normal, < 0 low. */
enum gp_prio_class { GP_PRIO_LOW, GP_PRIO_NORMAL, GP_PRIO_HIGH, GP_NPRIO };
static inline enum gp_prio_class gp_job_class(const struct gp_job *j)
{
    return j->priority > 0   ? GP_PRIO_HIGH
           : j->priority < 0 ? GP_PRIO_LOW
                             : GP_PRIO_NORMAL;
}

/* Running: confirmed started and not yet gone (it may be stopping). */
static inline bool gp_job_is_running(const struct gp_job *j)
{
    return j->state == GP_JOB_RUNNING ||
           (j->state == GP_JOB_STOPPING && j->run_start_us != GP_TIME_NONE);
}
/* Holds resources: starting, running or stopping. */
static inline bool gp_job_holds(const struct gp_job *j)
{
    return j->state == GP_JOB_STARTING || j->state == GP_JOB_RUNNING ||
           j->state == GP_JOB_STOPPING;
}
static inline bool gp_job_is_pending(const struct gp_job *j)
{
    return j->state == GP_JOB_PENDING;
}
static inline bool gp_job_is_done(const struct gp_job *j)
{
    return j->state >= GP_JOB_COMPLETED;
}
/* Useful work done by now, restart overhead excluded (microseconds). */
int64_t gp_job_work_at(const struct gp_job *j, int64_t now_us);
/* True remaining work (duration - work done); 0 if the duration is unknown. */
int64_t gp_job_remaining_at(const struct gp_job *j, int64_t now_us);
/* Attained service in GPU-microseconds by now (on the GPUs it holds). */
int64_t gp_job_attained_at(const struct gp_job *j, int64_t now_us);

#endif
