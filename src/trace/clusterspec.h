/* clusterspec.h - internal entry points of clusterspec.c, for tests and the
 * fuzzers. The public way in is gp_cluster_from_spec() in gpupool/trace.h.
 */
#ifndef GPUPOOL_TRACE_CLUSTERSPEC_H
#define GPUPOOL_TRACE_CLUSTERSPEC_H

#include <stddef.h>

#include "gpupool/cluster.h"

/* A cluster file's contents may be at most this long (decompressed). */
#define GP_CLUSTER_FILE_MAX (16u << 20)
/* No spec may build more nodes than this. */
#define GP_CLUSTER_SPEC_MAX_NODES 100000u

/* Build a cluster from the bytes of a cluster file: a JSON document (when
 * the first non-blank byte is '{'), an openb node-list CSV or a Tiresias
 * cluster-spec CSV (told apart by their header lines). `name` names the
 * place in errors ("cluster.json: switches[1].nodes[0].gpus"). Errors:
 * GP_EPARSE (syntax, schema, values; diag names the JSON path or
 * file:line), GP_ERANGE (more than GP_CLUSTER_SPEC_MAX_NODES nodes), the
 * cluster's own code for what it refuses (GP_EEXIST: a node name used
 * twice), GP_ENOMEM. */
int gp__cluster_from_mem(const void *buf, size_t len, const char *name,
                         struct gp_cluster **out, struct gp_diag *diag);

/* The JSON parser alone (see docs/cluster.md for the schema). */
int gp__cluster_from_json(const void *buf, size_t len, const char *name,
                          struct gp_cluster **out, struct gp_diag *diag);

#endif
