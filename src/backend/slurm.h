/* slurm.h - gpupool's client of a Slurm cluster.
 *
 * gpupool talks to Slurm through Slurm's own commands and their JSON
 * output (sinfo --json, squeue --json, scontrol, sbatch, scancel), never
 * by linking libslurm: libslurm is GPL-2+ and its ABI changes with every
 * major release, while the commands' JSON is versioned (OpenAPI 0.0.38 in
 * Slurm 22.05) and the commands are there wherever Slurm is. What this
 * costs is measured in docs/slurm.md.
 *
 * The commands find the cluster the usual way: SLURM_CONF in the
 * environment, else /etc/slurm/slurm.conf (or configless DNS). A command
 * that fails, times out or prints what does not parse is an error whose
 * diag names the command and quotes its stderr.
 *
 * The parsers (gp_slurm_parse_*) are pure: they take the text a command
 * printed, so tests feed them recorded output.
 *
 * Times are Slurm's: whole seconds since the epoch, 0 when not set.
 */
#ifndef GPUPOOL_SLURM_H
#define GPUPOOL_SLURM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpupool/err.h"

#define GP_SLURM_NAME_MAX 64
#define GP_SLURM_TYPE_MAX 32

struct gp_slurm_options {
    /* the directory of sinfo, squeue, ...; NULL = looked up in PATH */
    const char *bin_dir;
    /* each command's limit; 0 = 10000 ms */
    uint32_t timeout_ms;
};

struct gp_slurm;

/* Check that the commands run and talk to a controller (`sinfo
 * --version`, then `scontrol ping`); GP_EIO naming the command if not. */
int gp_slurm_open(struct gp_slurm **out, const struct gp_slurm_options *o,
                  struct gp_diag *diag);
void gp_slurm_close(struct gp_slurm *s);
/* "22.05.8" */
const char *gp_slurm_version(const struct gp_slurm *s);

/* What gpupool makes of a node's state. */
enum gp_slurm_avail {
    GP_SLURM_UP,    /* idle, mixed, allocated, completing: jobs may run */
    GP_SLURM_DRAIN, /* draining or drained: running jobs go on, no new */
    GP_SLURM_DOWN,  /* down, not responding, failing, unknown, future */
};
const char *gp_slurm_avail_name(enum gp_slurm_avail a);

struct gp_slurm_node {
    char name[GP_SLURM_NAME_MAX];
    char state[64]; /* Slurm's words: "idle", "mixed+drain" */
    enum gp_slurm_avail avail;
    uint32_t cpus;
    uint64_t mem_mib; /* real_memory */
    uint32_t gpus;    /* GRES gpu, all types together */
    uint32_t gpus_used;
    char gpu_type[GP_SLURM_TYPE_MAX]; /* the first typed gpu GRES; "" */
    char reason[160];
    char leaf[GP_SLURM_NAME_MAX]; /* its lowest switch; "" = none */
};

enum gp_slurm_jstate {
    GP_SJ_PENDING,
    GP_SJ_RUNNING, /* RUNNING, CONFIGURING, COMPLETING (still holds) */
    GP_SJ_SUSPENDED,
    GP_SJ_COMPLETED, /* exit 0 */
    GP_SJ_FAILED,    /* non-zero exit, or OUT_OF_MEMORY, BOOT_FAIL */
    GP_SJ_CANCELLED,
    GP_SJ_TIMEOUT, /* TIMEOUT, DEADLINE */
    GP_SJ_NODE_FAIL,
    GP_SJ_PREEMPTED, /* Slurm preempted it (not gpupool) */
    GP_SJ_OTHER,     /* a state this version does not know */
};
const char *gp_slurm_jstate_name(enum gp_slurm_jstate s);
/* Has the job ended for good (no longer pending, running or suspended)? */
bool gp_slurm_jstate_final(enum gp_slurm_jstate s);

struct gp_slurm_job {
    uint32_t id;
    enum gp_slurm_jstate state;
    char state_name[24]; /* "PENDING", "NODE_FAIL" */
    char reason[64];     /* "JobHeldUser", "None" */
    bool held;           /* pending with priority 0 */
    char name[128];
    char account[GP_SLURM_NAME_MAX];
    char user[GP_SLURM_NAME_MAX];
    char partition[GP_SLURM_NAME_MAX];
    uint32_t uid;
    char comment[256];
    int64_t submit_s, start_s, end_s;
    uint32_t node_count; /* asked for while pending, held once running */
    char nodes[1024];    /* a hostlist ("n[3-4]"); "" while pending */
    char req_nodes[1024];
    /* GPUs asked for: per node (tres_per_node) or for the whole job
     * (tres_per_job, --gpus); at most one is non-zero */
    uint32_t gpus_per_node, gpus_per_job;
    char gpu_type[GP_SLURM_TYPE_MAX];
    uint32_t time_limit_min; /* 0 = none */
    uint32_t restarts;       /* restart_cnt */
    int exit_status;         /* a wait status: exit code << 8 | signal */
    char batch_host[GP_SLURM_NAME_MAX];
};

