/* share.h - placement replay of a GPU-sharing trace (Alibaba openb, the
 * "Beware of Fragmentation" trace, USENIX ATC'23) on its own node list.
 *
 * Pods arrive in creation order and hold their resources until their
 * deletion time. There is no queue: a pod that does not fit when it is
 * created is counted as failed and never retried, as in the FGD artifact's
 * experiments. Three modes compare how shares are placed: round-up (a
 * fractional pod takes one whole GPU, gpupool before sharing), best-fit
 * and FGD (real shares). See docs/sharing.md for every figure's formula.
 */
#ifndef GPUPOOL_SHARE_H
#define GPUPOOL_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpupool/err.h"

/* Caps on the readers' input (a longer line or more rows is GP_ERANGE):
 * the openb lists have ~1.5k nodes, ~8k pods and lines under 200 bytes. */
#define GP_SHARE_MAX_LINE 4096
#define GP_SHARE_MAX_NODES 100000
#define GP_SHARE_MAX_PODS 2000000

/* One row of openb_node_list_*.csv: sn,cpu_milli,memory_mib,gpu,model. */
struct gp_share_node {
    char *name;
    char *model; /* "" for a CPU-only node */
    uint32_t cpu_milli;
    uint64_t mem_mib;
    uint32_t gpus; /* 0..64 */
};

/* One row of openb_pod_list_*.csv (the columns the replay uses). */
struct gp_share_pod {
    char *name;
    uint32_t cpu_milli;
    uint64_t mem_mib;
    uint32_t num_gpu;   /* 0..64 */
    uint32_t gpu_milli; /* per GPU: 0 with num_gpu 0, 1..1000 otherwise */
    double creation_s;
    double deletion_s; /* < 0: none, the pod runs to the end */
};

/* A node list and a pod list, owned (gp_share_trace_fini frees them). */
struct gp_share_trace {
    struct gp_share_node *nodes;
    size_t nnodes;
    struct gp_share_pod *pods;
    size_t npods;
};

/* Read a node list / a pod list (header-mapped columns; others ignored)
 * and append its rows to t. Errors, with the diag naming "file:line" and
 * the field: GP_EIO (cannot open/read), GP_EPARSE (a missing column, a
 * bad number, a rule broken: gpu_milli must be 0 without GPUs, 1..1000
 * with one, 1000 with several; deletion before creation), GP_ERANGE (a
 * line over GP_SHARE_MAX_LINE, too many rows), GP_ENOMEM. On error t
 * keeps what it had before the call. */
int gp_share_read_nodes(struct gp_share_trace *t, const char *path,
                        struct gp_diag *diag);
int gp_share_read_pods(struct gp_share_trace *t, const char *path,
                       struct gp_diag *diag);
void gp_share_trace_fini(struct gp_share_trace *t);

enum gp_share_mode {
    GP_SHARE_ROUNDUP, /* a fractional pod asks for one whole GPU */
    GP_SHARE_BEST,    /* real shares, best fit (GP_SHARE_BESTFIT) */
    GP_SHARE_FRAG,    /* real shares, FGD against the trace's shapes */
};
#define GP_SHARE_NMODES 3
/* "round-up", "best-fit", "fgd". */
const char *gp_share_mode_name(enum gp_share_mode m);
int gp_share_mode_parse(const char *name, enum gp_share_mode *out);

struct gp_share_opts {
    enum gp_share_mode mode;
    bool no_deletions; /* pods never end: fill the cluster */
    uint32_t samples;  /* series points over the span; 0 = 100 (1% steps) */
};

/* A point of the series, the state after every event at or before t_s. */
struct gp_share_sample {
    double t_s;
    double alloc_rate; /* allocated / existing milli-GPUs */
    double asked_rate; /* asked by running pods / existing milli-GPUs */
    double frag_milli; /* gp_cluster_fragmentation vs the trace's shapes */
    double idle_milli; /* existing - allocated milli-GPUs */
    uint32_t running;  /* pods holding resources */
};

struct gp_share_result {
    enum gp_share_mode mode;
    size_t pods, placed, failed;
    size_t failed_frac, failed_whole, failed_cpu; /* by kind of pod */
    uint32_t nodes, nodes_skipped; /* skipped: CPU-only (no GPU) nodes */
    uint64_t total_milli;
    double alloc_avg, alloc_end, alloc_peak; /* over the samples */
    double asked_avg, asked_end; /* what placed pods asked, unrounded */
    double frag_avg_milli, frag_end_milli; /* over the samples */
    double frag_avg_pct, frag_end_pct;     /* % of idle milli-GPUs */
    /* With no_deletions: the allocation rate right before the first pod
     * that failed (alloc_end if none did), and how many pods came first. */
    double alloc_first_fail;
    size_t pods_before_fail;
    double wall_s; /* the replay alone (cluster build included) */
    struct gp_share_sample *series;
    size_t nseries;
};

/* Replay t under opts into r (r->series is malloc'd: gp_share_result_fini).
 * Errors: GP_EINVAL (no GPU node, a pod shape the cluster refuses), the
 * cluster's errors (a duplicate node name: GP_EEXIST, diag names the
 * node), GP_ENOMEM. */
int gp_share_run(const struct gp_share_trace *t,
                 const struct gp_share_opts *opts, struct gp_share_result *r,
                 struct gp_diag *diag);
void gp_share_result_fini(struct gp_share_result *r);

#endif
