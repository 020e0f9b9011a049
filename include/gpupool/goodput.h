/* goodput.h - Pollux's model of how a training job progresses: goodput =
 * throughput x statistical efficiency (Qiao et al., OSDI'21, §3), from
 * per-model measurements (the Pollux artifact's model profiles).
 *
 * A model (an "application": cifar10, imagenet, ...) is described by
 *
 * - step times: seconds per step, and the gradient-synchronisation part,
 *   per placement (replicas per node, e.g. {2, 2}) and per-GPU batch size;
 * - validation runs, one per global batch size B: per epoch, the progress
 *   reached (in the model's progress unit) and the gradient's squared norm
 *   and variance measured during that epoch.
 *
 * A job of the model on a placement, with a per-GPU ("atomic") batch size
 * a and s gradient-accumulation steps (global batch size M = replicas x a
 * x (s + 1)), in epoch e, progresses at
 *
 *     goodput = gain / (step + s x (step - sync))        progress per second
 *     gain    = (var + sqr) / (var / scale + sqr),  scale = M / M0
 *
 * with step and sync the step time at (placement, a), sqr and var the
 * gradient statistics of epoch e at batch size M (each interpolated
 * linearly between the measured batch sizes), M0 the model's initial
 * (smallest validated) batch size. The job completes when its progress
 * reaches the progress of its last epoch (the model's epochs: the fewest
 * rows of its validation runs). The model is the Pollux simulator's; where
 * gpupool interpolates differently it says so in docs/speed.md,
 * "Goodput".
 *
 * The core uses it for jobs whose class names a model (gp_core_config.
 * goodput): their work is progress, their rate changes at every epoch
 * (the core re-rates them there: gp_core_job_rerate).
 */
#ifndef GPUPOOL_GOODPUT_H
#define GPUPOOL_GOODPUT_H

#include "gpupool/base.h"

struct gp_goodput;

/* The most GPUs on one node and nodes in one placement the model takes. */
#define GP_GOODPUT_MAX_NODES 64

/* A job's batch configuration: per-GPU batch size and accumulation steps
 * (global batch size = replicas x atomic x (accum + 1)). */
struct gp_goodput_conf {
    uint32_t atomic;
    uint32_t accum;
};

/* What a model allows and how long it trains (after gp_goodput_finish). */
struct gp_goodput_limits {
    uint32_t init_bsz;  /* the smallest validated global batch size */
    uint32_t max_bsz;   /* the largest */
    uint32_t min_local; /* per-GPU batch size range of the step times */
    uint32_t max_local;
    uint32_t epochs; /* the job completes after this many */
};

int gp_goodput_new(struct gp_goodput **out);
void gp_goodput_free(struct gp_goodput *g);

/* Building a model: add it by name (GP_EEXIST if known), then its rows in
 * any order, then finish it. `placement` is the replicas per node as
 * decimal digits ("22": two nodes of two), as the profiles write it.
 * GP_EINVAL for a bad figure (times must be > 0, sync <= step, batch sizes
 * >= 1, rows of one validation run in order of progress); `err` then says
 * why. */
int gp_goodput_add_model(struct gp_goodput *g, const char *name,
                         uint32_t *model);
int gp_goodput_add_step(struct gp_goodput *g, uint32_t model,
                        const char *placement, double local_bsz, double step,
                        double sync);
int gp_goodput_add_scale(struct gp_goodput *g, uint32_t model, uint32_t nodes,
                         uint32_t replicas, double local_bsz, double step,
                         double sync);
int gp_goodput_add_valid(struct gp_goodput *g, uint32_t model,
                         uint32_t batch_size, double progress, double sqr,
                         double var);
/* Check a model and derive its limits. `max_local` > 0 caps the per-GPU
 * batch size below what the step times reach (the artifact caps yolov3's
 * at 8). GP_EINVAL with `err` set when the model lacks step times or
 * validation runs, or its largest batch size is below its smallest
 * per-GPU batch size. */
int gp_goodput_finish(struct gp_goodput *g, uint32_t model, uint32_t max_local,
                      char *err, size_t errlen);

/* The model of a job class; false when there is none by that name. */
bool gp_goodput_find(const struct gp_goodput *g, const char *name,
                     uint32_t *model);
size_t gp_goodput_nmodels(const struct gp_goodput *g);
const char *gp_goodput_name(const struct gp_goodput *g, uint32_t model);
const struct gp_goodput_limits *gp_goodput_limits(const struct gp_goodput *g,
                                                  uint32_t model);

/* The step time (and its sync part, may be NULL) of `nnodes` nodes holding
 * per_node[i] replicas each, at per-GPU batch size `local_bsz`. */
double gp_goodput_step(const struct gp_goodput *g, uint32_t model,
                       const uint32_t *per_node, uint32_t nnodes,
                       double local_bsz, double *sync);
/* The gradient statistics of `epoch` at global batch size `bsz`. */
void gp_goodput_grad(const struct gp_goodput *g, uint32_t model, double bsz,
                     uint32_t epoch, double *sqr, double *var);
/* The progress reached when `epoch` epochs are done (0 for 0). */
double gp_goodput_progress(const struct gp_goodput *g, uint32_t model,
                           uint32_t epoch);
/* Progress per second of the configuration in `epoch` (formula above). */
double gp_goodput_rate(const struct gp_goodput *g, uint32_t model,
                       const uint32_t *per_node, uint32_t nnodes,
                       struct gp_goodput_conf conf, uint32_t epoch);
/* The configuration of a job that keeps global batch size `bsz` on
 * `replicas` GPUs (the artifact's fixed-batch jobs). */
struct gp_goodput_conf gp_goodput_fixed(const struct gp_goodput *g,
                                        uint32_t model, uint32_t replicas,
                                        uint32_t bsz);
/* The configuration with the most goodput on a placement, searched over
 * 50 global batch sizes in geometric steps from max(M0, min_local x
 * replicas) to the model's largest, with gradient accumulation, efficiency
 * from the gradient statistics (sqr, var) the job last measured (Pollux's
 * agent, GoodputFunction.optimize). *goodput (may be NULL) gets its
 * goodput, in progress per second. */
struct gp_goodput_conf gp_goodput_best(const struct gp_goodput *g,
                                       uint32_t model, const uint32_t *per_node,
                                       uint32_t nnodes, double sqr, double var,
                                       double *goodput);
/* Global batch size of a configuration on `replicas`. */
static inline uint32_t gp_goodput_bsz(struct gp_goodput_conf c,
                                      uint32_t replicas)
{
    return replicas * c.atomic * (c.accum + 1);
}

#endif
