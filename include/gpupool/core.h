/* core.h - the scheduler core: jobs, queues, the round, policies, actions.
 *
 * One core makes every decision in every world. A world (the simulator, the
 * daemon) hands it events - a job arrived, a job finished, time passed - and
 * asks it to run a round:
 *
 *     view (read-only) -> policy writes a plan -> core validates -> apply
 *
 * The plan holds tentative starts and preemptions; the core checks every
 * action as it is added (GPUs free, gang whole, job in the right state) and
 * again as a whole, then applies it to its books and hands the world the
 * actions to carry out (gp_core_take_actions), or rolls it
 * back and reports the error (GP_EPLAN for an invalid plan, the policy's
 * own, or GP_ENOMEM). Policies never mutate state.
 *
 * Pending jobs live in heaps by the policy's rank, one heap per "shape"
 * (GPUs, type, CPUs and memory per GPU): when a shape does not fit, no job of
 * that shape does, so a round skips whole shapes and costs what it starts.
 */
#ifndef GPUPOOL_CORE_H
#define GPUPOOL_CORE_H

#include "gpupool/job.h"
#include "gpupool/predict.h"
#include "gpupool/speed.h"

struct gp_core;
struct gp_view;
struct gp_plan;
struct gp_tenant_info;

/* ---- policies ---------------------------------------------------------- */

/* Options given to a policy as key=value strings (e.g. "levels=900,3600"). */
struct gp_kv {
    const char *key;
    const char *value;
};

struct gp_policy_args {
    const struct gp_kv *opts;
    size_t nopts;
    const struct gp_env *env;
};

struct gp_policy_ops {
    const char *name;
    const char *summary;
    bool preemptive;
    /* Keep a pending queue per tenant (and shape), so the policy can walk
     * one tenant's jobs (gp_pending_iter_init_tenant) and skip a tenant. */
    bool queues_by_tenant;
    /* It divides the cluster by the tenants' guarantees: a world without
     * declared tenants cannot run it (gpupool sim refuses, exit 2). */
    bool needs_guarantees;
    /* Run rounds even while no job waits (on events, timers, periodic
     * rounds): for policies that move, resize or re-balance running jobs.
     * Otherwise a round with nothing pending does nothing. */
    bool rounds_when_idle;
    /* Starts jobs on devices other jobs hold (gp_placement.colocated): a
     * world that gives a GPU to one job at a time (Slurm) refuses it. */
    bool colocates;
    /* optional: the same, decided by its options (gavel's space sharing);
     * gp_policy_colocates asks both */
    bool (*colocates_with)(const struct gp_kv *opts, size_t nopts);
    /* Jobs the goodput model follows pick their batch size on each
     * placement (gp_core_config.goodput_adapt: Pollux co-adapts batch
     * size and allocation); otherwise they keep the one they came with. */
    bool adapts_batch;
    /* It decides GPUs per node (gp_view_fit_counts): under the `count`
     * model, which names no nodes, it can start no gang (gpupool sim
     * refuses the pair). */
    bool needs_nodes;
    /* grace period and protections used when the world does not set them
     * (see gp_core_config) */
    int64_t default_grace_us;
    int64_t default_min_run_us[GP_NPRIO];
    uint32_t default_max_preemptions[GP_NPRIO];
    /* optional; parse options, allocate private state. Unknown keys are
     * GP_EINVAL with a diag naming the key. */
    int (*init)(void **priv, const struct gp_policy_args *args,
                struct gp_diag *diag);
    void (*fini)(void *priv);
    /* The job's rank (lower runs first), called when it becomes pending and
     * when it starts. It must keep the job's order within the pending (or
     * the running) set while the job stays there; ties go to the earlier
     * submission (gp_job.seq). */
    void (*rank)(void *priv, const struct gp_job *job, int64_t now_us,
                 int64_t rank_out[2]);
    /* optional: when the rank of a running job next changes (GP_TIME_NONE =
     * never). The core re-ranks it then and runs a round. */
    int64_t (*rank_expires)(void *priv, const struct gp_job *job,
                            int64_t now_us);
    /* Decide. Reads the view, writes the plan. */
    int (*schedule)(void *priv, const struct gp_view *view,
                    struct gp_plan *plan);
    /* optional: whether this instance wants rounds while nothing waits,
     * as rounds_when_idle says for every instance (an option may turn on
     * something that moves or resizes running jobs) */
    bool (*idle_rounds)(void *priv);
    /* optional events of the policy's own, each followed by a round: a
     * timer it set (gp_plan_timer) fired, with the cookie it gave (a lease
     * ends, a period); a job ended (completed, failed, cancelled: its
     * state says which, its books closed); a node
     * changed state. They update the policy's private state only. */
    void (*on_timer)(void *priv, uint64_t cookie, int64_t now_us);
    void (*on_job_end)(void *priv, const struct gp_job *job, int64_t now_us);
    void (*on_node)(void *priv, uint32_t node, enum gp_node_state state,
                    int64_t now_us);
};

/* The registry: every built-in policy, NULL-terminated. */
extern const struct gp_policy_ops *const gp_policies[];
const struct gp_policy_ops *gp_policy_find(const char *name);

/* ---- the view: what a policy may read ---------------------------------- */

int64_t gp_view_now(const struct gp_view *v);
/* The cluster after the plan so far. Call this again rather than keep the
 * pointer: after gp_view_fit_if_freed the cluster may still count the
 * stopping jobs' GPUs as free, until this call, gp_view_fit or a plan call
 * takes them back (gp_view_free_gpus counts without them). */
const struct gp_cluster *gp_view_cluster(const struct gp_view *v);
enum gp_place_model gp_view_model(const struct gp_view *v);
/* The text of a string id of a job (gp_job.name, user, job_class); "" for
 * id 0. */
const char *gp_view_str(const struct gp_view *v, uint32_t strid);
size_t gp_view_npending(const struct gp_view *v);
/* Jobs holding resources and not stopping: running, and starting (not
 * yet confirmed by the world; never a victim, see gp_view_may_preempt). */
size_t gp_view_nrunning(const struct gp_view *v);
uint64_t gp_view_free_gpus(const struct gp_view *v); /* after the plan so far */
/* Free GPUs of one type after the plan so far (0 for an unknown type). */
uint64_t gp_view_type_free_gpus(const struct gp_view *v, uint8_t type);
/* The same in milli-GPUs, free shares of devices in use included (see
 * gp_cluster_free_milli). */
