/* policy.h - helpers shared by the built-in policies (internal). */
#ifndef GPUPOOL_POLICY_INTERNAL_H
#define GPUPOOL_POLICY_INTERNAL_H

#include "gpupool/core.h"

/* Start `job` now if it fits; GP_ENOFIT if not, other errors as they come. */
/* Start a waiting job on `gpus`, else on the largest size down to `lo`
 * that fits (GPUs, and the CPUs and memory the plan checks); nothing when
 * none does. For policies that size elastic jobs (optimus, oasis). */
int gp__start_sized(const struct gp_view *v, struct gp_plan *p,
                    const struct gp_job *job, uint32_t gpus, uint32_t lo);
/* Grow a running elastic job towards `gpus`, as far as the GPUs free next
 * to it allow (and the CPUs and memory there). */
int gp__grow_towards(const struct gp_view *v, struct gp_plan *p,
                     const struct gp_job *job, uint32_t gpus);
/* Start every waiting job on a share of a device or on no GPU that fits,
 * in rank order: for policies that size whole-GPU jobs only. */
int gp__start_gpuless(const struct gp_view *v, struct gp_plan *p);
int gp__start_if_fits(const struct gp_view *v, struct gp_plan *p,
                      const struct gp_job *job);
/* A rank by arrival: submission time (the core breaks ties by seq). */
void gp__rank_arrival(void *priv, const struct gp_job *job, int64_t now_us,
                      int64_t rank[2]);

/* May `victim` be preempted to make room for `job`? */
typedef bool (*gp__victim_fn)(void *ctx, const struct gp_view *v,
                              const struct gp_job *victim,
                              const struct gp_job *job);

/* Make room for `job` by preempting running jobs, worst rank first, as long
 * as `eligible` allows (the walk stops at the first job it refuses, since
 * the running set is walked in rank order); victims whose GPUs turn out not
 * to be needed keep running. GP_OK: the job is started in the plan.
 * GP_ENOFIT: not possible; the plan is as it was. *blocked_until is
 * lowered to when the first victim `eligible` allows but its protection
 * (minimum run time) keeps now may go: the caller asks for a round then,
 * since no event announces it. */
int gp__start_by_preempting(const struct gp_view *v, struct gp_plan *p,
                            const struct gp_job *job, gp__victim_fn eligible,
                            void *ctx, int64_t *blocked_until);

/* One job of a greedy walk: started where it fits, else, when `eligible`
 * is given, by preempting (gp__start_by_preempting, with ctx). GP_OK,
 * GP_ENOFIT or an error. *wake is lowered to when a protection that kept
 * the job out ends; *waits says the job was given victims still in their
 * grace: nothing behind it may start this round, or the victims would
 * take their GPUs straight back. */
int gp__greedy_step(const struct gp_view *v, struct gp_plan *p,
                    const struct gp_job *job, gp__victim_fn eligible, void *ctx,
                    int64_t *wake, bool *waits);

/* Walk pending jobs in rank order and start every one that fits; one that
 * does not fit may take running jobs' GPUs when `eligible` is given (see
 * gp__start_by_preempting), else its whole shape is skipped. Without
 * `eligible` the walk ends when no GPU is free. A job that only victims'
 * protections keep out asks for a round when the first of them ends. The
 * round of fifo-backfill, sjf, srtf, las and qssf. */
int gp__greedy(const struct gp_view *v, struct gp_plan *p,
               gp__victim_fn eligible);

/* When a running job that has attained `attained` GPU-microseconds by
 * now_us reaches `target` (> attained), at the GPUs it holds, once the
 * restart overhead at the head of its run is paid; GP_TIME_NONE if it
 * holds none. For LAS demotions. */
int64_t gp__attains_at(const struct gp_job *job, int64_t now_us,
                       int64_t attained, int64_t target);

/* An option's seconds, from `lo` to one year, as microseconds in *us;
 * false for anything else. */
bool gp__opt_seconds(const char *val, double lo, int64_t *us);

/* Parse a comma-separated list of non-negative numbers (seconds or
 * GPU-seconds) into out[0..*n), strictly increasing. */
int gp__parse_levels(const char *key, const char *s, double *out, size_t max,
                     size_t *n, struct gp_diag *diag);

/* tiresias's mode=artifact (tiresias_artifact.c): the published
 * simulator's dlas-gpu, with its queue limits (GPU-seconds) and starvation
 * knob (0 = off). */
#define GP_TIRESIAS_MAX_QUEUES 32
struct gp_tiresias_art;
int gp__tiresias_art_new(struct gp_tiresias_art **out, const struct gp_env *env,
                         const double *limits, size_t nlimits, double knob);
void gp__tiresias_art_free(struct gp_tiresias_art *a);
int gp__tiresias_art_schedule(struct gp_tiresias_art *a,
                              const struct gp_view *v, struct gp_plan *p);
void gp__tiresias_art_job_end(struct gp_tiresias_art *a,
                              const struct gp_job *job);

/* The Gittins index of attained GPU-time from an empirical distribution
 * of jobs' total GPU-time (gittins.c), for tiresias-gittins. */
struct gp_gittins;
int gp__gittins_new(struct gp_gittins **out, const struct gp_env *env,
                    double quantum);
void gp__gittins_free(struct gp_gittins *g);
/* Samples of GPU-seconds from a file: one column named duration or
 * gpu_time (or the only one, or no header); errors name key and
 * file:line. */
int gp__gittins_load(struct gp_gittins *g, const char *path, const char *key,
                     struct gp_diag *diag);
/* One more sample (a finished job's GPU-seconds); GP_EINVAL if < 0. */
int gp__gittins_add(struct gp_gittins *g, double sample);
size_t gp__gittins_nsamples(const struct gp_gittins *g);
/* The index at `attained` GPU-seconds: higher = likelier to end within
 * the quantum; 0 past every sample or without samples. */
double gp__gittins_index(struct gp_gittins *g, double attained);

/* A job's work left, in reference work-seconds (at least one): its
 * prediction at submission less the work done, or with `true_left` the
 * world's true work where it is known (the simulator's; Gavel's
 * simulator reads its jobs' true remaining steps). Past its prediction a
 * job is taken to need half as much again as it did (as the core's
 * estimates). For gavel and optimus, whose estimate must not grow while a
 * job runs. */
double gp__work_left_s(const struct gp_job *job, int64_t now_us,
                       bool true_left);

/* optimus's model (optimus.c): tau(w) = th0 / w + th1 + th2 w, every
 * th >= 0, fitted to n points (w[i], tau[i]) by non-negative least
 * squares. */
void gp__optimus_fit(const double *w, const double *tau, size_t n,
                     double th[3]);

/* oasis's model (oasis.c): the price of a kind with `used` of `cap`
 * reserved, pmin x (pmax / pmin) ^ (used / cap); and the sigmoid utility
 * weight / (1 + exp(k (d / scale - m))) of finishing d seconds after
 * submission. */
double gp__oasis_price(double pmin, double pmax, double used, double cap);
double gp__oasis_utility(double weight, double d_s, double scale_s, double m,
                         double k);

#endif
