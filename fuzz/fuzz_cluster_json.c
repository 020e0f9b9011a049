/* fuzz_cluster_json.c - any bytes as a cluster file: JSON (the main
 * target), or an openb / Tiresias node-list CSV when the bytes start with
 * their header. A cluster that builds must have GPUs. */
#include <stdint.h>
#include <stdlib.h>

#include "trace/clusterspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d;

    if (gp__cluster_from_mem(data, size, "fuzz.json", &c, &d) != GP_OK)
        return 0;
    if (gp_cluster_gpus(c) == 0 || gp_cluster_nnodes(c) == 0)
        abort();
    gp_cluster_free(c);
    return 0;
}