/* The cluster's nodes (sinfo --json), each with its leaf switch (scontrol
 * show topology). *out is malloc'd; free() it. */
int gp_slurm_nodes(struct gp_slurm *s, struct gp_slurm_node **out, size_t *n,
                   struct gp_diag *diag);
/* Every job the controller knows (squeue --json: pending, running, and
 * those ended within MinJobAge). *out is malloc'd; free() it. */
int gp_slurm_jobs(struct gp_slurm *s, struct gp_slurm_job **out, size_t *n,
                  struct gp_diag *diag);

/* A batch job, submitted held. Strings are borrowed for the call. */
struct gp_slurm_submit {
    const char *script;  /* the batch script's text ("#!/bin/sh\n...") */
    const char *name;    /* NULL = Slurm's default */
    const char *account; /* NULL = the user's default */
    const char *partition;
    const char *comment;
    const char *workdir;    /* absolute */
    const char *output;     /* stdout file (appended: --open-mode) */
    const char *error;      /* stderr file; NULL = with stdout */
    uint32_t nodes;         /* exactly this many; >= 1 (a placement
                               sets the count again: gp_slurm_place) */
    uint32_t gpus_per_node; /* 0 = none */
    /* GPUs for the whole job however they fall on its nodes (--gpus):
     * what gpupool's placer may spread unevenly; 0 = none. Not with
     * gpus_per_node. */
    uint32_t gpus_per_job;
    /* the job starts from a clean environment, not the submitting
     * process's: sbatch runs with PATH and SLURM_CONF only (not
     * --export=NONE: with it, Slurm 22.05 launched a batch job about
     * 1.2 s after allocating it, at once without) */
    bool clean_env;
    const char *gpu_type;   /* NULL = any */
    uint32_t cpus_per_node; /* 0 = Slurm's default */
    uint64_t mem_per_node_mib;
    uint32_t time_limit_min; /* 0 = the partition's */
    int64_t uid, gid;        /* -1 = the caller's; others need root */
};
int gp_slurm_submit_held(struct gp_slurm *s, const struct gp_slurm_submit *r,
                         uint32_t *id, struct gp_diag *diag);

/* Start a held job on exactly these nodes: pin its node count and list,
 * make it eligible now (a requeued job would otherwise wait 121 s) and
 * release it. Slurm starts it on its next pass. */
int gp_slurm_place(struct gp_slurm *s, uint32_t id, const char *const *nodes,
                   size_t n, struct gp_diag *diag);
/* sig to every step of the job: the batch script and its srun steps. */
int gp_slurm_signal(struct gp_slurm *s, uint32_t id, int sig,
                    struct gp_diag *diag);
/* Stop a running job and put it back in the queue, held: Slurm sends
 * SIGTERM, then SIGKILL after KillWait. */
int gp_slurm_requeue_hold(struct gp_slurm *s, uint32_t id,
                          struct gp_diag *diag);
int gp_slurm_cancel(struct gp_slurm *s, uint32_t id, struct gp_diag *diag);
/* Hold a pending job (one Slurm requeued by itself, or released by hand)
 * so that only gp_slurm_place starts it. */
int gp_slurm_hold(struct gp_slurm *s, uint32_t id, struct gp_diag *diag);
int gp_slurm_set_comment(struct gp_slurm *s, uint32_t id, const char *comment,
                         struct gp_diag *diag);
/* scontrol update NodeName=... State=DRAIN|RESUME|DOWN Reason=... */
int gp_slurm_node_state(struct gp_slurm *s, const char *node, const char *state,
                        const char *reason, struct gp_diag *diag);

/* Run a Slurm command (argv[0] looked up in bin_dir or PATH) with stdin
 * from `in` (NULL = /dev/null); its stdout in *out (malloc'd, NUL-ended,
 * *out_len bytes; free() it; NULL to drop). Non-zero exit, a signal or
 * the time limit: GP_EIO with the command and its stderr in diag. */