uint64_t gp_view_free_milli(const struct gp_view *v);
uint64_t gp_view_type_free_milli(const struct gp_view *v, uint8_t type);
struct gp_arena *gp_view_scratch(const struct gp_view *v);

/* Iterate pending jobs in rank order (lowest rank first), across shapes.
 * gp_pending_iter_skip_shape() drops the rest of the current job's shape
 * (use it when a job does not fit: no job of its shape fits either). An
 * iterator lives for the round it was made in (its state is in the
 * round's scratch arena, gp_view_scratch) and is independent of every
 * other: a policy may walk one tenant's queue inside a walk of another's,
 * or of the same one, and neither walk, nor a skip in it, changes the
 * other. GP_ENOMEM from an init when the arena is full. */
struct gp_pending_iter {
    const struct gp_view *view;
    void *state;
    const struct gp_job *cur;
};
int gp_pending_iter_init(struct gp_pending_iter *it, const struct gp_view *v);
const struct gp_job *gp_pending_iter_next(struct gp_pending_iter *it);
void gp_pending_iter_skip_shape(struct gp_pending_iter *it);
/* Only one tenant's jobs (the policy must set queues_by_tenant). */
int gp_pending_iter_init_tenant(struct gp_pending_iter *it,
                                const struct gp_view *v, uint32_t tenant);
/* The tenant's pending job of 2 GPUs or more that has never started
 * (gp_job.starts == 0) and was submitted first (then the lowest seq), or
 * NULL: the gang that has waited longest, in O(1) (the core keeps such
 * jobs in a list per tenant). NULL for an unknown tenant. */
const struct gp_job *gp_view_tenant_oldest_gang(const struct gp_view *v,
                                                uint32_t tenant);
/* Drop the rest of the current job's tenant (queues_by_tenant only). */
void gp_pending_iter_skip_tenant(struct gp_pending_iter *it);
/* A tenant's pending jobs that ask for exactly `gpus` GPUs (any type, CPUs
 * and memory): how many, and their waits so far summed, in seconds (each
 * from when it joined the queue, gp_job.queued_us, to now, both rounded
 * down to a whole second: a job that lost its run waits afresh). In
 * constant time per shape of the tenant, without walking its jobs
 * (queues_by_tenant only: GP_EINVAL otherwise, both set to 0). */
int gp_view_tenant_pending_wait(const struct gp_view *v, uint32_t tenant,
                                uint32_t gpus, uint64_t *njobs,
                                int64_t *wait_s);

/* Iterate running jobs from the highest rank (the best victim) down.
 * Independent of every other walk, and living for its round, as the
 * pending iterator. */
struct gp_running_iter {
    const struct gp_view *view;
    void *state;
};
int gp_running_iter_init(struct gp_running_iter *it, const struct gp_view *v);
const struct gp_job *gp_running_iter_next(struct gp_running_iter *it);

/* Would the job fit if these running jobs' GPUs were free (and those of
 * every job already stopping)? For graceful preemption, where GPUs come
 * free only when the victims stop. Asking many times in a row is cheap: the
 * stopping jobs' GPUs are counted free once for the whole run of questions
 * (see gp_view_cluster). */
int gp_view_fit_if_freed(const struct gp_view *v, const struct gp_job *job,
                         const struct gp_job *const *victims, size_t n,
                         struct gp_placement *where);
/* Is the plan's preemption graceful (a grace period is configured)? */
bool gp_view_graceful(const struct gp_view *v);
/* What one stop and resume costs a checkpoint-capable job in this world,
 * in time: its checkpoint (under graceful preemption, when the checkpoint
 * fits the grace, else the whole grace; nothing when preemption is free)
 * plus the restart cost
 * it pays on resuming. A policy that slices time in quanta keeps its
 * quantum long against it. */
int64_t gp_view_switch_cost_us(const struct gp_view *v);

/* Running (and starting) jobs in no particular order, for policies that
 * rank victims by their own measure: i < gp_view_nrunning(). Stopping
 * jobs excluded. */
const struct gp_job *gp_view_running_at(const struct gp_view *v, size_t i);

/* A tenant's running jobs (preempting ones excluded), in no particular
 * order: first, then next until NULL. */
const struct gp_job *gp_view_tenant_running(const struct gp_view *v,
                                            uint32_t tenant);
const struct gp_job *gp_view_tenant_running_next(const struct gp_view *v,
                                                 const struct gp_job *job);
/* The same for one priority class only (the walk follows the class: low,
 * normal, high), so a policy that wants the low ones first need not read
 * the rest. */
const struct gp_job *gp_view_tenant_running_in(const struct gp_view *v,
                                               uint32_t tenant,
                                               enum gp_prio_class cls);
const struct gp_job *gp_view_tenant_running_next_in(const struct gp_view *v,
                                                    const struct gp_job *job);

/* The fair-share ledger as of this round (see gp_tenant_info). */
size_t gp_view_ntenants(const struct gp_view *v);
const struct gp_tenant_info *gp_view_tenant(const struct gp_view *v,
                                            uint32_t tenant);
/* Can this job be preempted now (minimum run time, preemption cap)? */
bool gp_view_may_preempt(const struct gp_view *v, const struct gp_job *job);
/* When the job may first be preempted (now if it may already; INT64_MAX if
 * its preemption cap is reached or it is not running). */
int64_t gp_view_preemptible_at(const struct gp_view *v,
                               const struct gp_job *job);
/* Has the job (running or not) been preempted as often as its class
 * allows? Such a job, once started, runs to its end. */
bool gp_view_cap_reached(const struct gp_view *v, const struct gp_job *job);
/* Work the job would lose if preempted now (microseconds): nothing without
 * a grace period or for a checkpoint-capable job whose checkpoint fits the
 * grace (it saves at the signal); this run's work for one whose checkpoint
 * takes longer than the grace (it is stopped at the end of the grace and
 * keeps what it had when the run began); all of it for one that cannot
 * checkpoint. */
int64_t gp_view_loss_if_preempted(const struct gp_view *v,
                                  const struct gp_job *job);
int64_t gp_view_predicted_remaining(const struct gp_view *v,
                                    const struct gp_job *job);
/* A counter that moves whenever a job starts, stops or is signalled: two
 * equal readings mean the set of running jobs did not change between them
 * (a count can stay equal while one job ends and another starts). */
