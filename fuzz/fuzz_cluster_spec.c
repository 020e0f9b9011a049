/* fuzz_cluster_spec.c - any bytes as a --cluster string: a shape ("64x8",
 * "4x8:V100/2+2x4:K80") or a preset name. Strings that could name a file
 * (a '/', or not shaped like a spec) are left out, so the fuzzer never
 * reads the disk. A cluster that builds has nodes and GPUs, no more nodes
 * than the cap, and as many GPUs as its nodes hold. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/trace.h"
#include "trace/clusterspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_cluster *c = NULL;
    struct gp_diag d;
    uint64_t gpus = 0;
    char spec[256];

    if (size == 0 || size >= sizeof(spec) || memchr(data, 0, size) ||
        memchr(data, '/', size))
        return 0;
    memcpy(spec, data, size);
    spec[size] = '\0';
    if (!isdigit((unsigned char)spec[0]) || !strchr(spec, 'x')) {
        /* a preset name: letters, digits and '-' only */
        for (size_t i = 0; i < size; i++)
            if (!isalnum((unsigned char)spec[i]) && spec[i] != '-')
                return 0;
    }
    if (strchr(spec, ',') || strstr(spec, ".json") || strstr(spec, ".csv"))
        return 0; /* the file forms */
    if (gp_cluster_from_spec(spec, &c, &d) != GP_OK)
        return 0;
    if (gp_cluster_nnodes(c) == 0 ||
        gp_cluster_nnodes(c) > GP_CLUSTER_SPEC_MAX_NODES ||
        gp_cluster_gpus(c) == 0)
        abort();
    for (uint32_t i = 0; i < gp_cluster_nnodes(c); i++)
        gpus += gp_cluster_node_gpus(c, i);
    if (gpus != gp_cluster_gpus(c))
        abort();
    gp_cluster_free(c);
    return 0;
}