int gp_slurm_run(struct gp_slurm *s, const char *const *argv, const char *in,
                 char **out, size_t *out_len, struct gp_diag *diag);

/* The parsers. `where` names the input in diag ("sinfo --json"). */
int gp_slurm_parse_nodes(const char *json, size_t len, const char *where,
                         struct gp_slurm_node **out, size_t *n,
                         struct gp_diag *diag);
int gp_slurm_parse_jobs(const char *json, size_t len, const char *where,
                        struct gp_slurm_job **out, size_t *n,
                        struct gp_diag *diag);
/* `scontrol show topology`: sets each listed node's leaf (the switch of
 * the lowest level that lists it); nodes it does not name keep "". */
int gp_slurm_parse_topology(const char *text, const char *where,
                            struct gp_slurm_node *nodes, size_t n,
                            struct gp_diag *diag);
/* A GRES string ("gpu:v100:4(S:0-1),shard:8") or a TRES request
 * ("gres:gpu:2", "gres/gpu=2"): the GPUs it names, all types summed, and
 * the first type ("" if untyped). */
int gp_slurm_parse_gres(const char *s, uint32_t *gpus, char *type,
                        size_t type_len);
/* One line of Slurm's job completion log (JobCompType=jobcomp/filetxt):
 * the end of a run. A requeued run ends with JobState=PENDING (its start,
 * end and nodes are the interrupted run's); the job's last run ends with
 * its final state. */
struct gp_slurm_comp {
    uint32_t id;
    char state[24];  /* "COMPLETED", "PENDING" (requeued), "CANCELLED" */
    int64_t start_s; /* 0 when it never ran ("unknown", or NodeCnt=0) */
    int64_t end_s;
    uint32_t node_count;
    char nodes[1024]; /* a hostlist; "" when it never ran */
    int exit_code;    /* ExitCode=3:0 -> 3, 0 */
    int exit_signal;
};
/* The whole log. Its times are slurmctld's local time, read here with the
 * caller's time zone (the same host, or the same TZ). Lines are checked
 * field by field; a bad one is GP_EPARSE naming where:line. *out is
 * malloc'd; free() it. */
int gp_slurm_parse_jobcomp(const char *text, const char *where,
                           struct gp_slurm_comp **out, size_t *n,
                           struct gp_diag *diag);

/* Expand a hostlist ("n[1-3,7],gpu[01-02]x,login") name by name, in
 * order. fn returning non-zero stops the walk and is returned. GP_EPARSE
 * for a malformed list (unbalanced brackets, a bad range, a range over
 * 65536 names). */
int gp_hostlist_expand(const char *list, int (*fn)(void *priv, const char *n),
                       void *priv, struct gp_diag *diag);

/* ---- Slurm's nodes in gpupool's core (slurm_nodes.c) ---- */

struct gp_cluster;
struct gp_core;

/* The core's state for a Slurm node: up, drain (running jobs stay, no
 * new ones) or down (its jobs are lost and requeued). */
int gp_slurm_core_state(enum gp_slurm_avail a);

/* A cluster for a new core from Slurm's nodes: each node with GPUs, its
 * GPU type ("gpu" when the GRES is untyped), CPUs, memory, leaf switch
 * (NULL: the default switch) and state. Nodes without GPUs are left out
 * and counted in *skipped. Errors as gp_cluster_add_node (a node with more
 * GPUs than a node may have), naming the node. */
int gp_slurm_cluster(const struct gp_slurm_node *nodes, size_t n,
                     struct gp_cluster **out, size_t *skipped,
                     struct gp_diag *diag);

/* What one poll of Slurm's nodes changed in a running core. */
struct gp_slurm_sync {
    unsigned added;   /* nodes new to the core */
    unsigned changed; /* state changes (up / drain / down) */
    unsigned gone;    /* nodes Slurm no longer lists: set down */
    unsigned resized; /* GPUs or type changed: not applied (a restart
                         applies them), reported */
};

/* Bring a running core's nodes in line with a fresh list: a node whose
 * state moved gets gp_core_set_node_state (down: its jobs are requeued
 * with their checkpoints), a new node is added, a node Slurm no longer
 * lists goes down. GP_OK with *out filled, or the first core error with
 * diag naming the node (the changes before it are applied). */
int gp_slurm_sync_nodes(struct gp_core *core, const struct gp_slurm_node *nodes,
                        size_t n, int64_t now_us, struct gp_slurm_sync *out,
                        struct gp_diag *diag);

#endif
