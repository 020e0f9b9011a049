/* monitor_priv.h - what the monitor's files share and nobody else needs. */
#ifndef GPUPOOL_MONITOR_PRIV_H
#define GPUPOOL_MONITOR_PRIV_H

#include "monitor/monitor.h"

/* fake.c: mark fake GPU i (< ngpus, checked by the caller) busy or idle. */
void gp__monitor_fake_set_busy(void *priv, unsigned i, bool busy);

/* A sample with every value unknown (-1, NaN) and no error. */
void gp__monitor_sample_unknown(struct gp_gpu_sample *s);

#endif
