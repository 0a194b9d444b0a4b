/*
 * perfgate: a perf measurement agent driven over control channels.
 *
 * The flow a reader follows: options -> a session per run, serving control
 * lines with commands.c (session_new) -> events resolved and output opened
 * (session_init) -> counters opened, views attached, control channels and
 * the workload started (session_start) -> the event loop (session_run) ->
 * the final report and the workload's exit status (session_finish).
 *
 * `perfgate NAME ARGS...` first looks for a helper program perfgate-NAME,
 * as git runs git-NAME: `perfgate diff` and `perfgate plot` are such
 * helpers (tools/).  A NAME with no helper is the workload, as for perf;
 * `perfgate -- NAME` always is.
 */
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/base/log.h"
#include "agent/base/options.h"
#include "agent/commands.h"
#include "agent/report/repeat.h"
#include "agent/session.h"

#ifndef PKGLIBEXECDIR
#define PKGLIBEXECDIR "/usr/local/libexec/perfgate"
#endif
#ifndef ABS_TOP_SRCDIR
#define ABS_TOP_SRCDIR "."
#endif

/*
 * subcommand_exec: if argv[1] names a helper perfgate-NAME, exec it with
 * the remaining arguments.  It is looked up in each directory of
 * $PERFGATE_EXEC_PATH (colon-separated), then in the installed
 * pkglibexecdir, then in the source tree's tools/ (so the build tree works
 * before `make install`).  Returns only when there is no helper to run:
 * -1 to go on as the agent, or an exit status after printing why.
 */
static int subcommand_exec(int argc, char **argv)
{
	const char *name, *env, *dirs[3];
	char path[PATH_MAX];
	size_t i;
	int n;

	if (argc < 2 || !argv[1][0] || strspn(argv[1], "abcdefghijklmnopqrstuvwxyz0123456789-") !=
	    strlen(argv[1]) || argv[1][0] == '-')
		return -1;
	name = argv[1];
	env = getenv("PERFGATE_EXEC_PATH");
	for (const char *p = env; p && *p;) {
		size_t len = strcspn(p, ":");

		n = snprintf(path, sizeof(path), "%.*s/perfgate-%s", (int)len, p, name);
		if (len && n > 0 && (size_t)n < sizeof(path) && access(path, X_OK) == 0)
			goto run;
		p += len + (p[len] == ':');
	}
	dirs[0] = PKGLIBEXECDIR;
	dirs[1] = ABS_TOP_SRCDIR "/tools";
	for (i = 0; i < 2; i++) {
		n = snprintf(path, sizeof(path), "%s/perfgate-%s", dirs[i], name);
		if (n > 0 && (size_t)n < sizeof(path) && access(path, X_OK) == 0)
			goto run;
	}
	if (strcmp(name, "diff") && strcmp(name, "plot"))
		return -1;
	fprintf(stderr, "perfgate: '%s' needs the helper perfgate-%s, found neither in "
		"$PERFGATE_EXEC_PATH (%s) nor in %s nor in %s; install perfgate "
		"(make install) or set PERFGATE_EXEC_PATH\n",
		name, name, env ? env : "unset", PKGLIBEXECDIR, ABS_TOP_SRCDIR "/tools");
	return 127;
run:
	argv[1] = path;
	execv(path, argv + 1);
	fprintf(stderr, "perfgate: cannot run %s: %s\n", path, strerror(errno));
	return 126;
}

int main(int argc, char **argv)
{
	struct options opts;
	struct session *session;
	struct repeat repeat;
	int rc, code;

	code = subcommand_exec(argc, argv);
	if (code >= 0)
		return code;
	/* As perf: numbers in the report follow the user's locale. */
	setlocale(LC_ALL, "");
	rc = options_parse(&opts, argc, argv);
	if (rc) {
		options_free(&opts);
		return rc > 0 ? EXIT_SUCCESS : 129;
	}
	/* -r N: a session per run; the last one reports them all, and the
	 * exit status is the last run's, as perf stat's. */
	if (repeat_init(&repeat, (unsigned)opts.repeat)) {
		log_error("out of memory");
		options_free(&opts);
		return 255;
	}
	do {
		session = session_new(&opts, opts.repeat > 1 ? &repeat : NULL, commands_on_line);
		if (!session || session_init(session) || session_start(session)) {
			if (session)
				session_abort(session);
			session_free(session);
			repeat_free(&repeat);
			options_free(&opts);
			return 255;
		}
		session_run(session);
		code = session_finish(session);
		session_free(session);
	} while (opts.repeat > 1 && !repeat_done(&repeat));
	repeat_free(&repeat);
	options_free(&opts);
	return code;
}