uint64_t gp_view_running_epoch(const struct gp_view *v);
/* Milli-GPUs held by jobs that were signalled and have not stopped yet. */
uint64_t gp_view_preempting_milli(const struct gp_view *v);
/* Running jobs the world reports idle (gp_job.idle): when 0, a policy
 * need not look for them. */
size_t gp_view_nidle(const struct gp_view *v);

/* Where would this running job fit with `gpus` GPUs of its type, its own
 * GPUs counted free, given the plan so far (for gp_plan_resize)? */
int gp_view_fit_resize(const struct gp_view *v, const struct gp_job *job,
                       uint32_t gpus, struct gp_placement *where);
/* The job on `gpus` of the GPUs it holds now (fewer than it holds, at
 * least 1): its placement with the rest let go - first from the node with
 * the most free GPUs, so what comes free joins the largest hole - for
 * gp_plan_resize to shrink it in place. `where` may point into the
 * round's scratch memory (valid until the round ends). GP_EINVAL if the
 * job is not running (confirmed), is in the plan already, holds a share
 * of a device, or `gpus` is 0 or not fewer than it holds; GP_ENOMEM. */
int gp_view_fit_shrink(const struct gp_view *v, const struct gp_job *job,
                       uint32_t gpus, struct gp_placement *where);
/* The job on `gpus` GPUs (more than it holds): its placement with free
 * devices added - on the nodes it holds first; then, except under
 * `consolidate` (where a gang stays on its nodes), on other UP nodes of
 * its type, the one with the most free devices first - for
 * gp_plan_resize to grow it in place, keeping every device it has.
 * CPUs and memory are checked when the plan takes the placement. `where`
 * may point into the round's scratch memory. GP_EINVAL as
 * gp_view_fit_shrink (for `gpus` not more than it holds), GP_ENOFIT when
 * too few devices are free there, GP_ENOMEM. */
int gp_view_fit_grow(const struct gp_view *v, const struct gp_job *job,
                     uint32_t gpus, struct gp_placement *where);
/* The job on exactly counts[i] GPUs of node nodes[i] (n distinct UP nodes
 * of one type; its own): a running job keeps its own devices there first,
 * free devices make up the rest, given the plan so far. For gp_plan_start,
 * gp_plan_resize (another count) or gp_plan_migrate (the same count
 * elsewhere): a policy that decides GPUs per node (pollux). `where` may
 * point into the round's scratch memory. GP_EINVAL under `count`, for a
 * share or zero-GPU job, a count of 0 or over the node, a node named
 * twice; GP_ENOFIT when too few devices are free there; GP_ENOMEM. */
int gp_view_fit_counts(const struct gp_view *v, const struct gp_job *job,
                       const uint32_t *nodes, const uint32_t *counts,
                       uint32_t n, struct gp_placement *where);
/* The goodput model the jobs progress by (gp_core_config.goodput), or
 * NULL. */
const struct gp_goodput *gp_view_goodput(const struct gp_view *v);
/* Where would this gang fit on one given node now, given the plan so far
 * (a running job at the size it runs at; for gp_plan_migrate)? GP_ENOFIT
 * as gp_cluster_fit_on. */
int gp_view_fit_on(const struct gp_view *v, const struct gp_job *job,
                   uint32_t node, struct gp_placement *where);
/* Where would this pending gang fit now, given the plan so far, holding
 * cpus_per_gpu CPUs and mem_mib_per_gpu MiB per GPU in place of what its
 * demand asks - on `node` only, or anywhere under the run's placement
 * model (GP_NODE_ANY)? The placement carries the grant and `pace` (the
 * factor on its rate, 0 = 1; see gp_placement), for gp_plan_start or
 * gp_plan_migrate (which refuse a grant on a share or zero-GPU job, or a
 * pace that is negative, not finite or above 1e6). GP_ENOFIT as
 * gp_view_fit; GP_EINVAL for a job of gpus 0 or such a pace; GP_ENOMEM. */
#define GP_NODE_ANY UINT32_MAX
int gp_view_fit_granted(const struct gp_view *v, const struct gp_job *job,
                        uint32_t node, uint32_t cpus_per_gpu,
                        uint64_t mem_mib_per_gpu, double pace,
                        struct gp_placement *where);

/* Co-location (gandiva's time-slicing and packing): this pending gang on
 * the devices a running (or starting) gang `host` holds, of the host's
 * size (within the
 * job's min_gpus..max_gpus) and type, both holding them at once
 * (gp_placement.colocated), the job at `pace` (0 = 1). The host's slots
 * are shared, not copied: start the job (gp_plan_start) before the host's
 * placement changes. CPUs and memory are checked when the plan takes it.
 * GP_EINVAL if the job is not pending, the host not running or in the
 * plan, either is not a gang on nodes, or pace is bad; GP_ENOFIT if the
 * sizes or types do not match. */
int gp_view_fit_colocate(const struct gp_view *v, const struct gp_job *job,
                         const struct gp_job *host, double pace,
                         struct gp_placement *where);
/* Time-slicing on any devices (gandiva): where this pending gang would
 * fit, given the plan so far, on devices each held whole by the same
 * number of jobs, fewer than `below` (gp_cluster_fit_shared: the least
 * shared first), at
 * `pace` (0 = 1), co-located. `where` may point into the round's scratch
 * memory. GP_EINVAL for a job not pending, not a gang, under `count`, or
 * a bad pace; GP_ENOFIT; GP_ENOMEM. */
int gp_view_fit_shared(const struct gp_view *v, const struct gp_job *job,
                       uint32_t below, double pace, struct gp_placement *where);
/* Where would this job fit on GPUs of one type, given the plan so far?
 * A job that asks for any type is placed on `type` only; one that asks
 * for another type is GP_EINVAL. GP_ENOFIT if nowhere there. For policies
 * that divide each GPU type among users (gandiva-fair). */
int gp_view_fit_type(const struct gp_view *v, const struct gp_job *job,
                     uint8_t type, struct gp_placement *where);
/* The pace (reference work-seconds per second, speed.h) the job would
 * run at on the GPUs it asks for, of `type`, on one node: from the core's
 * speed table where it has a figure, else the type's relative speed. For
 * policies that weigh GPU types by what a job gains from each. */
double gp_view_rate_on(const struct gp_view *v, const struct gp_job *job,
                       uint8_t type);
