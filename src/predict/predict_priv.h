/* predict_priv.h - what tests read of a predictor beyond the public API. */
#ifndef GPUPOOL_PREDICT_PRIV_H
#define GPUPOOL_PREDICT_PRIV_H

#include "gpupool/predict.h"

/* Heap bytes the predictor holds: its table and rings, with an estimate of
 * the allocator's per-block overhead (glibc's chunk rounding). */
size_t gp__predictor_mem_bytes(const struct gp_predictor *p);

#endif
