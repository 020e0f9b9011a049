/* daemon.h - `gpupool serve`: the loop that owns the state, and the parts
 * it is made of (the store, the core, the local backend, the monitor, the
 * HTTP front). One thread runs everything declared here.
 *
 * A round of the loop (serve.c): take the requests waiting and the
 * backend's news, let the core decide, write all of it to the store in one
 * transaction, commit, answer the clients, then carry the decisions out
 * (decide, persist, act). What carrying out learns (a start that worked or
 * failed) is the next transaction's news.
 */
#ifndef GPUPOOL_DAEMON_DAEMON_H
#define GPUPOOL_DAEMON_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "backend/local.h"
#include "backend/slurm.h"
#include "daemon/config.h"
#include "daemon/db.h"
#include "daemon/http.h"
#include "gpupool/core.h"
#include "monitor/monitor.h"
#include "trace/tenants.h"

/* The daemon's record of a job the core still holds (not ended). */
struct djob {
    int64_t id;      /* public id (the store's) */
    uint64_t handle; /* the core's */
    char *tenant, *user, *name;
    uint32_t uid, gid;
    json_t *spec; /* the request as stored (command, env, cwd, ...) */
    int64_t submit_us;
    uint32_t restarts; /* runs after the first that really ran */
    uint32_t runs;     /* runs begun, failed starts included: the run
                          number of the last */
    /* the current run, while it holds GPUs */
    bool has_proc;   /* set through gp_djob_set_proc */
    size_t proc_pos; /* in daemon.procs, while has_proc */
    struct gp_local_proc proc;
    char devices[256];
    int64_t action_id; /* its start action, until done */
    /* stopping: the steps signal -> grace -> SIGTERM -> SIGKILL */
    bool stopping;
    struct gp_local_stop stop;
    enum gp_stop_reason stop_reason;
    int64_t limit_at_us; /* the time limit ends the run; GP_TIME_NONE */
    bool timed_out;
    bool cancel_asked;
    int64_t idle_since_us; /* its GPUs all idle since; GP_TIME_NONE */
    bool idle_reported;    /* and the core told (gp_core_set_job_idle) */
    /* the tenant its GPUs were lent to when it was preempted for being
     * idle (the policy's lend_idle); "" = none or not known */
    char lent_to[GP_TENANT_NAME_MAX + 1];
    int32_t exit_code; /* GP_DB_NO_EXIT */
    char reason[256];
    struct gp_job_restore restore; /* from the store, for recovery */
    /* backend = slurm: its Slurm job (0 = not submitted yet), and when a
     * preempted run's grace ends and it is requeued (0 = not due) */
    uint32_t slurm_id;
    int64_t requeue_at_us;
    bool slurm_requeued;    /* this stop's requeue was asked */
    int64_t slurm_retry_us; /* a refused submit is tried again then */
    int64_t placed_at_us;   /* its last release to Slurm */
};

struct daemon {
    struct gp_config cfg;
    const char *config_path;
    struct gp_env env;
    struct gp_db *db;
    struct gp_core *core;
    struct gp_monitor *mon; /* NULL under the Slurm backend */
    /* backend = slurm: the client, when Slurm was last read, and what
     * squeue said then (sorted by id) */
    struct gp_slurm *slurm;
    int64_t slurm_polled_us;       /* jobs (squeue) */
    int64_t slurm_nodes_polled_us; /* nodes (sinfo) */
    struct gp_slurm_job *sjobs;
    size_t nsjobs;
    uint64_t adopted;
    /* jobs not yet in Slurm are looked for after new submits, else at
     * this instant (gp_bslurm_submit_new) */
    uint64_t slurm_scanned_submits;
    int64_t slurm_rescan_us;
    struct gp_http *http;
    struct gp_tenant_list tenants;
    /* Unix users per tenant ("*" = everyone), from the tenants file */
    json_t *members;
    /* the policy's options in force (strings by key) and where they came
     * from: "file" or "api" (live.h) */
    json_t *policy_opts;
    const char *policy_from;
    char node_name[64];
    char supervisor[4096]; /* the gpupool-supervisor program */
    unsigned ngpus;
    struct gp_gpu_info *gpus; /* ngpus */
    struct gp_gpu_sample *samples;
    int64_t last_sample_us;
    int64_t last_poll_us;   /* running jobs last looked at */
    int64_t *busy_since_us; /* per GPU: when its job last showed use */
    uint32_t foreign[64];   /* pids on the GPUs gpupool did not start,
                               last sample (reported once each) */
    size_t nforeign;
    uint64_t idle_reports;
    int sigfd, wakefd;
    bool stop, reload;
    /* live jobs by id (ids increase, so appends keep it sorted) */
    struct djob **jobs;
    size_t njobs, capjobs;
    /* those with a process (has_proc), in no order: what the loop polls;
     * room for capjobs, so adding one never fails */
    struct djob **procs;
    size_t nprocs;
    /* the loop's round */
    bool dirty;
    uint64_t rounds, submits, starts, preempts;
    int64_t started_us;
    int log_level;
    FILE *log;
};