/* The job's measured throughput on the GPUs it asks for, of `type`, in
 * the speed table's own unit (Gavel's: steps per second), where the table
 * has a figure for its class there; else its rate (gp_view_rate_on). For
 * objectives that sum throughputs as measured (gavel's
 * max_sum_throughput_perf, as Gavel's artifact does). */
double gp_view_throughput_on(const struct gp_view *v, const struct gp_job *job,
                             uint8_t type);
/* Two jobs packed on the same `gpus` GPUs of `type` (speed.h, pair
 * figures: Gavel's co-location table): the pace of each - its throughput
 * while both run over its throughput alone there. GP_ENOENT when the
 * speed table has no figure for their classes on that type and count (no
 * table, a job without a class, an unmeasured pair). */
int gp_view_pair_paces(const struct gp_view *v, const struct gp_job *a,
                       const struct gp_job *b, uint8_t type, uint32_t gpus,
                       double *pace_a, double *pace_b);
/* The same on `gpus` GPUs of `type` (an elastic job off its size, speed.h:
 * the table's figure at that scale, else linear scaling), for policies
 * that size jobs by what more GPUs gain them (optimus). */
double gp_view_rate_at(const struct gp_view *v, const struct gp_job *job,
                       uint8_t type, uint32_t gpus);
/* Where would this job fit now, given the plan so far? GP_ENOFIT if nowhere.
 * `gpus` overrides the job's size when non-zero (elastic jobs). */
int gp_view_fit(const struct gp_view *v, const struct gp_job *job,
                uint32_t gpus, struct gp_placement *where);

/* ---- the plan: what a policy may do ------------------------------------ */

/* Start a pending job at a placement found by gp_view_fit. */
int gp_plan_start(struct gp_plan *p, const struct gp_job *job,
                  const struct gp_placement *where);
/* Preempt a running job. Without a grace period its GPUs become free for
 * the rest of the plan; with one they stay held until the job stops (see
 * gp_view_fit_if_freed). GP_EPLAN if the job is protected (minimum run
 * time, preemption cap) or not running. */
int gp_plan_preempt(struct gp_plan *p, const struct gp_job *job);
/* The same, reclaiming the GPUs for `tenant` (the ledger counts them as
 * incoming to it until the job stops). */
int gp_plan_preempt_for(struct gp_plan *p, const struct gp_job *job,
                        uint32_t tenant);
/* Preempt a running job the world reports idle (gp_job.idle) to lend its
 * GPUs to `tenant`, as gp_plan_preempt_for reclaims them (incoming to it,
 * then owed to it once the job stopped). The job is parked
 * (gp_job.parked) from the decision until it starts again; the world sees
 * an ordinary preemption (reason GP_STOP_PREEMPT, counted in
 * gp_job.preemptions). GP_EPLAN as gp_plan_preempt_for, and for a job
 * that is not idle. */
int gp_plan_preempt_idle(struct gp_plan *p, const struct gp_job *job,
                         uint32_t tenant);
/* Ask for a round at `at_us` (> now), whatever else happens by then: for
 * anything a policy waits for that no event announces (a protection that
 * expires, a lease, a period). GP_EINVAL for a time not in the future. */
int gp_plan_wake_at(struct gp_plan *p, int64_t at_us);
/* A timer of the policy's own: at at_us (> now) its on_timer hook gets
 * the cookie, then a round runs. GP_EINVAL for a time not in the future. */
int gp_plan_timer(struct gp_plan *p, int64_t at_us, uint64_t cookie);
/* Never admit a pending job: it is REJECTED (GP_REJECT_POLICY) with `why`
 * as its reason, and observers are told. GP_EPLAN if it is not pending or
 * already in the plan. */
int gp_plan_reject(struct gp_plan *p, const struct gp_job *job,
                   const char *why);
/* Grow or shrink a running elastic job in place, to where->gpus within
 * its min_gpus..max_gpus, on its GPU type (find the placement with
 * gp_view_fit_resize). It pays gp_core_config.resize_cost_us before it
 * works again; the world gets GP_ACT_RESIZE. The count may stay as it is
 * when `where` changes the job's grant (gp_placement.granted, its CPUs,
 * memory or pace): a policy that sizes CPUs and memory (synergy) retunes
 * a running job this way, on its own GPUs. GP_EPLAN if the job is not
 * running (confirmed), the count is out of range or unchanged (and the
 * grant too), the grant is malformed (see gp_view_fit_granted), or the
 * GPUs, CPUs or memory are not free. */
int gp_plan_resize(struct gp_plan *p, const struct gp_job *job,
                   const struct gp_placement *where);
/* Move a running job to `where` (found with gp_view_fit: resources free
 * now, of the job's size - the same GPUs or the same share - and a type it
 * accepts): stop it, then start it there; `where` is held for it
 * meanwhile. Under graceful preemption the job is signalled (a SIGNAL with
 * reason GP_STOP_MIGRATE) and keeps its old resources until it stops; the
 * moment the world reports it stopped (gp_core_job_stopped, with what its
 * checkpoint holds) it starts on `where` (a START action). Under the free
 * model the move is instant and loses nothing (a KILL with done set, then
 * the START). Either way it pays the restart cost, counts as a migration
 * (gp_job.migrations), not a preemption, and its tenant's ledger counts
 * `where` from the decision on. Protections (minimum run time, preemption
 * cap) do not apply: moving is the policy's choice. If a node of `where`
 * goes down before the job stops, it waits again instead. GP_EPLAN if the
 * job is not running (confirmed), under the `count` model (no nodes to
 * move between), or `where` is not free or not of its size and type. */
int gp_plan_migrate(struct gp_plan *p, const struct gp_job *job,
                    const struct gp_placement *where);
/* Has this plan already touched the job? */
bool gp_plan_has(const struct gp_plan *p, const struct gp_job *job);
/* Savepoints: undo every action after a mark (e.g. a failed victim search). */
size_t gp_plan_mark(const struct gp_plan *p);
void gp_plan_rollback(struct gp_plan *p, size_t mark);
size_t gp_plan_nactions(const struct gp_plan *p);

/* ---- tenants and the fair-share ledger --------------------------------- */

#define GP_TENANT_NONE UINT32_MAX
/* Tenants nest at most this deep (a top-level tenant is at depth 0). */
#define GP_TENANT_MAX_DEPTH 32

/* The part of a guarantee that holds on one GPU type. */
struct gp_type_guarantee {
    const char *type; /* a GPU type of the cluster */
    uint32_t gpus;
};

