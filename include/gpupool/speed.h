/* speed.h - the speed model: how fast a job progresses where it runs.
 *
 * A job's work (gp_job_spec.duration_us) is measured on its reference
 * placement: the GPUs it asks for, of the table's reference type. Placed on
 * `g` GPUs of type `t`, it progresses at
 *
 *     rate = throughput(class, t, g) / throughput(class, reference, asked)
 *
 * reference work-seconds per second, from a table of measured throughputs
 * (Gavel's per job type x GPU type x scale; any unit, as long as a class
 * uses one). Where the table has no figure for a scale, the nearest
 * measured scale below it (else the smallest) is scaled linearly, as
 * Gavel's simulator does: an optimistic assumption, stated with results.
 * A job without a class, or a class or type the table lacks, progresses at
 * its GPU type's relative speed (gp_cluster_add_type) on the GPUs it asked
 * for: the model every earlier result used. On g GPUs where it asked for
 * `asked` (an elastic job started or resized off its size, g within
 * min_gpus..max_gpus) that speed is scaled by g / asked - linear scaling,
 * the same optimistic assumption as for the table's unmeasured scales -
 * so shrinking an elastic job costs it work, and growing it gains some.
 *
 * Locality: a gang placed over more than one node runs at the table's
 * spread figure when it has one (Gavel measured them, per job type, scale
 * and GPU type), else at the consolidated rate times the core's
 * spread_speed (gp_core_config; 1 = no slowdown, the default).
 */
#ifndef GPUPOOL_SPEED_H
#define GPUPOOL_SPEED_H

#include "gpupool/base.h"

struct gp_speed_table;

/* An empty table whose throughputs are relative to `reference_type`. */
int gp_speed_table_new(struct gp_speed_table **out, const char *reference_type);
void gp_speed_table_free(struct gp_speed_table *t);
/* Record a measured throughput (> 0, finite) of `job_class` on `gpus`
 * (>= 1) GPUs of `gpu_type`; a later figure for the same triple replaces
 * the earlier. GP_EINVAL for a bad figure, GP_ENOMEM. */
int gp_speed_table_set(struct gp_speed_table *t, const char *job_class,
                       const char *gpu_type, uint32_t gpus, double throughput);
/* A throughput measured with the gang spread over several nodes (gpus >=
 * 2), for the rate of a placement that spans nodes (Gavel's
 * *_unconsolidated tables). GP_EINVAL as above, and for gpus < 2. */
int gp_speed_table_set_spread(struct gp_speed_table *t, const char *job_class,
                              const char *gpu_type, uint32_t gpus,
                              double throughput);
/* The measured (or scaled) throughput of a class on g GPUs of a type;
 * 0 when the table has no figure for that class and type. */
double gp_speed_table_throughput(const struct gp_speed_table *t,
                                 const char *job_class, const char *gpu_type,
                                 uint32_t gpus);
/* The rate above, of a job of `job_class` asking for `asked` GPUs, placed
 * on `gpus` of `gpu_type`; 0 when the table cannot say (the caller then
 * uses the type's relative speed). */
double gp_speed_table_rate(const struct gp_speed_table *t,
                           const char *job_class, const char *gpu_type,
                           uint32_t gpus, uint32_t asked);
/* The same for a placement spread over several nodes (`spread`): the
 * spread figure where the class has one for the type (scaled as above;
 * *measured set), else the consolidated one (*measured false: the table
 * knows no slowdown). measured may be NULL. */
double gp_speed_table_rate_spread(const struct gp_speed_table *t,
                                  const char *job_class, const char *gpu_type,
                                  uint32_t gpus, uint32_t asked, bool spread,
                                  bool *measured);
const char *gp_speed_table_reference(const struct gp_speed_table *t);
size_t gp_speed_table_nclasses(const struct gp_speed_table *t);

#endif
