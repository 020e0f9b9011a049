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
 *
 * Co-location (space sharing, for policies that pack two jobs onto the
 * same GPUs: Gandiva's packing, Gavel's space sharing): a pair figure is
 * each job's throughput while both run at once on the same `g` GPUs of a
 * type, in the unit of its class's own figures (Gavel measured them per
 * pair of job types of the same scale). A job's pace there is its pair
 * throughput over its throughput alone on those GPUs: under 1 where the
 * two slow each other down. The table only records pair figures; it does
 * not scale them to unmeasured counts, and it does not apply them: the
 * caller asks for the pair it means to pack.
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
/* Record that `job_class` cannot run at all on `gpus` GPUs of `gpu_type`
 * (Gavel's table writes 0 there: ResNet-50 with batch size 128 on 2, 4 or
 * 8 K80s runs out of memory). A later figure for the same triple, of
 * either kind, replaces the earlier. GP_EINVAL, GP_ENOMEM as above. */
int gp_speed_table_set_none(struct gp_speed_table *t, const char *job_class,
                            const char *gpu_type, uint32_t gpus);
/* Can the class run on g GPUs of the type? False when the figure that
 * stands for g there (the figure at g, else at the nearest measured scale
 * below g, else at the smallest: the scaling rule below) says it cannot;
 * true otherwise, also without any figure. */
bool gp_speed_table_can_run(const struct gp_speed_table *t,
                            const char *job_class, const char *gpu_type,
                            uint32_t gpus);
/* The measured (or scaled) throughput of a class on g GPUs of a type;
 * 0 when the table has no figure for that class and type, or says it
 * cannot run there. */
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
/* Record the throughputs of two classes packed together on the same
 * `gpus` (>= 1) GPUs of `gpu_type`: tput_a of class_a and tput_b of
 * class_b while both run (each > 0, finite; a class may be paired with
 * itself, as two jobs of the same class). The pair is unordered: a later
 * figure for {class_a, class_b}, in either order, on the same type and
 * count replaces the earlier. GP_EINVAL for a bad figure, name or count,
 * GP_ENOMEM. */
int gp_speed_table_set_pair(struct gp_speed_table *t, const char *class_a,
                            const char *class_b, const char *gpu_type,
                            uint32_t gpus, double tput_a, double tput_b);
/* The pair figure of {class_a, class_b} on `gpus` GPUs of `gpu_type`, in
 * the caller's order: *tput_a is class_a's throughput while packed with
 * class_b, *tput_b class_b's (either out-pointer may be NULL). GP_ENOENT
 * when the table has no figure for exactly that pair, type and count
 * (nothing is scaled). */
int gp_speed_table_pair(const struct gp_speed_table *t, const char *class_a,
                        const char *class_b, const char *gpu_type,
                        uint32_t gpus, double *tput_a, double *tput_b);
/* How many pair figures the table holds (an unordered pair, type and
 * count each once). */
size_t gp_speed_table_npairs(const struct gp_speed_table *t);
const char *gp_speed_table_reference(const struct gp_speed_table *t);
size_t gp_speed_table_nclasses(const struct gp_speed_table *t);

#endif