struct gp_tenant_spec {
    const char *name;
    const char *parent;  /* NULL = top level; nested tenants share their
                            parent's guarantee */
    double weight;       /* > 0; 0 = 1 */
    uint32_t guarantee;  /* GPUs it is guaranteed */
    uint32_t cap;        /* most GPUs it may hold, borrowed included;
                            0 = no cap */
    uint32_t lend_limit; /* GPUs of its guarantee it never lends */
    /* The guarantee split by GPU type, each part good on its type only;
     * the parts sum to `guarantee` (0 = take the sum). None: the guarantee
     * holds on any type. Only for tenants without parent or children. */
    const struct gp_type_guarantee *by_type;
    size_t nby_type;
};

/* A tenant's books on one GPU type, in milli-GPUs (GP_MILLI_PER_GPU to a
 * GPU: a job holding a share of a device counts its share). */
struct gp_tenant_type {
    uint32_t guarantee;      /* its part of guarantee_by_type, in GPUs; 0
                                without one */
    uint64_t held_milli;     /* held by its jobs on this type */
    uint64_t incoming_milli; /* being reclaimed for it, on this type */
    uint64_t outgoing_milli; /* of its own jobs that are stopping */
    uint64_t owed_milli;     /* reclaimed for it, free now, not yet used */
    /* the plan so far, during a round (0 outside one): what it starts or
     * grows for the tenant on this type, what it stops or shrinks of it,
     * what it reclaims for it (gp_plan_preempt_for) */
    uint64_t plan_starting_milli, plan_stopping_milli, plan_incoming_milli;
};

/* What the ledger knows of a tenant now. Resources held, asked and moving
 * are in milli-GPUs (GP_MILLI_PER_GPU to a GPU), so a tenant's shares of
 * devices count as what they are; what it is promised (guarantee, cap,
 * lend_limit) is in whole GPUs, and its entitlement and usage in GPUs as
 * real numbers. gp_milli_gpus() converts. */
struct gp_tenant_info {
    const char *name;
    uint32_t parent;
    double weight;
    uint32_t guarantee, cap, lend_limit; /* GPUs */
    uint64_t held_milli;    /* of its running and preempting jobs (a job
                               co-located below full pace counts that part
                               of its GPUs: its share of the device) */
    uint64_t pending_milli; /* what its pending jobs ask for */
    /* CPUs and memory, the same way (on nodes that track them; see
     * gp_cluster_up_cpus for the cluster's) */
    uint64_t held_cpus, held_mem_mib, pending_cpus, pending_mem_mib;
    /* what its running elastic jobs lack of the GPUs they asked for
     * (shrunk, or started below their size): unmet demand */
    uint64_t shrunk_milli;
    /* what its co-located jobs lack of their GPUs (the part their pace
     * leaves to the jobs they share with): unmet demand too */
    uint64_t shared_milli;
    uint64_t demand_milli; /* held + pending + shrunk + shared */
    double entitled;       /* GPUs: its guarantee up to its demand, plus a
                              weighted share of what remains, water-filled
                              over tenants with unmet demand, <= cap */
    double usage_gpu_s;    /* past GPU use, decayed with the half-life */
    uint32_t npending, nrunning;
    uint64_t incoming_milli; /* being reclaimed for it (preempting) */
    uint64_t outgoing_milli; /* of its own jobs that are stopping */
    uint64_t owed_milli;     /* reclaimed for it, free now, not yet used by
                                it (kept for it until the end of the round
                                after its last victim stopped) */
    bool typed; /* its guarantee is split by GPU type (by_type[].guarantee) */
    /* the ledger following the plan, during a round (0 outside one): what
     * the plan so far starts (or grows) for it, stops (or shrinks) of it,
     * and reclaims for it. What it will hold once the plan applies and its
     * stopping jobs are gone is gp_tenant_planned_milli(). */
    uint64_t plan_starting_milli, plan_stopping_milli, plan_incoming_milli;
    const struct gp_tenant_type *by_type; /* per GPU type index, for every
                                             type of the cluster */
};

/* Milli-GPUs as GPUs (exact for whole GPUs). */
static inline double gp_milli_gpus(uint64_t milli)
{
    return (double)milli / GP_MILLI_PER_GPU;
}
/* What a tenant will hold once the plan so far applies and its stopping
 * jobs are gone, in milli-GPUs (on one type: gp_tenant_type_planned). */
static inline int64_t gp_tenant_planned_milli(const struct gp_tenant_info *t)
{
    return (int64_t)(t->held_milli - t->outgoing_milli +
                     t->plan_starting_milli - t->plan_stopping_milli);
}
static inline int64_t gp_tenant_type_planned(const struct gp_tenant_type *t)
{
    return (int64_t)(t->held_milli - t->outgoing_milli +
                     t->plan_starting_milli - t->plan_stopping_milli);
}
/* Being reclaimed for it, with what the plan so far reclaims. */
static inline int64_t gp_tenant_incoming_milli(const struct gp_tenant_info *t)
{
    return (int64_t)(t->incoming_milli + t->plan_incoming_milli);
}

/* Declare a tenant before its jobs arrive (jobs of undeclared tenants get
 * a tenant of weight 1 and no guarantee). GP_EEXIST, GP_ENOENT (parent, a
 * GPU type the cluster lacks), GP_EINVAL (weight, cap below guarantee, lend
 * limit above guarantee, nested GP_TENANT_MAX_DEPTH deep or more, a per-type
 * guarantee that is repeated, larger than its type, not summing to the
 * guarantee, or on a nested tenant). */
int gp_core_add_tenant(struct gp_core *core, const struct gp_tenant_spec *spec,
                       struct gp_diag *diag);
/* Change a declared tenant's promise at run time (the daemon's PATCH
 * /v1/tenants/NAME): spec->name names it, and its weight, guarantee, cap
 * and lend_limit replace the old ones (weight 0 = 1), checked as
 * gp_core_add_tenant checks them. Its place in the tree stays: spec->parent
 * must be NULL or its parent's name. A tenant whose guarantee is split by
 * GPU type keeps its parts: spec->guarantee must be their sum (or 0) and
 * spec->by_type empty. GP_ENOENT (not declared), GP_EINVAL (anything
 * else); on an error nothing changes. The ledger is recomputed when next
 * read; running jobs are not touched: a smaller guarantee or cap acts
 * through the policy's next rounds (reclaims by graceful preemption, no
 * starts beyond it), a larger one by what they may start. */
