/*
 * event_pfm: --pfm-events, events named the libpfm4 way
 * ("INST_RETIRED:ANY_P:u", "perf::PERF_COUNT_SW_TASK_CLOCK"), turned into a
 * perf_event_attr by libpfm4 (pfm_get_os_event_encoding with
 * PFM_OS_PERF_EVENT_EXT), as perf's own --pfm-events does.
 *
 * libpfm4 knows a machine's PMU from the CPU's identity; where it finds
 * none (a virtual machine without a PMU) only its generic perf:: events
 * resolve, and the error for any other name says so and lists the PMUs
 * libpfm4 did find.
 */
#ifndef PERFGATE_EVENT_PFM_H
#define PERFGATE_EVENT_PFM_H

#include <linux/perf_event.h>
#include <stddef.h>

/*
 * Resolve one libpfm4 event string: 0 with *attr filled (type, config,
 * config1, exclude_* from its :u/:k modifiers, user and kernel by
 * default), or -1 with a one-line reason in errbuf.  libpfm4 is
 * initialised on first use.
 */
int event_pfm_resolve(const char *str, struct perf_event_attr *attr, char *errbuf,
		      size_t cap);

#endif
