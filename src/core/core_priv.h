/* core_priv.h - what the core's files share: the core's state and the
 * internal functions one file offers another (gp__ names).
 *
 * The core is one struct spread over files by concern:
 *   store.c     the job store (chunks; a job's address never changes)
 *   queue.c     shapes, pending heaps, the running heap, their iterators
 *   timer.c     the timer heap and what fires
 *   ledger.c    tenants, the fair-share ledger, water-filling
 *   lifecycle.c a job's moves: submit, start, stop, end, cancel
 *   view.c      what a policy may read, the stopping jobs' GPUs
 *   plan.c      what a policy may do, checked as it is added
 *   core.c      construction, the round, queries
 * Nothing here is public: policies see include/gpupool/core.h only.
 */
#ifndef GPUPOOL_CORE_PRIV_H
#define GPUPOOL_CORE_PRIV_H

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "core/heap.h"
#include "gpupool/core.h"

#define CHUNK_BITS 12
#define MAX_START_FAILURES_DEFAULT 3
#define CHUNK (1u << CHUNK_BITS)
#define NONE UINT32_MAX

enum {
    OP_START = 1,
    OP_PREEMPT = 2,
    OP_REJECT = 3,
    OP_RESIZE = 4,
    OP_MIGRATE = 5,
};

/* A pending job in its shape's heap, with its rank (which does not change
 * while the job waits). */
struct qentry {
    int64_t rank[2];
    uint64_t seq; /* ties go to the earlier submission */
    uint32_t id;
};

struct shape {
    struct gp_demand d;
    uint32_t tenant; /* NONE unless the policy queues by tenant */
    struct qentry *heap;
    uint32_t n, cap;
    uint32_t hnext; /* hash chain */
    uint32_t apos;  /* in the active list */
    uint32_t tpos;  /* in its tenant's list */
    bool live;      /* has pending jobs (else retired, its slot free) */
    uint32_t stuck; /* strtab id: why it cannot fit the UP nodes; 0 = it
                       can (the walks skip a stuck shape) */
    /* when its jobs joined the queue (gp_job.queued_us) summed, each in
     * whole seconds rounded down (see gp_view_tenant_pending_wait) */
    int64_t queued_s;
};

enum { TIMER_RANK, TIMER_KILL, TIMER_WAKE, TIMER_POLICY };

struct timer {
    int64_t at_us;
    uint32_t job;     /* NONE for a policy's own wake-up */
    uint32_t gen;     /* the job's start count when armed: stale once it
                         moves */
    uint32_t job_gen; /* the slot's generation: stale once retired */
    uint8_t kind;
    /* TIMER_POLICY (job NONE): the policy's own 64-bit mark is kept in
     * job_gen (high half) and gen (low half), so a timer stays 24 bytes:
     * the heap is on every round's path */
};

struct tenant {
    struct gp_tenant_info info;
    uint32_t *shapes; /* its shapes, when queues are by tenant */
    uint32_t nshapes, capshapes;
    int64_t usage_t_us; /* usage_gpu_s is as of this time */
    bool declared;
    bool has_children;
    /* its running jobs by priority class, linked through t_prev/t_next */
    uint32_t run_head[GP_NPRIO];
    /* its pending jobs of 2 GPUs or more that never started, by
     * submission (then seq), linked through gang_prev/gang_next */
    uint32_t gang_head, gang_tail;
    struct gp_tenant_type *types; /* per GPU type (info.by_type) */
    uint64_t sub_demand;          /* demand of its whole subtree (milli) */
    uint32_t depth;               /* 0 at the top level */
    double sub_entitled;
    bool owes; /* something was owed to it since the last round's end */
};

struct action {
    uint8_t op;
    bool park; /* OP_PREEMPT of an idle job (gp_plan_preempt_idle) */
    uint32_t job;
    uint32_t beneficiary;      /* tenant a preemption reclaims for, or NONE */
    uint32_t why;              /* OP_REJECT: strtab id of the reason */
    struct gp_placement where; /* START, RESIZE, MIGRATE: where it runs
                                  (next) */
    struct gp_placement old;   /* RESIZE: where it ran */
};