int gp_core_update_tenant(struct gp_core *core,
                          const struct gp_tenant_spec *spec,
                          struct gp_diag *diag);
/* The ledger now (entitlements are recomputed when stale). */
const struct gp_tenant_info *gp_core_tenant_info(const struct gp_core *core,
                                                 uint32_t tenant);
/* Find a tenant by name: GP_ENOENT if unknown. */
int gp_core_find_tenant(const struct gp_core *core, const char *name,
                        uint32_t *tenant);

/* ---- actions: what the world carries out ------------------------------ */

/* What the core decided, for the world to carry out. Every call into the
 * core may add actions (a round, a cancel, a grace period that ran out);
 * the world takes them with gp_core_take_actions, persists them if it
 * must (the daemon commits them before acting), carries them out and
 * reports the outcomes: gp_core_job_started / _start_failed for a start,
 * gp_core_job_stopped / _ended for a signal or a kill. */
enum gp_action_kind {
    GP_ACT_START,  /* start the job on job->where */
    GP_ACT_SIGNAL, /* ask it to checkpoint and stop by deadline_us */
    GP_ACT_KILL,   /* stop it now, saving nothing more */
    GP_ACT_RESIZE, /* an elastic job now runs on job->where (grown or
                      shrunk in place; nothing to report back) */
};
const char *gp_action_kind_name(enum gp_action_kind k);

struct gp_action {
    enum gp_action_kind kind;
    uint64_t job;               /* its handle */
    enum gp_stop_reason reason; /* SIGNAL, KILL: why it stops */
    int64_t at_us;              /* when the core decided */
    int64_t deadline_us;        /* SIGNAL: when the core kills it */
    /* KILL under the free preemption model (grace 0): the core already
     * took the job back (pending again, nothing lost); the world stops it
     * and reports nothing */
    bool done;
};

/* Observers see every change (metrics, logs, the daemon's store). All
 * hooks are optional. */
struct gp_observer_ops {
    void (*submitted)(void *priv, const struct gp_core *core,
                      const struct gp_job *job, int64_t now_us);
    void (*started)(void *priv, const struct gp_core *core,
                    const struct gp_job *job, int64_t now_us);
    void (*preempted)(void *priv, const struct gp_core *core,
                      const struct gp_job *job, int64_t now_us);
    void (*ended)(void *priv, const struct gp_core *core,
                  const struct gp_job *job, int64_t now_us);
    void (*rejected)(void *priv, const struct gp_core *core,
                     const struct gp_job *job, const char *why, int64_t now_us);
    /* an elastic job changed its GPU count in place (job->where is the
     * new placement) */
    void (*resized)(void *priv, const struct gp_core *core,
                    const struct gp_job *job, uint32_t old_gpus,
                    int64_t now_us);
    /* a start the world could not carry out; the job waits again (or has
     * failed, past its retries: `ended` follows) */
    void (*start_failed)(void *priv, const struct gp_core *core,
                         const struct gp_job *job, const char *why,
                         int64_t now_us);
    /* called once at the end of each round that changed anything */
    void (*round)(void *priv, const struct gp_core *core, int64_t now_us);
};

/* ---- the core ---------------------------------------------------------- */

struct gp_core_config {
    const struct gp_policy_ops *policy;
    const struct gp_kv *policy_opts;
    size_t npolicy_opts;
    enum gp_place_model model;
    int64_t restart_cost_us; /* paid by a job each time it resumes */
    int64_t round_period_us; /* 0 = rounds on events only */
    /* what an elastic job pays in time each time it is resized */
    int64_t resize_cost_us;
    /* Singularity-style transparent resize (speed.h): an elastic job keeps
     * its world size, its asked GPUs; on g fewer devices its replicas are
     * time-sliced, at g / asked of its asked-size rate times (1 -
     * slice_overhead), and on more it gains nothing. false: a resize
     * changes the world size (the speed table's figure at g). */
    bool resize_transparent;
    double slice_overhead; /* 0 <= f < 1 */
    /* starts a job may fail before it fails for good (0 = 3) */
    uint32_t max_start_failures;
    const struct gp_observer_ops *observer;
    void *observer_priv;
    const struct gp_env *env;
    /* graceful preemption: how long a signalled job may take to stop;
     * 0 = preemption is instant and loses nothing; GP_TIME_NONE (-1) = the
     * policy's default_grace_us */
    int64_t grace_us;
    /* what a checkpoint-capable job needs to save its work once signalled;
     * one longer than the grace is cut off and saves nothing of its run */
    int64_t ckpt_cost_us;
    /* protections per priority class (index enum gp_prio_class): no
     * preemption before min_run_us of the current run, at most
     * max_preemptions in a job's life (0 = no cap). -1 (min_run_us) or
     * UINT32_MAX (max_preemptions) = the policy's default. */
    int64_t min_run_us[GP_NPRIO];
    uint32_t max_preemptions[GP_NPRIO];
    /* half-life of the decay of past usage (0 = 24 hours) */
    int64_t usage_half_life_us;
    /* a job's GPU-time (gp_job.gpu_us) counts from its confirmed start
     * (gp_core_job_started), not from the decision to start it: for a
     * world whose starts take a while (Slurm's scheduling pass) and whose
     * own accounting counts from the start */
    bool charge_from_start;
    /* measured throughputs per job class, GPU type and count (NULL = each
     * type's relative speed, see speed.h); borrowed: it must outlive the
     * core */
    const struct gp_speed_table *speed;
    /* the pace of a gang placed over more than one node, relative to one
     * node, where the speed table has no spread figure for it (0 = 1: no
     * slowdown) */
    double spread_speed;
    /* the run-time predictor's settings (NULL = defaults) */
    const struct gp_predictor_config *predictor;
    /* Pollux's goodput model (goodput.h; NULL = none): a job submitted
     * without a duration whose class names one of its models progresses as
     * the model says, its rate changing at every epoch (the world calls
     * gp_core_job_rerate when gp_job.rate_until_us is reached). Borrowed:
     * it must outlive the core. */
    const struct gp_goodput *goodput;
    /* such jobs pick the batch size with the most goodput on each
     * placement (Pollux's agent) instead of keeping the one they came
     * with; set for a policy that adapts batch sizes (pollux) */
    bool goodput_adapt;
};

