/*
 * range_sample: the sample backend of ranges -- perf groups (range_groups)
 * that sample every trigger hit and context switch into ring buffers,
 * whose records range_account walks into the views' counts.
 */
#ifndef PERFGATE_RANGE_SAMPLE_H
#define PERFGATE_RANGE_SAMPLE_H

#include "agent/ranges/range_backend.h"

extern const struct range_backend_ops range_sample_backend;

#endif