struct pit_entry {
    uint32_t shape;
    uint32_t idx;
    uint32_t slot;   /* its walk's root: the shape's place in that walk */
    struct qentry q; /* a copy of shapes[shape].heap[idx] */
};

struct gp_view {
    struct gp_core *core;
};

struct gp_plan {
    struct gp_core *core;
};

struct gp_core {
    struct gp_cluster *cluster;
    struct gp_core_config cfg;
    const struct gp_env *env;
    void *ppriv;

    struct gp_strtab strs;
    /* the goodput model's reference curves: the work at each epoch's end
     * of a (model, GPUs, batch size) on its reference placement
     * (goodput_job.c); a modelled job names one (gp_job.goodput_curve) */
    struct gp__gcurve *gcurves;
    uint32_t ngcurves, capgcurves;
    struct gp_strtab tenant_names;
    struct tenant *tenants;
    uint32_t ntenants, captenants;
    uint32_t *tenant_by_name; /* tenant_names id -> tenant (or NONE) */
    uint32_t nby_name, cap_by_name;
    /* the entitlements are a cache, brought up to date when read (also
     * through a const core): the one piece of the core's state that
     * reading changes, reached through a pointer rather than a cast */
    struct ledger_cache {
        bool stale;
    } * lc;
    double decay_per_us; /* ln 2 / half-life */
    struct gp_predictor *predictor;
    uint64_t preempting_milli;
    uint32_t nowing;      /* tenants with `owes` set */
    uint32_t *preempting; /* ids of signalled jobs; job->heap_pos indexes */
    uint32_t npreempting, cappreempting;
    /* the preempting jobs' GPUs are given back to the cluster for now
     * (give_stopping): so many GPUs in all and of each type */
    bool stopping_given;
    uint64_t given_gpus, given_milli; /* what giving added to the free */
    uint64_t given_type_gpus[GP_MAX_GPU_TYPES];
    uint64_t given_type_milli[GP_MAX_GPU_TYPES];

    struct gp_job **chunks;
    size_t nchunks, njobs; /* slots made; njobs - nfree are alive */
    uint32_t *free_slots;  /* retired slots, reused first */
    uint32_t nfree, capfree;
    size_t nalive;
    uint64_t nsubmitted; /* the next job's seq */
    uint32_t *ext_index; /* external id -> slot, open addressing */
    char **ext_mem;      /* slot -> its external id's memory (owned) */
    uint32_t capext;
    uint32_t next_n, next_used, next_live;

    struct shape *shapes;
    uint32_t nshapes, capshapes;
    uint32_t *shape_hash;
    uint32_t shape_hash_n; /* power of two */
    uint32_t *active;      /* live shapes */
    uint32_t nactive, capactive;
    uint32_t *free_shapes; /* retired shapes' slots */
    uint32_t nfree_shapes, capfree_shapes;

    uint32_t *running; /* max-heap of job ids */
    uint32_t nrunning, caprunning;

    struct timer *timers; /* min-heap */
    uint32_t ntimers, captimers;
    int64_t next_periodic_us;

    size_t npending;
    uint64_t busy_milli;
    uint64_t shrunk_milli;  /* what running elastic jobs lack of their asked
                               GPUs, over every tenant */
    uint64_t grown_milli;   /* what they hold beyond it */
    uint64_t running_epoch; /* bumped whenever a job starts or stops */
    uint32_t nidle;         /* running jobs with gp_job.idle set */
    bool dirty;
    uint64_t nrounds;
    uint32_t round_id;
    int64_t now_us;

    /* what the world is to carry out: added to outbox, handed over by
     * swapping with taken */
    struct gp_action *outbox, *taken;
    uint32_t noutbox, capoutbox, captaken;

    struct gp_arena scratch;
    struct action *actions;
    size_t nactions, capactions;
    struct gp_view view;
    struct gp_plan plan;

