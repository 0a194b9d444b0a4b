/*
 * event_pfm.c: libpfm4 event strings to perf_event_attr (event_pfm.h).
 */
#include "agent/events/event_pfm.h"

#include <perfmon/pfmlib_perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int pfm_state = 1;	/* 1: not yet; else pfm_initialize()'s result */

/* The PMUs libpfm4 found on this machine, ", "-separated. */
static void present_pmus(char *buf, size_t cap)
{
	size_t len = 0;
	pfm_pmu_t p;

	buf[0] = '\0';
	pfm_for_all_pmus(p) {
		pfm_pmu_info_t info;

		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS || !info.is_present)
			continue;
		if (len < cap)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "",
						info.name);
	}
}

int event_pfm_resolve(const char *str, struct perf_event_attr *attr, char *errbuf,
		      size_t cap)
{
	pfm_perf_encode_arg_t arg;
	char pmus[256];
	int rc;

	if (pfm_state == 1)
		pfm_state = pfm_initialize();
	if (pfm_state != PFM_SUCCESS) {
		snprintf(errbuf, cap, "libpfm4 cannot start: %s", pfm_strerror(pfm_state));
		return -1;
	}
	memset(attr, 0, sizeof(*attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.size = sizeof(arg);
	/* Both privilege levels unless the string says otherwise, as perf asks. */
	rc = pfm_get_os_event_encoding(str, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (rc != PFM_SUCCESS) {
		present_pmus(pmus, sizeof(pmus));
		snprintf(errbuf, cap, "libpfm4 cannot resolve '%s': %s (PMUs libpfm4 found: %s)",
			 str, pfm_strerror(rc), pmus[0] ? pmus : "none");
		return -1;
	}
	attr->size = sizeof(*attr);
	return 0;
}