/* The core takes ownership of the cluster. */
int gp_core_new(struct gp_core **out, struct gp_cluster *cluster,
                const struct gp_core_config *cfg, struct gp_diag *diag);
void gp_core_free(struct gp_core *core);

/* A job arrives. A job that can never fit is kept as GP_JOB_REJECTED (and
 * observers told why); that is not an error. GP_EINVAL for a bad spec. */
int gp_core_submit(struct gp_core *core, const struct gp_job_spec *spec,
                   int64_t now_us, uint64_t *job, struct gp_diag *diag);
/* Take the actions decided since the last take, oldest first: *out points
 * at them until the next take. Returns how many. */
size_t gp_core_take_actions(struct gp_core *core, const struct gp_action **out);

/* The world reports. Each returns GP_ENOENT for an unknown job and
 * GP_ESTATE when the job is not in a state the report fits.
 *
 * A start was carried out: STARTING -> RUNNING; its run begins now. (A job
 * cancelled while starting stays STOPPING.) */
int gp_core_job_started(struct gp_core *core, uint64_t job, int64_t now_us);
/* A start could not be carried out: the job's resources are released and
 * it waits again, `why` kept as its reason; after max_start_failures it
 * fails. A job cancelled while starting is cancelled. */
int gp_core_job_start_failed(struct gp_core *core, uint64_t job,
                             const char *why, int64_t now_us);
/* The job exited on its own: COMPLETED or FAILED (or CANCELLED, if the
 * world cancelled it). From STARTING, RUNNING or STOPPING. */
int gp_core_job_ended(struct gp_core *core, uint64_t job, enum gp_job_state how,
                      int64_t now_us);
/* A stopping job is gone: its resources are free. Preempted, it is
 * pending again with `saved_work_us` of work kept (what its checkpoint
 * holds; the rest is lost); cancelled, it is CANCELLED. */
int gp_core_job_stopped(struct gp_core *core, uint64_t job,
                        int64_t saved_work_us, int64_t now_us);
/* A running job whose rate the goodput model follows reached the work
 * at which its rate changes (gp_job.rate_until_us: a new epoch): the work
 * so far is booked and the rate for the new epoch (and, under
 * goodput_adapt, a new batch size) taken; rate_until_us moves to the next
 * epoch. Nothing restarts. GP_ESTATE unless it is RUNNING and modelled. */
int gp_core_job_rerate(struct gp_core *core, uint64_t job, int64_t now_us);
/* Cancel a job. A pending one is cancelled at once; one that holds
 * resources is told to stop (a KILL action) and is cancelled when the
 * world reports it stopped. GP_ESTATE for a job already ended. */
int gp_core_cancel(struct gp_core *core, uint64_t job, int64_t now_us);
/* The world saw a running job's GPUs idle for a while (idle) or in use
 * again (!idle): gp_job.idle, which a policy may act on (the pool's
 * lend_idle). A change makes a round due. The flag clears by itself when
 * the run is signalled or ends. GP_ESTATE unless the job is RUNNING. */
int gp_core_set_job_idle(struct gp_core *core, uint64_t job, bool idle,
                         int64_t now_us);

/* ---- restoring after a restart ----------------------------------------- */

/* A world that keeps its own records (the daemon's store) rebuilds the
 * core after a restart: it declares the cluster and tenants, restores the
 * ledger's usage, teaches the predictor the history, submits every job not
 * yet ended again (gp_core_submit, in submission order, with their own
 * submit times), restores what each had done, and adopts those still
 * running on the devices they hold. Then it runs a round as usual.
 *
 * What a job had done before the restart. Times are the world's clock;
 * first_start_us and queued_us may be GP_TIME_NONE (never started; the
 * submission). */
struct gp_job_restore {
    int64_t first_start_us, queued_us;
    int64_t work_done_us; /* work its checkpoint holds */
    int64_t gpu_us, attained_gpu_us, held_us, lost_work_us;
    uint32_t preemptions, starts, start_failures, node_failures;
    int64_t predicted_us; /* 0 = predict it again */
    bool parked;          /* preempted while idle, not started since
                             (gp_job.parked) */
};
/* Restore the accounting of a job just submitted again (pending, never
 * started in this core). GP_ENOENT, GP_ESTATE, GP_EINVAL (a negative
 * figure); diag names the job. */
int gp_core_restore_job(struct gp_core *core, uint64_t job,
                        const struct gp_job_restore *r, struct gp_diag *diag);
/* A pending job is running already on `where` (its node, devices or share,
 * as the world placed it before the restart), its run begun at
 * run_start_us: it becomes RUNNING there with nothing to carry out (no
 * START action), booked to its tenant, and the `started` observer is told.
 * GP_ESTATE (not pending), GP_EINVAL (the placement does not match what it
 * asks, or the run starts in the future), and the errors of
 * gp_cluster_take when the devices are not free or not there. Nothing
 * changes on an error. */
int gp_core_adopt(struct gp_core *core, uint64_t job,
                  const struct gp_placement *where, int64_t run_start_us,
                  int64_t now_us, struct gp_diag *diag);
/* A tenant's decayed past usage as it was at at_us (<= the core's now);
 * before any of its jobs is adopted (GP_ESTATE otherwise). GP_EINVAL for
 * an unknown tenant or a negative usage. */
int gp_core_set_tenant_usage(struct gp_core *core, uint32_t tenant,
                             double usage_gpu_s, int64_t at_us);
/* Teach the predictor that a job of this tenant, user, name and GPU count
 * ran actual_us (> 0): the history a restarted world replays. GP_EINVAL,
 * GP_ENOMEM. */
int gp_core_learn(struct gp_core *core, const char *tenant, const char *user,
                  const char *name, uint32_t gpus, int64_t actual_us);

/* ---- a live cluster -------------------------------------------------- */

/* The world reports its nodes (docs/cluster.md, "Node states"). Capacity,
 * the ledger and whether a job can fit count the nodes that are UP.
 *
 * A node joins (UP unless spec->state says otherwise); a new GPU type
 * comes with it. Errors as gp_cluster_add_node. */
int gp_core_add_node(struct gp_core *core, const struct gp_node_spec *spec,
                     int64_t now_us, struct gp_diag *diag);
/* A node goes UP, DRAIN (nothing new is placed on it; its jobs run on) or
 * DOWN (its jobs are lost: each is requeued, not counted a preemption,
 * keeping what its last checkpoint holds if it can checkpoint; the world
 * gets a KILL with done set for each, to close its records). Under the
 * `count` model, where jobs are on no node, the most recently placed jobs
 * of the node's type are lost until what is held fits the UP GPUs.
 * Errors as gp_cluster_set_node_state. */