    int walk_err; /* a walk ran out of memory: the round fails with it */
};

/* A call that cannot fail here, by an invariant of the core (say why at
 * the call): checked in debug builds, evaluated in all. */
#define GP__MUST(call)                                                         \
    do {                                                                       \
        int must_rc_ = (call);                                                 \
        assert(must_rc_ == GP_OK);                                             \
        (void)must_rc_;                                                        \
    } while (0)

static inline struct gp_job *J(const struct gp_core *c, uint32_t id)
{
    return &c->chunks[id >> CHUNK_BITS][id & (CHUNK - 1)];
}

/* store.c */
/* A new slot (a retired one first), zeroed, with its seq and a copy of
 * `ext` indexed. */
int gp__job_new(struct gp_core *c, const char *ext, struct gp_job **out);
void gp__job_release(struct gp_core *c, struct gp_job *j);
/* The live job of a handle: GP_ENOENT for an unknown or retired one. */
int gp__job_at(const struct gp_core *c, uint64_t handle, struct gp_job **out);
void gp__jobs_free(struct gp_core *c);

/* queue.c */
int gp__rank_cmp(const struct gp_job *a, const struct gp_job *b);
int gp__shape_of(struct gp_core *c, const struct gp_demand *d, uint32_t tenant,
                 uint32_t *out);
void gp__set_rank(struct gp_core *c, struct gp_job *j);
int gp__pending_push(struct gp_core *c, struct gp_job *j);
/* Room for the job in its pending heap, so that gp__pending_push then
 * cannot fail: for moves that must take effect whole. */
int gp__pending_reserve(struct gp_core *c, const struct gp_job *j);
/* Room for n jobs of this one's shape (several may join it at once). */
int gp__pending_reserve_n(struct gp_core *c, const struct gp_job *j,
                          uint32_t n);
void gp__pending_remove(struct gp_core *c, struct gp_job *j);
int gp__running_push(struct gp_core *c, struct gp_job *j);
void gp__running_remove(struct gp_core *c, struct gp_job *j);
/* The running job's rank changed: move it in the running heap. */
void gp__running_rerank(struct gp_core *c, struct gp_job *j);
void gp__queues_free(struct gp_core *c);
/* The policy's options changed: rank every waiting and running job again
 * and rebuild the heaps (allocates nothing). */
void gp__rerank_all(struct gp_core *c);

/* timer.c */
int gp__timer_push(struct gp_core *c, int64_t at, uint32_t job, uint32_t gen,
                   uint8_t kind);
/* Room for n more timers. */
int gp__timer_reserve(struct gp_core *c, uint32_t n);
int gp__arm_rank_timer(struct gp_core *c, struct gp_job *j);
void gp__fire_timers(struct gp_core *c, int64_t now_us);
/* Drop the policy's timers and the rank timers, arm the rank timers again
 * (room for one per running job reserved by the caller). */
void gp__timers_policy_reset(struct gp_core *c);

/* ledger.c */
int gp__tenant_of(struct gp_core *c, const char *name, uint32_t *out);
/* Job j takes (sign 1) or leaves (-1) a placement: its tenant's held
 * milli-GPUs (in all and on the placement's type), CPUs and memory, and
 * the core's busy count; nrunning_delta moves its running count. */
void gp__book_held(struct gp_core *c, const struct gp_job *j,
                   const struct gp_placement *where, int sign,
                   int nrunning_delta);
/* What a run on `where` lacks of the GPUs its job asked for (an elastic
 * job shrunk or started small) counts in its tenant's demand: booked
 * (sign 1) while the run holds it, unbooked (-1) when it ends or is
 * resized. gp__book_held does it for runs that begin and end. */
void gp__book_shrunk(struct gp_core *c, const struct gp_job *j,
                     const struct gp_placement *where, int sign);
void gp__ledger_update(const struct gp_core *c);
void gp__ledger_round_end(struct gp_core *c);
void gp__tenants_free(struct gp_core *c);

