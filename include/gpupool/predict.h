/* predict.h - run-time prediction from the history of similar jobs.
 *
 * The predictor learns online from finished jobs and estimates how long a
 * new job will run (on a reference GPU). Similar means, most specific
 * first: same user + job name + GPU count, same user + name, same user +
 * GPU count, same user, same tenant + GPU count, same tenant, everyone. The
 * first key with enough history answers with the median of its recent
 * durations; with no history at all it falls back to the job's time limit,
 * then to a default. Part of the core: no I/O, deterministic.
 */
#ifndef GPUPOOL_PREDICT_H
#define GPUPOOL_PREDICT_H

#include "gpupool/job.h"

struct gp_predictor_config {
    uint32_t window;      /* recent durations kept per key (default 32) */
    uint32_t min_samples; /* history a key needs to answer (default 3;
                             the "everyone" key answers from 1) */
    int64_t default_us;   /* no history, no time limit (default 1 hour) */
};

/* Which key answered (for reports and tests). */
enum gp_predict_source {
    GP_PRED_USER_NAME_GPUS,
    GP_PRED_USER_NAME,
    GP_PRED_USER_GPUS,
    GP_PRED_USER,
    GP_PRED_TENANT_GPUS,
    GP_PRED_TENANT,
    GP_PRED_GLOBAL,
    GP_PRED_TIME_LIMIT,
    GP_PRED_DEFAULT,
    GP_PRED_GIVEN, /* the job's own estimate (gp_job_spec.estimate_us) */
};
const char *gp_predict_source_name(enum gp_predict_source s);

struct gp_predictor;

/* cfg may be NULL for the defaults; a field left 0 takes its default (a
 * window under 3 lowers the default min_samples to the window). Memory
 * comes through env's allocator (NULL = the C library's).
 * GP_EINVAL: window > 255, min_samples > window or default_us < 0.
 * GP_ENOMEM. */
int gp_predictor_new(struct gp_predictor **out,
                     const struct gp_predictor_config *cfg,
                     const struct gp_env *env);
void gp_predictor_free(struct gp_predictor *p);

/* Predicted run time of the job in microseconds (> 0), and which key gave
 * it (source may be NULL). Uses the job's user, name, tenant (ids) and
 * demand.gpus and time_limit_us; a key that needs a user or name the job
 * lacks (id 0) is skipped. The median of an even count is the mean of the
 * two middle durations, rounded down. Never fails. */
int64_t gp_predictor_predict(const struct gp_predictor *p,
                             const struct gp_job *job,
                             enum gp_predict_source *source);
/* Learn that the job ran `actual_us` (> 0). GP_ENOMEM, GP_EINVAL. */
int gp_predictor_learn(struct gp_predictor *p, const struct gp_job *job,
                       int64_t actual_us);
/* Keys held, for memory checks. */
size_t gp_predictor_nkeys(const struct gp_predictor *p);

#endif