int gp_core_set_node_state(struct gp_core *core, uint32_t node,
                           enum gp_node_state state, int64_t now_us,
                           struct gp_diag *diag);
/* A node leaves for good: only once nothing is allocated on it
 * (GP_ESTATE otherwise). */
int gp_core_remove_node(struct gp_core *core, uint32_t node, int64_t now_us,
                        struct gp_diag *diag);
/* The world lost one job's run without a node event (a resource manager
 * requeued it by itself after a node failure it has since recovered
 * from): the job is requeued from its checkpoint as if its node had gone
 * down (a node failure, not a preemption). GP_ESTATE unless it holds
 * resources. */
int gp_core_job_lost(struct gp_core *core, uint64_t job, int64_t now_us);
/* A running job saved a checkpoint holding `saved_work_us` of work (at
 * most its work by now): a lost node costs it only what came after. */
int gp_core_job_checkpointed(struct gp_core *core, uint64_t job,
                             int64_t saved_work_us, int64_t now_us);
/* Why a pending job waits, when the core knows: its shape cannot fit the
 * UP nodes (with what it needs and what they have), or its last start
 * failed; NULL otherwise. Valid until the next call into the core. */
const char *gp_core_pending_reason(const struct gp_core *core,
                                   const struct gp_job *job);

/* Fire the timers due by now (rank changes, grace periods that ran out),
 * which may add actions, without running a round. gp_core_round does this
 * too; a world calls it first when it wants to carry out those actions
 * before the round decides (the simulator does, so that a job killed at
 * the end of its grace is gone before the policy looks). */
void gp_core_advance(struct gp_core *core, int64_t now_us);

/* The earliest time the core wants to be woken: a periodic round, a rank
 * change, the end of a grace period (a kill), a policy's own wake-up
 * (gp_plan_wake_at); possibly a timer that turns out stale (its job moved
 * on), which costs an empty call. GP_TIME_NONE when it has no wish. */
int64_t gp_core_next_wakeup(const struct gp_core *core);
/* Run a round at now if anything changed or a wake-up is due. Returns the
 * number of plan actions applied (>= 0), or an error with nothing applied:
 * GP_EPLAN (the plan was invalid), the policy's own error, or GP_ENOMEM. */
int gp_core_round(struct gp_core *core, int64_t now_us);

const struct gp_cluster *gp_core_cluster(const struct gp_core *core);
/* The live job of a handle; NULL for an unknown or retired one. */
const struct gp_job *gp_core_job(const struct gp_core *core, uint64_t job);
/* The newest live job with this external id: GP_ENOENT if none. */
int gp_core_find_job(const struct gp_core *core, const char *ext_id,
                     uint64_t *job);
/* The world is done with an ended job (it keeps the history it needs):
 * the job leaves the core and its handle finds nothing from now on.
 * GP_ESTATE unless the job has ended; GP_ENOENT for an unknown handle. */
int gp_core_retire(struct gp_core *core, uint64_t job);
/* Job slots made (handles of slots never retired are 0 .. njobs - 1),
 * jobs alive (not retired), and jobs ever submitted. */
size_t gp_core_njobs(const struct gp_core *core);
size_t gp_core_nalive(const struct gp_core *core);
uint64_t gp_core_nsubmitted(const struct gp_core *core);
size_t gp_core_npending(const struct gp_core *core);
size_t gp_core_nrunning(const struct gp_core *core);
/* Milli-GPUs held by jobs (starting, running, stopping): in all (a device
 * co-located jobs share counted once) and by one tenant (each of its jobs
 * counts what it holds, shared or not). */
uint64_t gp_core_busy_milli(const struct gp_core *core);
/* Milli-GPUs running elastic jobs lack of the GPUs they asked for (shrunk,
 * or started below their size), over every tenant. */
uint64_t gp_core_shrunk_milli(const struct gp_core *core);
/* Milli-GPUs running elastic jobs hold beyond the GPUs they asked for
 * (grown, or started above their size: optimus, pollux). */
uint64_t gp_core_grown_milli(const struct gp_core *core);
size_t gp_core_ntenants(const struct gp_core *core);
const char *gp_core_tenant_name(const struct gp_core *core, uint32_t tenant);
uint64_t gp_core_tenant_busy_milli(const struct gp_core *core, uint32_t tenant);
const char *gp_core_str(const struct gp_core *core, uint32_t strid);
const struct gp_policy_ops *gp_core_policy(const struct gp_core *core);
/* Give the running policy a new set of options, as if the core had been
 * made with them: the policy starts afresh with them (what it learned as
 * it ran - failed reclaims remembered, waits averaged - starts over),
 * every waiting and running job is ranked again, the policy's timers are
 * dropped and a round is due. Bad options are GP_EINVAL with a diag
 * naming the key, and change nothing. The options are read during the
 * call only. */
int gp_core_set_policy_options(struct gp_core *core, const struct gp_kv *opts,
                               size_t nopts, struct gp_diag *diag);
enum gp_place_model gp_core_model(const struct gp_core *core);
int64_t gp_core_restart_cost_us(const struct gp_core *core);
int64_t gp_core_grace_us(const struct gp_core *core);
/* Predicted remaining run time of a job now (microseconds, >= 1 s): its
 * prediction less the work done, but at least half the work done (a job
 * that outlived its prediction is expected to keep going), at the speed of
 * its placement while it holds one. */
int64_t gp_core_predicted_remaining(const struct gp_core *core,
                                    const struct gp_job *job, int64_t now_us);
/* Outside a round (observers, metrics): a tenant's running jobs of one
 * priority class (stopping ones excluded), first then next until NULL;
 * and whether a running job may be preempted as of the core's last event
 * (minimum run time, preemption cap), as gp_view_may_preempt says. */
const struct gp_job *gp_core_tenant_running(const struct gp_core *core,
                                            uint32_t tenant,
                                            enum gp_prio_class cls);
const struct gp_job *gp_core_tenant_running_next(const struct gp_core *core,
                                                 const struct gp_job *job);
bool gp_core_may_preempt(const struct gp_core *core, const struct gp_job *job);
/* Count of rounds run and of actions applied, for benchmarks. */
uint64_t gp_core_nrounds(const struct gp_core *core);

#endif