/* lifecycle.c */
/* `park`: the job was idle and its GPUs are lent (gp_job.parked). */
int gp__apply_preempt(struct gp_core *c, struct gp_job *j, uint32_t beneficiary,
                      bool park, int64_t now);
/* The job's run is no longer idle (it was signalled, or it ended). */
void gp__clear_idle(struct gp_core *c, struct gp_job *j);
int gp__apply_start(struct gp_core *c, struct gp_job *j, int64_t now);
void gp__apply_reject(struct gp_core *c, struct gp_job *j, uint32_t why,
                      int64_t now);
/* A migration takes effect: the job's dest is already the action's copy
 * (see reserve()). */
int gp__apply_migrate(struct gp_core *c, struct gp_job *j, int64_t now);
/* A migrating job gives up the resources held for it (it was cancelled, it
 * ended, or a node went down). */
void gp__drop_dest(struct gp_core *c, struct gp_job *j);
/* The job's placement is already the new one's copy (see reserve()); `old`
 * is the one it leaves. */
void gp__apply_resize(struct gp_core *c, struct gp_job *j,
                      struct gp_placement *old, int64_t now);
void gp__leave_preempting(struct gp_core *c, struct gp_job *j);
int gp__requeue(struct gp_core *c, struct gp_job *j, int64_t saved, bool give,
                int64_t now_us);
/* The same, for `why`: only GP_STOP_PREEMPT counts as a preemption (a job
 * lost with its node, or moved, is not preempted). */
int gp__requeue_as(struct gp_core *c, struct gp_job *j, int64_t saved,
                   bool give, int64_t now_us, enum gp_stop_reason why);
/* A job that held resources is over: close its books for good. */
void gp__finish(struct gp_core *c, struct gp_job *j, enum gp_job_state how,
                int64_t now_us);
/* The goodput model's part (goodput_job.c, goodput.h): a job without a
 * duration whose class names a model gets its reference rate and its
 * work at submission; its rate on a placement, in the epoch it is in;
 * and, once it runs there, its epoch, batch
 * configuration, measured gradient statistics, rate and the work at which
 * the rate changes next. */
struct gp__gcurve {
    uint32_t model, gpus, bsz;
    int64_t *work; /* work_us when e epochs are done, e = 0..epochs */
    double *rate;  /* the reference's goodput in epoch e, e < epochs */
};
void gp__goodput_submit(struct gp_core *c, struct gp_job *j);
void gp__goodput_free(struct gp_core *c);
double gp__goodput_speed(const struct gp_core *c, const struct gp_job *j,
                         const struct gp_placement *where);
void gp__goodput_settle(struct gp_core *c, struct gp_job *j);
/* The speed of a run or segment beginning on the job's placement
 * (lifecycle.c). */
void gp__new_segment_speed(struct gp_core *c, struct gp_job *j);
double gp__speed_of(const struct gp_core *c, const struct gp_job *j,
                    const struct gp_placement *where);
int gp__emit(struct gp_core *c, enum gp_action_kind kind, struct gp_job *j,
             int64_t deadline_us, bool done);
/* Room for n more actions to the world. */
int gp__outbox_reserve(struct gp_core *c, uint32_t n);
/* The grace period of a stopping job ran out: kill it. */
int gp__grace_over(struct gp_core *c, struct gp_job *j);

/* view.c */
bool gp__may_preempt(const struct gp_core *c, const struct gp_job *j);
void gp__give_stopping(struct gp_core *c);
void gp__take_stopping(struct gp_core *c);

/* nodes.c: are some nodes DOWN or DRAIN (and may come back)? */
bool gp__cluster_degraded(const struct gp_core *c);

/* plan.c */
int gp__plan_validate(struct gp_core *c, struct gp_diag *diag);
/* Zero the ledger's plan columns of the tenants the plan's actions touch,
 * once the plan applied (they are zero outside a round). */
void gp__plan_books_clear(struct gp_core *c);

#endif