/* logfmt lines: ts=... level=... msg="..." k=v ... */
void gp_dlog(struct daemon *d, enum gp_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int64_t gp_now_us(void);

/* jobs.c: the job table, the core's observer, the backend */
struct djob *gp_djob_find(struct daemon *d, int64_t id);
struct djob *gp_djob_of(struct daemon *d, const struct gp_job *j);
int gp_djob_add(struct daemon *d, struct djob *j);
/* A new live job from its store record (id: the store's), into the
 * table; spec is referenced. NULL when out of memory. */
struct djob *gp_djob_new(struct daemon *d, const struct gp_db_job *row,
                         int64_t id, json_t *spec);
void gp_djob_drop(struct daemon *d, struct djob *j);
void gp_djob_free(struct djob *j);
/* The job has a process now (on) or no longer: d->procs follows. */
void gp_djob_set_proc(struct daemon *d, struct djob *j, bool on);
extern const struct gp_observer_ops gp_daemon_observer;
/* Carry out the core's actions taken and persisted this round. */
int gp_daemon_persist_actions(struct daemon *d, int64_t now);
int gp_daemon_execute(struct daemon *d, int64_t now);
/* Is there anything to carry out this turn: actions persisted and not
 * yet carried out, or (under Slurm, always) new jobs to submit there? */
bool gp_daemon_actions_pending(const struct daemon *d);
/* Take the jobs that ended this turn out of the core (end of a turn). */
void gp_daemon_retire_ended(struct daemon *d);
/* Ask every running job's supervisor what it is doing; report exits. */
int gp_daemon_poll_jobs(struct daemon *d, int64_t now);
/* After a GPU sample: report jobs whose GPUs stay idle, and processes on
 * the GPUs that no job of gpupool started. */
void gp_daemon_check_gpus(struct daemon *d, int64_t now);
/* Is this pid one of a running job's processes (its process group)? */
bool gp_daemon_pid_is_ours(const struct daemon *d, uint32_t pid);
/* The next instant the backend needs the loop (a stop step, a limit). */
int64_t gp_daemon_backend_wakeup(const struct daemon *d);
/* A job's files */
void gp_daemon_job_dir(const struct daemon *d, int64_t id, char *buf,
                       size_t len);
/* Write a job's record (state, accounting) and an event to the store. */
int gp_daemon_save_job(struct daemon *d, struct djob *dj,
                       const struct gp_job *j, const char *event,
                       json_t *detail);
/* A job into the core (its ext is its id). */
int gp_daemon_submit_core(struct daemon *d, struct djob *dj, int64_t now,
                          struct gp_diag *diag);
/* Rebuild the core from the store after a start (recovery). */
int gp_daemon_recover(struct daemon *d, int64_t now, struct gp_diag *diag);

/* slurm_backend.c: backend.kind = slurm (docs/slurm.md). The core's
 * actions become Slurm commands; each poll reads Slurm's nodes and jobs
 * and reports what changed. */
int gp_bslurm_open(struct daemon *d, struct gp_cluster **out,
                   struct gp_diag *diag);
void gp_bslurm_close(struct daemon *d);
/* A start: submitted held first if it never was, then placed. */
int gp_bslurm_start(struct daemon *d, struct djob *dj, const struct gp_job *j,
                    int64_t now);
/* A signal (preemption: the signal, the grace, a held requeue) or a kill
 * (cancel: scancel; otherwise a held requeue at once). */
void gp_bslurm_stop(struct daemon *d, struct djob *dj,
                    const struct gp_action *a, int64_t now);
/* Jobs not yet in Slurm go in, held (a few per turn). */
void gp_bslurm_submit_new(struct daemon *d, int64_t now);
/* Due requeues every turn; Slurm's nodes and jobs every slurm.poll. */
int gp_bslurm_poll(struct daemon *d, int64_t now);
int64_t gp_bslurm_wakeup(const struct daemon *d);
/* Recovery: read Slurm's jobs once, before the store's jobs come back;
 * each job's last run is then matched with its Slurm job; then what Slurm
 * holds that gpupool does not know is adopted or cancelled. */
int gp_bslurm_list(struct daemon *d, struct gp_diag *diag);
void gp_bslurm_restore_run(struct daemon *d, struct djob *dj,
                           const struct gp_db_run *last, int64_t now);
void gp_bslurm_reconcile(struct daemon *d, int64_t now);

/* api.c: one request, answered after the batch's commit */
void gp_api_handle(struct daemon *d, struct gp_http_request *r, int64_t now,
                   unsigned *status, json_t **reply, char **text,
                   const char **type);

#endif
